import Foundation
import ServerAPITestSupport
import ServerAPITesting

@_spi(Backend) @testable import ServerAPIKit

/// A mock whose every call reports that it reached the transport, then waits one second on
/// `clock` (honouring cancellation) before answering with `answer(request)`: the test decides
/// when calls finish by advancing the clock.
func gatedMock(
    _ clock: TestClock, entered: EventCounter? = nil, cancelled: EventCounter? = nil,
    answer: @escaping @Sendable (TransportRequest) -> MockStub = { _ in .json(#"{"ok":true}"#) }
) -> MockTransport {
    let mock = MockTransport()
    mock.stub(handler: { request in
        entered?.fire()
        do {
            try await clock.sleep(for: .seconds(1))
        } catch {
            cancelled?.fire()
            throw error
        }
        return answer(request)
    })
    return mock
}

/// Collects the outcomes of many calls, and lets a test wait for a number of them.
final class Outcomes: Sendable {
    private let results = Locked<[Int: [Result<ServerResult, ServerAPIError>]]>([:])
    let done = EventCounter()

    func record(_ index: Int, _ result: Result<ServerResult, ServerAPIError>) {
        results.withLock { $0[index, default: []].append(result) }
        done.fire()
    }

    /// Runs a call and records its outcome under `index`.
    func run(_ index: Int, _ call: @Sendable () async throws -> ServerResult) async {
        do {
            record(index, .success(try await call()))
        } catch {
            record(index, .failure(.wrap(error)))
        }
    }

    var all: [Int: [Result<ServerResult, ServerAPIError>]] { results.withLock { $0 } }

    /// The one outcome of `index`, or `nil` when it has none or several.
    func outcome(_ index: Int) -> Result<ServerResult, ServerAPIError>? {
        guard let list = all[index], list.count == 1 else { return nil }
        return list[0]
    }
}

extension Result where Success == ServerResult, Failure == ServerAPIError {
    var value: ServerResult? { if case .success(let value) = self { value } else { nil } }
    var error: ServerAPIError? { if case .failure(let error) = self { error } else { nil } }
}
