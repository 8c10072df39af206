import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession

/// A transport under soak, and how to ask it whether it still has transfers going.
struct Backend: Sendable {
    var name: String
    var manager: ServerAPIManager
    /// The transfers the transport still runs (0 once every call has ended).
    var activeTransfers: @Sendable () async -> Int

    static func make(_ name: String) -> Backend? {
        switch name {
        case "curl":
            let transport = CurlTransport()
            return Backend(
                name: name, manager: ServerAPIManager(transport: transport),
                activeTransfers: { transport.activeTransferCount })
        case "urlsession":
            let transport = URLSessionTransport()
            return Backend(
                name: name, manager: ServerAPIManager(transport: transport),
                activeTransfers: {
                    let tasks = await transport.sessionTaskCount()
                    return transport.activeTransfers + tasks
                })
        default:
            return nil
        }
    }
}
