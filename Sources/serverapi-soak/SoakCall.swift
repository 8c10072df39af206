import Foundation
import ServerAPIKit

/// What one soak call does, and which endings are right for it (besides `cancelled`, always allowed).
enum CallKind: String, CaseIterable, Sendable {
    /// A small 200 from the fixture.
    case fast
    /// 2 KB dripped in 100-byte pieces, 10 ms apart.
    case slow
    /// A 503, retried twice with a short delay (cancellations land between retries).
    case statusRetry = "status-retry"
    /// A port nothing listens on.
    case refused
    /// The fixture closes the connection halfway through the body.
    case dropMidBody = "drop-mid-body"
    /// A Content-Length larger than the body sent.
    case wrongLength = "wrong-length"
    /// The head and a few bytes, then nothing: the call's stall timeout ends it.
    case stall
    /// No answer at all: the call's timeout ends it.
    case hang
    /// A 256 KB resource downloaded to a file.
    case download
    /// A download whose connection drops halfway.
    case downloadDrop = "download-drop"
    /// A 64 KB upload from memory.
    case uploadData = "upload-data"
    /// A 256 KB upload from a file.
    case uploadFile = "upload-file"
    /// A 1 MB streamed body, read as it arrives.
    case streamRead = "stream-read"
    /// A 4 MB streamed body read slowly, so the transfer waits on a full buffer (backpressure).
    case streamSlowReader = "stream-slow-reader"
    /// A drip through the completion-handler API, whose handle may cancel it.
    case completionHandler = "completion-handler"

    /// How this call may end, besides `cancelled`: "ok" (a right result) or `ServerAPIError` kinds.
    var allowedEndings: Set<String> {
        switch self {
        case .fast, .slow, .download, .uploadData, .uploadFile, .streamRead, .streamSlowReader, .completionHandler:
            ["ok"]
        case .statusRetry: [ServerAPIError.Kind.httpStatus.rawValue]
        case .refused: [ServerAPIError.Kind.cannotConnect.rawValue]
        case .dropMidBody, .wrongLength, .downloadDrop: [ServerAPIError.Kind.network.rawValue]
        case .stall: [ServerAPIError.Kind.timedOut.rawValue, ServerAPIError.Kind.network.rawValue]
        case .hang: [ServerAPIError.Kind.timedOut.rawValue]
        }
    }

    /// How often each kind is picked, out of the sum of all weights.
    var weight: Int {
        switch self {
        case .fast: 30
        case .slow, .statusRetry, .refused, .uploadData: 6
        case .download, .completionHandler: 5
        case .dropMidBody, .wrongLength, .downloadDrop, .uploadFile, .streamRead: 4
        case .stall, .hang, .streamSlowReader: 2
        }
    }
}

/// The places a soak call talks to, and the files it uploads and downloads.
struct SoakEndpoints: Sendable {
    var fixture: URL
    var refused: URL
    var scratch: URL
    var uploadFile: URL
    static let uploadFileSize = 256 * 1024
    static let downloadSize = 256 * 1024
    static let streamSize = 1 << 20
    static let slowStreamSize = 4 << 20

    func url(_ pathAndQuery: String) -> URL { URL(string: fixture.absoluteString + pathAndQuery)! }
}

/// Why a soak call failed the run.
struct SoakViolation: Error, CustomStringConvertible {
    var description: String
}

extension CallKind {
    /// Runs one call of this kind and returns how it ended: "ok", or the `ServerAPIError` kind.
    /// - Throws: `SoakViolation` for an error that is not a `ServerAPIError`, or a wrong success.
    func run(
        id: RequestID, tag: String, manager: ServerAPIManager, endpoints: SoakEndpoints,
        handles: HandleTable
    ) async throws -> String {
        do {
            try await perform(id: id, tag: tag, manager: manager, endpoints: endpoints, handles: handles)
            return "ok"
        } catch let error as ServerAPIError {
            return error.kind.rawValue
        } catch let violation as SoakViolation {
            throw violation
        } catch {
            throw SoakViolation(description: "\(rawValue) call \(id) threw \(type(of: error)): \(error)")
        }
    }

