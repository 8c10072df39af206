import Foundation
@_spi(Backend) @_spi(Transport) import ServerAPIKit

/// A transport that answers from a HAR 1.2 file: what a `RecordingTransport` (or a browser, or `sapi --har`)
/// recorded, replayed without the network.
///
/// ```swift
/// let replay = try ReplayingTransport(file: URL(fileURLWithPath: "Recordings/users.har"))
/// let manager = ServerAPIManager(transport: replay)
/// let user = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/users/1"))
/// ```
/// A request matches an entry by method, URL (scheme, host, port and path exactly; the query's parameters in
/// any order) and, with `Configuration.matchesBody`, body (JSON compared as values). Identical requests get
/// their entries in recorded order; once those are used the last one repeats (`repeatsLastAnswer`). A request
/// with no entry fails with `ServerAPIError.Kind.notRecorded`, whose message names the closest entry and what
/// differed.
///
/// Responses are replayed with their status, headers and body; a download is written to its file as a
/// transport writes one (through the writer the real transports use: resume, error bodies and 416 behave the same); a
/// streamed response arrives in its recorded chunks, at once or with their recorded timing on a clock
/// (`StreamTiming.recorded(clock:)`, with a `TestClock` to drive it); a recorded failure is thrown as the same
/// typed `ServerAPIError` (kind, message, TLS failure), before the head or mid-body as it happened.
///
/// A WebSocket's handshake (`webSocket(_:)`) is matched as any request is, and its connection replays the
/// recorded messages (see `webSocket(_:)`).
///
/// The mode (`HARMode`) says whether the network is used: `.replay` never does (the default), `.recordMissing`
/// sends what the file lacks through `upstream` and adds it, `.recordAll` sends everything and writes a new file.
public final class ReplayingTransport: RequestPerforming {
    /// How a streamed response's chunks are timed on replay.
    public enum StreamTiming: Sendable {
        /// Every chunk at once, in its recorded boundaries.
        case immediate
        /// Each chunk after its recorded delay, slept on `clock` (a `TestClock` lets a test drive it).
        case recorded(clock: any Clock<Duration>)
    }

    /// How requests are matched and recorded.
    public struct Configuration: Sendable {
        /// Whether the file is replayed only (the default), completed, or re-recorded.
        public var mode: HARMode
        /// Whether the body must match too (JSON bodies compared as values); `false` by default, as VCR's.
        public var matchesBody: Bool
        /// Query parameters left out of matching (a timestamp, a nonce).
        public var ignoredQueryParameters: Set<String>
        /// Whether the last entry of a request repeats once its entries are used (`true`), or the request
        /// then counts as not recorded.
        public var repeatsLastAnswer: Bool
        /// What is redacted in what is recorded, and applied to asked requests before they are matched.
        public var redaction: HARRedaction
        /// How streamed chunks are timed.
        public var streamTiming: StreamTiming
        /// The largest HAR file read, in bytes: `HARArchive.defaultMaximumFileSize` (256 MiB) by default. A larger
        /// file is refused from its size, before it is read (`fileSystem`).
        public var maximumFileSize: Int64
        /// The wall clock for recorded entries' start times.
        public var now: @Sendable () -> Date
        /// What the errors say to do to record what the file lacks: the modes, unless what made the transport
        /// records otherwise (`ServerAPIManager.replaying` also reads `SAPI_HAR_MODE`; `sapi` records with `--har`).
        package var recordingAdvice = RecordingAdvice.modes

        /// Creates a configuration.
        public init(
            mode: HARMode = .replay, matchesBody: Bool = false, ignoredQueryParameters: Set<String> = [],
            repeatsLastAnswer: Bool = true, redaction: HARRedaction = .default, streamTiming: StreamTiming = .immediate,
            maximumFileSize: Int64 = HARArchive.defaultMaximumFileSize, now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.mode = mode
            self.matchesBody = matchesBody
            self.ignoredQueryParameters = ignoredQueryParameters
            self.repeatsLastAnswer = repeatsLastAnswer
            self.redaction = redaction
            self.streamTiming = streamTiming
            self.maximumFileSize = maximumFileSize
            self.now = now
        }
    }

    /// What a replay's errors say to do to record what its file lacks: the words after "record it with".
    package struct RecordingAdvice: Sendable, Hashable {
        /// For a request the file has no entry for, and a file that does not exist.
        package var missing: String
        /// For a WebSocket session whose client did not send what the recording has.
        package var again: String

        /// Advice in these words.
        /// - Parameters:
        ///   - missing: For a request the file has no entry for, and a file that does not exist.
        ///   - again: For a WebSocket session whose client did not send what the recording has.
        package init(missing: String, again: String) {
            self.missing = missing
            self.again = again
        }

        /// A `ReplayingTransport`'s own: its modes, which read no environment variable.
        package static let modes = RecordingAdvice(
            missing: "the mode .recordMissing and an upstream transport",
            again: "the mode .recordAll and an upstream transport")

        /// `ServerAPIManager.replaying`'s: the modes, and the environment variable it reads as well.
        package static let environment = RecordingAdvice(
            missing: "the mode .recordMissing (\(HARMode.environmentVariable)=record-missing in the environment) "
                + "and an upstream transport",
            again: "the mode .recordAll (\(HARMode.environmentVariable)=record-all in the environment) "
                + "and an upstream transport")
    }

