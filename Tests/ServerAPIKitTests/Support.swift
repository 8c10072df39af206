import Foundation
import ServerAPIKit

/// A thread-safe log of strings.
final class Log: Sendable {
    private let entries = Locked<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

extension ServerAPI {
    static func test(_ path: String = "/x") -> ServerAPI { ServerAPI(host: "https://api.test", path: path) }
}

func errorOf(_ body: () async throws -> some Any) async -> ServerAPIError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? ServerAPIError
    }
}