    private func perform(
        id: RequestID, tag: String, manager: ServerAPIManager, endpoints: SoakEndpoints, handles: HandleTable
    ) async throws {
        let quick = RetryPolicy(baseDelay: .milliseconds(20), jitter: 0)
        func api(_ pathAndQuery: String) -> ServerAPI {
            ServerAPI(url: endpoints.url(pathAndQuery)).id(id).tag(tag).timeout(.seconds(30)).format(.data)
        }
        switch self {
        case .fast:
            let result = try await manager.send(api("/health"))
            try expect(result.status == 200, "status \(result.status)", id)
        case .slow:
            let result = try await manager.send(api("/drip?size=2000&interval_ms=10&chunk=100"))
            try expect(result.data?.count == 2000, "\(result.data?.count ?? -1) bytes of 2000", id)
        case .statusRetry:
            _ = try await manager.send(api("/status/503").retry(2, policy: quick))
            throw SoakViolation(description: "status-retry call \(id) succeeded on a 503")
        case .refused:
            let call = ServerAPI(url: endpoints.refused).id(id).tag(tag).timeout(.seconds(30)).retry(1, policy: quick)
            _ = try await manager.send(call)
            throw SoakViolation(description: "refused call \(id) succeeded")
        case .dropMidBody:
            _ = try await manager.send(api("/close-mid-body?size=20000&after=10000"))
            throw SoakViolation(description: "drop-mid-body call \(id) succeeded")
        case .wrongLength:
            _ = try await manager.send(api("/wrong-length?size=1000&extra=100"))
            throw SoakViolation(description: "wrong-length call \(id) succeeded")
        case .stall:
            _ = try await manager.send(
                api("/hang-body?size=100000&after=1000").stallTimeout(below: 1, for: .milliseconds(300)))
            throw SoakViolation(description: "stall call \(id) succeeded")
        case .hang:
            _ = try await manager.send(api("/hang").timeout(.milliseconds(300)))
            throw SoakViolation(description: "hang call \(id) succeeded")
        case .download:
            let destination = endpoints.scratch.appendingPathComponent("download-\(id.rawValue)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let size = SoakEndpoints.downloadSize
            let result = try await manager.send(
                api("/resource?size=\(size)&seed=\(id.rawValue % 7)").download(to: destination))
            let written = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? -1
            try expect(result.fileURL != nil && written == size, "a file of \(written) bytes of \(size)", id)
        case .downloadDrop:
            let destination = endpoints.scratch.appendingPathComponent("download-\(id.rawValue)")
            _ = try await manager.send(
                api("/resource?size=\(SoakEndpoints.downloadSize)&drop_after=100000").download(to: destination))
            throw SoakViolation(description: "download-drop call \(id) succeeded")
        case .uploadData:
            let body = Data(repeating: UInt8(id.rawValue % 251), count: 64 * 1024)
            let result = try await manager.send(api("/upload-sink").method(.post).body(.data(body)).format(.json))
            let length = result.json?["length"]?.intValue.map(Int.init)
            try expect(length == body.count, "the server read \(length ?? -1) bytes of \(body.count)", id)
        case .uploadFile:
            let result = try await manager.send(
                api("/upload-sink").method(.post).body(.file(endpoints.uploadFile)).format(.json))
            let length = result.json?["length"]?.intValue.map(Int.init)
            try expect(
                length == SoakEndpoints.uploadFileSize, "the server read \(length ?? -1) bytes of a file", id)
        case .streamRead:
            let response = try await manager.stream(api("/stream-bytes?size=\(SoakEndpoints.streamSize)"))
            var count = 0
            for try await chunk in response.body { count += chunk.count }
            try expect(count == SoakEndpoints.streamSize, "\(count) streamed bytes", id)
        case .streamSlowReader:
            let response = try await manager.stream(
                api("/stream-bytes?size=\(SoakEndpoints.slowStreamSize)&chunk=262144"))
            var count = 0
            var chunks = 0
            for try await chunk in response.body {
                count += chunk.count
                chunks += 1
                // A pause every few chunks lets the transport's buffer fill: it stops reading the socket.
                if chunks % 8 == 1 { try? await Task.sleep(for: .milliseconds(20)) }
            }
            try expect(count == SoakEndpoints.slowStreamSize, "\(count) streamed bytes", id)
        case .completionHandler:
            let ended = CompletionCounter()
            let result: Result<ServerResult, ServerAPIError> = await withCheckedContinuation { continuation in
                let handle = manager.send(api("/drip?size=1000&interval_ms=10&chunk=100")) { result in
                    if ended.increment() == 1 { continuation.resume(returning: result) }
                }
                handles.insert(id, handle)
            }
            handles.remove(id)
            handles.record(id, counter: ended)
            let response = try result.get()
            try expect(response.data?.count == 1000, "\(response.data?.count ?? -1) bytes of 1000", id)
        }
    }

    private func expect(_ condition: Bool, _ what: String, _ id: RequestID) throws {
        if !condition { throw SoakViolation(description: "\(rawValue) call \(id) succeeded wrongly: \(what)") }
    }
}
