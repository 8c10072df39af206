import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting

/// The real transports plus `MockTransport`, for the checks that need no real server semantics:
/// the mock answers the few routes these checks use as the servers do.
enum ContractTransport: Sendable, CustomStringConvertible, CaseIterable {
    case real(TransportKind)
    case mock

    static var allCases: [ContractTransport] { TransportKind.allCases.map { .real($0) } + [.mock] }

    var description: String {
        switch self {
        case .real(let kind): kind.rawValue
        case .mock: "mock"
        }
    }

    /// A new transport; `arrived` fires when a request reached the "server" (the mock's handler;
    /// for real transports, the test watches upload progress instead).
    func make(arrived: EventCounter = EventCounter()) -> any RequestPerforming {
        switch self {
        case .real(let kind):
            return kind.make()
        case .mock:
            let mock = MockTransport()
            mock.stub { request in
                arrived.fire()
                let path = request.url.path
                if path.hasPrefix("/delay/"), let seconds = Int(path.dropFirst("/delay/".count)) {
                    return .json(#"{"delayed":true}"#, delay: .seconds(seconds))
                }
                if path.hasPrefix("/status/"), let status = Int(path.dropFirst("/status/".count)) {
                    return .text("status \(status)\n", status: status)
                }
                if path.hasPrefix("/resource/error/"), let status = Int(path.dropFirst("/resource/error/".count)) {
                    return .text(
                        "error \(status): this body must never be written into a download file\n", status: status)
                }
                if path == "/resource" {
                    let size =
                        request.url.query?.split(separator: "&").first { $0.hasPrefix("size=") }
                        .flatMap { Int($0.dropFirst(5)) } ?? 1024
                    return .data(FixturePayload().bytes(0..<size), headers: ["Content-Length": "\(size)"])
                }
                return nil
            }
            return mock
        }
    }

    /// The base URL requests go to.
    func base(server: Server = .httpbin) throws -> String {
        switch self {
        case .real(let kind):
            try server == .httpbin ? kind.httpbin() : kind.fixture()
        case .mock:
            "http://mock.test"
        }
    }

    enum Server {
        case httpbin, fixture
    }
}
