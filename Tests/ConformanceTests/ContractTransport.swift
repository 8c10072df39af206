import Foundation
import ServerAPIKit
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
    func make(arrived: Signal = Signal()) -> any RequestPerforming {
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
        case .real:
            try server == .httpbin ? TestServers.httpbin() : TestServers.fixture()
        case .mock:
            "http://mock.test"
        }
    }

    enum Server {
        case httpbin, fixture
    }
}

/// A one-shot event a test can wait for without sleeping.
final class Signal: Sendable {
    private let state = Locked<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Fires the event (once; later calls do nothing).
    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the event fired.
    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