    private struct Recorded: Sendable {
        var entry: HARArchive.Entry
        var key: HARRequestKey?
        var served = 0
    }

    private let state: Locked<[Recorded]>
    /// The settings.
    public let configuration: Configuration
    /// The transport that records, in the record modes; `nil` in `.replay`.
    public let recording: RecordingTransport?
    /// The file's name, for errors.
    let source: String

    /// "replay": the name in a replayed call's metrics.
    public let name = "replay"

    /// The recording's upstream's answer in the record modes; `true` when replaying only.
    public var observesCallCancellation: Bool { recording?.observesCallCancellation ?? true }

    /// `true`: a streamed request body is read to be matched.
    public var sendsStreamedRequestBodies: Bool { true }

    /// The recording's upstream's answer in the record modes; `true` when replaying only: a recorded agreement on
    /// permessage-deflate is replayed (its messages uncompressed) to a client that offers it.
    public var carriesWebSocketExtensions: Bool { recording?.carriesWebSocketExtensions ?? true }

    /// Answers from a HAR file.
    /// - Parameters:
    ///   - file: The HAR file. It must exist in `.replay`; in the record modes it is created (folders too).
    ///   - configuration: The mode, matching, redaction and timing.
    ///   - upstream: The transport the record modes send through; ignored in `.replay`.
    /// - Throws: `fileSystem` when `.replay` has no file to read or the file is larger than
    ///   `Configuration.maximumFileSize`, `decoding` when it is not HAR or a number or an encoding in it is not one a
    ///   replay can use (the message names the entry and the field), and `invalidRequest` when a record mode has no
    ///   upstream transport.
    public convenience init(
        file: URL, configuration: Configuration = Configuration(), upstream: (any RequestPerforming)? = nil
    ) throws(ServerAPIError) {
        let exists = FileManager.default.fileExists(atPath: file.path)
        var archive = HARArchive()
        switch configuration.mode {
        case .replay:
            guard exists else {
                throw ServerAPIError(
                    .fileSystem,
                    "there is no HAR file at \(file.path) to replay: record it with "
                        + configuration.recordingAdvice.missing)
            }
            archive = try HARArchive(contentsOf: file, maximumFileSize: configuration.maximumFileSize)
        case .recordMissing:
            if exists { archive = try HARArchive(contentsOf: file, maximumFileSize: configuration.maximumFileSize) }
        case .recordAll:
            break
        }
        try self.init(archive: archive, file: file, configuration: configuration, upstream: upstream)
    }

    /// Answers from an archive in memory; the record modes record into memory (see `recorded`).
    /// - Parameters:
    ///   - archive: The entries to answer from; checked as a file's are (`HARArchive.init(data:name:)`).
    ///   - configuration: The mode, matching, redaction and timing.
    ///   - upstream: The transport the record modes send through; ignored in `.replay`.
    /// - Throws: `decoding` when a number or an encoding of an entry is not one a replay can use (outside
    ///   `.recordAll`, which answers from none of them), and `invalidRequest` when a record mode has no upstream
    ///   transport.
    public convenience init(
        archive: HARArchive, configuration: Configuration = Configuration(), upstream: (any RequestPerforming)? = nil
    ) throws(ServerAPIError) {
        if configuration.mode != .recordAll { try archive.validate(name: "the HAR archive") }
        try self.init(archive: archive, file: nil, configuration: configuration, upstream: upstream)
    }

    private init(
        archive: HARArchive, file: URL?, configuration: Configuration, upstream: (any RequestPerforming)?
    ) throws(ServerAPIError) {
        self.configuration = configuration
        self.source = file?.lastPathComponent ?? "the HAR archive"
        let ignored = configuration.ignoredQueryParameters
        state = Locked(
            configuration.mode == .recordAll
                ? []
                : archive.entries.map { Recorded(entry: $0, key: HARRequestKey($0.request, ignoredQuery: ignored)) })
        if configuration.mode == .replay {
            recording = nil
        } else {
            guard let upstream else {
                throw ServerAPIError(
                    .invalidRequest,
                    "the mode \(configuration.mode.rawValue) needs an upstream transport to record with")
            }
            let kept = configuration.mode == .recordMissing ? archive.entries : []
            let recorder = HARRecorder(
                file: file, entries: kept, creator: archive.log.creator,
                ownerOnly: !configuration.redaction.redactsCredentials)
            recording = RecordingTransport(
                upstream: upstream, recorder: recorder, redaction: configuration.redaction, now: configuration.now)
        }
    }

