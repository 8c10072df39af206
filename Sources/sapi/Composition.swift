import Foundation
import ServerAPIKit
import ServerAPITesting

/// TEMPORARY
struct Composition {
    var manager: ServerAPIManager
    var formatter: any ResponseFormatting

    init(_ options: Options) throws {
        formatter = PlainFormatter()
        manager = ServerAPIManager(transport: MockTransport())
    }
}
