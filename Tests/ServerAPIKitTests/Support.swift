import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

extension ServerAPI {
    static func test(_ path: String = "/x") -> ServerAPI { ServerAPI(host: "https://api.test", path: path) }
}
