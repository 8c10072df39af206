import Foundation
import ServerAPIKit
import Testing

/// Bytes `i % 251`, as `/bytes/N` sends them.
func patternBytes(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 251) }) }

/// Deterministic pseudo-random bytes (every byte value, NULs included).
func noiseBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var data = Data(count: count)
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        data[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return data
}

/// Runs `body` and returns the `ServerAPIError` it threw; records an issue when it threw nothing or another error.
func expectError(
    _ body: () async throws -> some Any, sourceLocation: SourceLocation = #_sourceLocation
) async -> ServerAPIError? {
    do {
        _ = try await body()
        Issue.record("expected an error, got a result", sourceLocation: sourceLocation)
        return nil
    } catch let error as ServerAPIError {
        return error
    } catch {
        Issue.record("expected a ServerAPIError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A thread-safe list of progress reports.
final class ProgressLog: Sendable {
    private let reports = Locked<[TransferProgress]>([])
    func append(_ report: TransferProgress) { reports.withLock { $0.append(report) } }
    var all: [TransferProgress] { reports.withLock { $0 } }
    func of(_ direction: TransferProgress.Direction) -> [TransferProgress] { all.filter { $0.direction == direction } }
}