    /// What the record modes have written so far (the kept entries and the new ones); `nil` in `.replay`.
    public var recorded: HARArchive? { recording?.archive }

    /// The entries no request has been answered with yet, in file order: a test can check it used them all.
    public var unusedEntries: [HARArchive.Entry] { state.withLock { $0.filter { $0.served == 0 }.map(\.entry) } }

    /// Answers from the recorded entry that matches, or (in the record modes) through the upstream transport.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let (request, body) = try await prepare(request)
        guard let (entry, _) = try match(request, body: body) else {
            return try await upstreamRecording(request).perform(request)
        }
        return try ReplayedResponse(entry: entry, request: request, transport: name).whole()
    }

    /// Streams the recorded entry that matches in its recorded chunks, or (in the record modes) streams it
    /// through the upstream transport.
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        let (request, body) = try await prepare(request)
        guard let (entry, _) = try match(request, body: body) else {
            return try await upstreamRecording(request).stream(request)
        }
        return try ReplayedResponse(entry: entry, request: request, transport: name).streamed(
            timing: configuration.streamTiming)
    }

    /// The recording transport, which `match` only sends to in the record modes (where there is one).
    func upstreamRecording(_ request: TransportRequest) throws(ServerAPIError) -> RecordingTransport {
        guard let recording else {
            throw ServerAPIError(
                .invalidRequest, "replay only has no upstream transport", requestID: request.id, url: request.url)
        }
        return recording
    }

    func prepare(_ request: TransportRequest) async throws -> (TransportRequest, Data) {
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        return try await RecordingTransport.collectBody(request)
    }

    /// The entry to answer with, and what to call it in errors ("entry 2 of 3 in chat.har"); `nil` when the
    /// upstream should be asked (record modes).
    /// - Throws: `notRecorded` in `.replay` when nothing matches.
    func match(
        _ request: TransportRequest, body: Data
    ) throws(ServerAPIError) -> (entry: HARArchive.Entry, name: String)? {
        if configuration.mode == .recordAll { return nil }
        let key = HARRequestKey(
            request, body: body, redaction: configuration.redaction,
            ignoredQuery: configuration.ignoredQueryParameters)
        let comparingBody = configuration.matchesBody
        let repeats = configuration.repeatsLastAnswer
        let source = self.source
        let outcome = state.withLock { entries -> Result<(HARArchive.Entry, String), ServerAPIError> in
            let candidates = entries.indices.filter { index in
                entries[index].key.map { key.differences(from: $0, comparingBody: comparingBody).isEmpty } ?? false
            }
            if let index = candidates.first(where: { entries[$0].served == 0 }) ?? (repeats ? candidates.last : nil) {
                entries[index].served += 1
                return .success((entries[index].entry, "entry \(index + 1) of \(entries.count) in \(source)"))
            }
            return .failure(unmatched(key, request: request, entries: entries, used: candidates.count))
        }
        switch outcome {
        case .success(let (entry, name)): return (entry, name)
        case .failure(let error):
            if configuration.mode == .recordMissing { return nil }
            throw error
        }
    }

    private func unmatched(
        _ key: HARRequestKey, request: TransportRequest, entries: [Recorded], used: Int
    ) -> ServerAPIError {
        let asked = "\(request.method.rawValue) \(configuration.redaction.redact(request.url).absoluteString)"
        var message = "no recorded entry in \(source) answers \(asked)"
        if used > 0 {
            message +=
                ": its \(used) recorded \(used == 1 ? "entry was" : "entries were") already used"
                + " (repeatsLastAnswer is off)"
        } else if entries.isEmpty {
            message += ": the archive has no entries"
        } else {
            let comparingBody = configuration.matchesBody
            var best: (index: Int, distance: Int)?
            for (index, recorded) in entries.enumerated() {
                guard let recordedKey = recorded.key else { continue }
                let distance = key.distance(to: recordedKey, comparingBody: comparingBody)
                if best == nil || distance < best!.distance { best = (index, distance) }
            }
            if let best, let recordedKey = entries[best.index].key {
                let entry = entries[best.index].entry
                let differences = key.differences(from: recordedKey, comparingBody: comparingBody)
                message +=
                    "; the closest is entry \(best.index + 1) of \(entries.count), "
                    + "\(entry.request.method) \(entry.request.url), which differs in "
                    + differences.joined(separator: ", ")
            }
        }
        message += ". Record it with \(configuration.recordingAdvice.missing)."
        return ServerAPIError(.notRecorded, message, requestID: request.id, url: request.url)
    }
}
