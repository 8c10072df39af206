// Ownership and threading in the libcurl backend
//
// - A `CurlTransport` owns `Configuration.loopCount` `CurlLoop`s: each one libcurl multi handle driven by
//   one dedicated thread (`CurlLoopRunner.run`; libcurl's socket interface on an epoll set on Linux), which
//   serves its requests concurrently, with its connection cache reusing connections between them. A
//   request goes to the loop its origin (scheme, host, port) hashes to, so one origin's calls share
//   one cache, until that loop is busy; then to the least busy loop (`LoopAssignment`); the transfer stays
//   on that loop to the end (redirects to other origins included).
// - `perform` runs on the caller's task. It hands the loop a `CurlJob`, a Sendable value (the request,
//   the continuation, and the job's id) through a lock-protected (`Locked`) inbox, then wakes the loop
//   through its `CurlWakeup` (a pipe the loop waits on); no libcurl call is made off the loop thread.
//   Cancelling the call (the request's `withCancellationHandler`) sends the job's id through the same
//   inbox. A job cancelled before the loop took it is taken out of the inbox and resumed by the
//   canceller; one cancelled before it was even submitted is refused by `submit`, which reads
//   `request.isCancelled` under the inbox lock, so one of the two always sees the other.
// - Everything that is not Sendable lives on the loop thread and is created there: each
//   `CurlTransfer` (the per-call state: easy handle, header list, body reader, response buffer,
//   download file), the pool of idle `CurlEasyHandle`s, and the multi handle's use.
// - libcurl calls back into Swift through non-capturing `@convention(c)` closures. Their context
//   pointer (`CURLOPT_WRITEDATA`, `HEADERDATA`, `READDATA`, `SEEKDATA`, `XFERINFODATA`, `PRIVATE`) is
//   an unretained `Unmanaged<CurlTransfer>`. The runner's `transfers` table holds the strong
//   reference from `curl_multi_add_handle` until after `curl_multi_remove_handle` and
//   `curl_easy_reset`, so libcurl never holds a pointer to a freed transfer.
// - A transfer's continuation is resumed exactly once, on the loop thread, after its easy handle
//   has left the multi handle: no callback (progress included) can run after `perform` returns.
//   A streamed call (`stream`) is the exception: its continuation is resumed from the header
//   callback once the final head is known, and the transfer goes on feeding the body's
//   `ResponseBodyStream.Source` until it ends, after its handle left the multi handle as above. The
//   stream's `onResume` and `onTermination` reach the loop through the inbox, like a cancellation,
//   and the stream keeps the transport alive while it is read (see CurlTransfer+Receiving.swift).
// - A streamed request body (`BodySource.stream`) is read by a `RequestBodyPump` task, one chunk
//   ahead; its `onReady` resumes the paused upload through the inbox as well.
// - Memory: the header `curl_slist` is freed when a transfer ends or is redirected; request bodies
//   in memory are copied by libcurl (`CURLOPT_COPYPOSTFIELDS`) or streamed by a `BodyReader`; easy
//   handles and their error buffers are freed together in `CurlEasyHandle.deinit`; the multi handle
//   is cleaned up by the loop thread when the transport is closed or released.
// - WebSockets (`webSocket`) live on the loops too, each in turn: the handshake is a job like a call's, whose
//   transfer libcurl only connects (`CURLOPT_CONNECT_ONLY`); the loop then writes the handshake and moves the
//   connection's bytes itself, non-blocking (`CurlWebSocket.Wire`), and the core (`WebSocket`) drives the
//   `CurlWebSocket` it gets from any thread through the same inbox (`CurlResumption.webSocket`).
// - Threads: every thread of the transport (each loop's) is started through its
//   `CurlThreads`, which can, for `shutdown(gracePeriod:)`, join them, so that the shutdown
//   returns only once they have left the process. Released or closed, the transport does not wait: its threads
//   detach themselves and end on their own.

@_spi(Backend) @_spi(Transport) public import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport built on libcurl's multi interface: a few threads per transport (one per core by default,
/// `Configuration.loopCount`) drive every request, with HTTP/2 over TLS, keep-alive connection reuse, gzip/deflate/brotli decoding, streamed uploads
/// and downloads, progress and prompt cancellation.
///
/// ```swift
/// let transport = CurlTransport()
/// let manager = ServerAPIManager(transport: transport)
/// let result = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/v1/items"))
/// ```
///
/// - Important: Create one transport and share it: each one runs its own threads and connection caches.
///   Progress closures run on those threads; keep them short. The transport ignores `SIGPIPE` for the
///   whole process (libcurl cannot guard it from a multi-threaded program), as SwiftNIO does.
public final class CurlTransport: RequestPerforming {
    /// The transport's name in metrics: `"curl"`.
    public var name: String { "curl" }

    /// `true`: the manager's cancellation of a call tears its transfer down as its task's cancellation does.
    public var observesCallCancellation: Bool { true }

    /// `true`: a `BodySource.stream` body is sent as it is read.
    public var sendsStreamedRequestBodies: Bool { true }

    /// `true`: WebSockets are framed by the core (the transport moves their bytes), so the core offers
    /// permessage-deflate.
    public var carriesWebSocketExtensions: Bool { true }

    /// The settings the transport was made with.
    public let configuration: Configuration

    /// The loops, at least one, each started when a call first needs it; a request runs on `claimLoop(for:)`.
    private let loops: CurlLoopSet
    /// The alt-svc cache (`Configuration.altSvc`): one for the whole transport, so that what a call on one loop
    /// learned serves the calls on every other.
    private let altSvc: CurlAltSvcFile?
    /// Every thread the transport runs: its loops'.
    let threads: CurlThreads
    private let shutdownState = ShutdownState()
    /// The origins (`host:port`) whose HTTP/3 alternative failed and is ignored now (`AltSvcCache`).
    package var brokenAlternatives: [String] { altSvc?.brokenOrigins ?? [] }
    /// The next loop in turn, for `.roundRobin`.
    private let nextLoop = Atomic<UInt64>(0)
    /// The loop the next WebSocket lives on.
    private let nextWebSocketLoop = Atomic<UInt64>(0)

    /// Creates a transport and starts its first loop's thread; the others (`Configuration.loopCount`) start
    /// when a call's origin first needs them.
    /// - Parameter configuration: Connection limits, TLS trust, decoding, timeouts and the number of loops.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let threads = CurlThreads()
        self.threads = threads
        altSvc = configuration.altSvc.map(CurlAltSvcFile.init)
        loops = Self.makeLoops(
            configuration, altSvc: altSvc, threads: threads,
            makeDownloadWriter: CurlDownloads.defaultFactory(maxErrorBodySize: configuration.maxErrorBodySize))
        loopExecutor = CurlLoopExecutor(loops: loops)
        loops.useTaskExecutor(loopExecutor)
    }

    /// Creates a transport whose downloads go through the writers `makeDownloadWriter` makes (tests).
    init(configuration: Configuration = Configuration(), makeDownloadWriter: @escaping CurlDownloadWriterFactory) {
        self.configuration = configuration
        let threads = CurlThreads()
        self.threads = threads
        altSvc = configuration.altSvc.map(CurlAltSvcFile.init)
        loops = Self.makeLoops(configuration, altSvc: altSvc, threads: threads, makeDownloadWriter: makeDownloadWriter)
        loopExecutor = CurlLoopExecutor(loops: loops)
        loops.useTaskExecutor(loopExecutor)
    }

    private static func makeLoops(
        _ configuration: Configuration, altSvc: CurlAltSvcFile?, threads: CurlThreads,
        makeDownloadWriter: @escaping CurlDownloadWriterFactory
    ) -> CurlLoopSet {
        let count = max(1, configuration.loopCount)
        var perLoop = configuration
        // The total limit is split between the loops (rounded up); the per-host one holds as it is when a
        // host's calls stay on one loop.
        if configuration.maxConnections > 0 {
            perLoop.maxConnections = share(of: configuration.maxConnections, over: count)
        }
        if configuration.loopAssignment != .byOrigin, configuration.maxConnectionsPerHost > 0 {
            perLoop.maxConnectionsPerHost = share(of: configuration.maxConnectionsPerHost, over: count)
        }
        return CurlLoopSet(count: count) { [perLoop] in
            CurlLoop(configuration: perLoop, altSvc: altSvc, threads: threads, makeDownloadWriter: makeDownloadWriter)
        }
    }

    /// The loop that runs a call to `url`, with the counter of its calls in flight, which already counts the call
    /// (the caller leaves it when the call ends).
    ///
    /// The choice and the count are one step: calls chosen at the same moment cannot all take the last place on
    /// a loop, so with `.adaptive` no loop holds more calls than its threshold while another has room (64 calls
    /// to an origin allowing 8 connections of 8 streams all run at once, none queued behind a full loop).
    func claimLoop(for url: URL) -> (loop: CurlLoop, inFlight: CallCounter) {
        let counters = loops.callsInFlight
        guard loops.count > 1, configuration.loopAssignment == .adaptive else {
            let index = loopIndex(for: url)
            counters[index].enter()
            return (loops.loop(at: index), counters[index])
        }
        let home = originIndex(url)
        if counters[home].enter(below: busyThreshold(for: url)) {
            return (loops.loop(at: home), counters[home])
        }
        while true {
            let (best, fewest) = leastBusyLoop(from: home)
            if counters[best].enter(below: fewest + 1) { return (loops.loop(at: best), counters[best]) }
        }
    }

    /// Each loop's part of a connection limit split between `count` loops (rounded up, at least 1).
    private static func share(of limit: Int, over count: Int) -> Int { max(1, (limit + count - 1) / count) }

    /// The calls in flight on a loop past which `.adaptive` sends the next call to `url` elsewhere: the loop's share
    /// of `maxConnectionsPerHost` for HTTP/1.1 (one call per connection), `adaptiveThreshold` when the calls may
    /// share one HTTP/2 or HTTP/3 connection as streams (`CurlSettings.mayMultiplex`), so that a few streams are
    /// not split over two connections.
    private func busyThreshold(for url: URL) -> Int {
        let perHost = configuration.maxConnectionsPerHost
        guard perHost > 0 else { return Configuration.adaptiveThreshold }
        let share = Self.share(of: perHost, over: loops.count)
        let version = configuration.httpVersion
        let multiplexed =
            version == .http2PriorKnowledge || (version != .http1 && url.scheme?.lowercased() == "https")
        return multiplexed ? max(share, Configuration.adaptiveThreshold) : share
    }

    /// Where a call to `url` runs among the loops: the loop its origin maps to (`.byOrigin`, and `.adaptive`
    /// while that loop is not busy), the least busy loop (`.adaptive` past `busyThreshold(for:)`), or the next loop
    /// in turn (`.roundRobin`).
    func loopIndex(for url: URL) -> Int {
        guard loops.count > 1 else { return 0 }
        switch configuration.loopAssignment {
        case .roundRobin:
            return Int(nextLoop.wrappingAdd(1, ordering: .relaxed).oldValue % UInt64(loops.count))
        case .byOrigin:
            return originIndex(url)
        case .adaptive:
            let home = originIndex(url)
            guard loops.callsInFlight[home].count >= busyThreshold(for: url) else { return home }
            return leastBusyLoop(from: home).index
        }
    }

    /// The loop with the fewest calls in flight, and that count; `home` when none has fewer than it.
    private func leastBusyLoop(from home: Int) -> (index: Int, count: Int) {
        let counters = loops.callsInFlight
        var (best, fewest) = (home, counters[home].count)
        for index in counters.indices {
            let count = counters[index].count
            if count < fewest { (best, fewest) = (index, count) }
        }
        return (best, fewest)
    }

    /// The loop an origin maps to: a hash (FNV-1a, stable between runs) of its scheme, host and port.
    private func originIndex(_ url: URL) -> Int {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(loops.count))
    }

    /// Sends a request through libcurl and returns as soon as the final response head has arrived,
    /// with the body as a `ResponseBodyStream` read as it arrives.
    ///
    /// The request's timeout bounds the time until the head (redirects included); the body then runs
    /// for as long as it keeps moving (the stall timeout applies) and until the stream is cancelled or
    /// its reader leaves. When the stream's buffer (`Configuration.streamBufferSize`) is full, the
    /// transfer stops reading from the socket until the reader has drained half of it.
    /// - Parameter request: The resolved request (without a download target).
    /// - Returns: Status, headers, the streamed body and libcurl's timings as of the head; the final
    ///   metrics are on the stream once it ends.
    /// - Throws: `ServerAPIError`, for failures before the head (as `perform`); later failures
    ///   (`network` for a dropped connection, the stall timeout, `responseTooLarge`) end the stream.
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.download == nil else {
            throw ServerAPIError(
                .invalidRequest, "a streamed call cannot have a download destination", requestID: request.id,
                url: request.url)
        }
        let (loop, inFlight) = claimLoop(for: request.url)
        defer { inFlight.leave() }
        let streaming = CurlStreaming(bufferSize: configuration.streamBufferSize, owner: self)
        let id = CurlJob.nextID()
        return try await request.withCancellationHandler {
            try await withCurlContinuation { continuation in
                loop.submit(CurlJob(id: id, request: request, continuation: continuation, streaming: streaming))
            }
        } onCancel: {
            loop.cancel(id)
        }
    }

    /// The loop a new WebSocket lives on: each in turn, so that long-lived sockets spread over every loop.
    func webSocketLoop() -> CurlLoop {
        loops.loop(at: Int(nextWebSocketLoop.wrappingAdd(1, ordering: .relaxed).oldValue % UInt64(loops.count)))
    }

    // Released, the transport stops its loops (their calls end with `cancelled`). An open WebSocket keeps its
    // transport until it ends (`CurlWebSocket`), so this runs only once none is open.
    deinit { loops.close() }

    /// Ends every call in flight at once with `cancelled` ("the transport was shut down"), WebSockets included,
    /// and stops the transport's threads; calls made afterwards fail with `shuttingDown`. Releasing the transport
    /// stops its loops the same way (an open WebSocket keeps its transport until it ends).
    ///
    /// Each call ends exactly once: its transfer is torn down on its loop, and a call the loop had not taken
    /// yet is refused. Returns at once; the calls end on their loops' threads, and the threads end on their own.
    /// `shutdown(gracePeriod:)` is the same with a grace period, and returns once the threads are gone.
    public func close() {
        threads.refuseNew()
        loops.close()
    }

    /// Shuts the transport down: new calls fail at once with `shuttingDown`; the calls in flight (streamed bodies and
    /// WebSockets included) get `gracePeriod` to end, and are then cancelled as `close()` cancels them; returns once
    /// every call has ended and every thread of the transport (its loops') has exited.
    ///
    /// Calling it again, or from several tasks at once, is safe: each returns once the first has completed.
    /// Cancelling the calling task ends the grace period at once.
    ///
    /// - Important: The transport does not speak WebSocket itself: a WebSocket still open when the grace period
    ///   ends is torn down without a close frame. Shut the `ServerAPIManager` down first (it closes its WebSockets
    ///   with 1001, going away, and shuts down the transport it owns), or close the sockets yourself.
    /// - Parameter gracePeriod: How long the calls in flight may take to end before they are cancelled; `.zero`
    ///   cancels them at once, as `close()` does.
    public func shutdown(gracePeriod: Duration) async {
        guard shutdownState.begin() else { return await shutdownState.waitUntilDone() }
        // Claimed before anything can end: a thread that ends from now on is joined below, not detached.
        threads.claimAll()
        threads.refuseNew()
        loops.drain()
        let (loops, threads) = (self.loops, self.threads)
        if gracePeriod <= .zero {
            // What is in flight is cancelled at once: no wait for idleness to race against a timer.
            loops.close()
        } else {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await loops.waitUntilIdle()
                }
                group.addTask { try? await Task.sleep(for: gracePeriod) }
                await group.next()
                group.cancelAll()
                // What is left is cancelled; this ends the wait for idleness too.
                loops.close()
            }
        }
        await threads.waitUntilEnded()
        threads.joinAll()
        shutdownState.finish()
    }

    /// The kernel's ids of the transport's threads that have not exited (tests look them up in `/proc/self/task`).
    package var threadTaskIDs: [Int] { threads.taskIDs }

    /// The transport's loop threads as a task executor: code that prefers it continues on the loop thread
    /// that completed its transfer, with no hand-off between threads after each call (code that starts
    /// elsewhere begins on the first loop).
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(transport.executor) {
    ///     for id in ids { results.append(try await manager.send(itemAPI(id))) }
    /// }
    /// ```
    /// Sequential calls and many small concurrent calls gain most (see the README's benchmark).
    /// - Important: Opt in only for code that is quick between its calls: while it runs, the transfers
    ///   of the loop it runs on wait. Format large bodies, write files and call blocking APIs elsewhere.
    ///   After the transport is released, such code continues on the global executor.
    public var executor: any TaskExecutor { loopExecutor }

    private let loopExecutor: CurlLoopExecutor

    /// The transfers libcurl is working on now, on every loop; 0 once every call has returned.
    package var activeTransferCount: Int {
        loops.started.reduce(0) { $0 + $1.activeTransfers.load(ordering: .relaxed) }
    }

    /// Each loop's count of calls in flight, which `.adaptive` reads (tests).
    var callCounters: [CallCounter] { loops.callsInFlight }

    /// The transfers each loop is working on now (tests).
    var activeTransfersPerLoop: [Int] { loops.map(unstarted: 0) { $0.activeTransfers.load(ordering: .relaxed) } }

    /// The easy handles the loops have made, and those they keep idle for the next calls (tests).
    var easyHandleCounts: (made: Int, idle: Int) {
        loops.started.reduce((0, 0)) {
            ($0.0 + $1.handlesMade.load(ordering: .relaxed), $0.1 + $1.idleHandles.load(ordering: .relaxed))
        }
    }

    /// How often streamed responses paused for a full buffer, and resumed once their reader drained it.
    var streamPauseCounts: (paused: Int, resumed: Int) {
        loops.started.reduce((0, 0)) {
            ($0.0 + $1.receivePauses.load(ordering: .relaxed), $0.1 + $1.receiveResumes.load(ordering: .relaxed))
        }
    }

    /// Sends a request through libcurl and returns the response, whatever its status.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, the final response's headers, the body (in memory, or in the download file)
    ///   and libcurl's timings.
    /// - Throws: `ServerAPIError`: `cancelled` when the task is cancelled (the connection is torn down
    ///   at once), `timedOut`, `cannotConnect`, `tls`, `network`, `tooManyRedirects`,
    ///   `responseTooLarge`, `fileSystem` or `invalidRequest`, with libcurl's own message.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let (loop, inFlight) = claimLoop(for: request.url)
        defer { inFlight.leave() }
        let id = CurlJob.nextID()
        return try await request.withCancellationHandler {
            try await withCurlContinuation { continuation in
                loop.submit(CurlJob(id: id, request: request, continuation: continuation))
            }
        } onCancel: {
            loop.cancel(id)
        }
    }
}

extension CurlTransport {
    /// Creates a transport after checking its TLS options, so that a missing or unreadable client
    /// certificate or key, an encrypted key without a passphrase, or a malformed pin is reported now
    /// rather than by the first request; and that the loaded libcurl can speak the configured HTTP version.
    /// - Parameter configuration: Connection limits, TLS trust, pins, client certificate, decoding and timeouts.
    /// - Throws: `ServerAPIError`: `tls` with `TLSFailure.clientCertificateProblem` for the client
    ///   certificate's files, `invalidRequest` for a pin; the message names the file. `unsupported` for
    ///   `HTTPVersion.http3` or `.http3Only` on a libcurl without HTTP/3 (`supportsHTTP3`).
    /// - Important: A wrong passphrase, or a key that does not match its certificate, can only show at the
    ///   first TLS connection: that request fails with `clientCertificateProblem`.
    public convenience init(validating configuration: Configuration) throws(ServerAPIError) {
        _ = try CurlTLS(configuration.tls)
        if let refusal = Self.refusal(configuration.httpVersion) { throw refusal }
        self.init(configuration: configuration)
    }
}

/// A transport's loops, each started the first time a call needs it.
///
/// The first loop starts with the transport (the executor's home); the others when a call's origin first
/// hashes to them, so a client of one origin runs one thread and holds one loop's descriptors, however
/// many loops it may use. Once closed, no loop starts: a call routed to one that never started goes to the
/// first, which refuses it as shut down.
final class CurlLoopSet: Sendable {
    private struct State {
        var loops: [CurlLoop?]
        var executor: CurlLoopExecutor?
        var closed = false
    }

    /// How many loops there may be.
    let count: Int
    /// For each loop, started or not, the calls routed to it that have not returned (a streamed call returns
    /// with its head): how busy it is, for `LoopAssignment.adaptive`. Read without the lock.
    let callsInFlight: [CallCounter]
    private let first: CurlLoop
    private let make: @Sendable () -> CurlLoop
    private let state: Locked<State>

    init(count: Int, make: @escaping @Sendable () -> CurlLoop) {
        self.count = max(count, 1)
        callsInFlight = (0..<self.count).map { _ in CallCounter() }
        self.make = make
        first = make()
        state = Locked(State(loops: [first] + Array(repeating: nil, count: self.count - 1)))
    }

    /// Lets every loop, started now or later, run tasks that prefer `executor`.
    func useTaskExecutor(_ executor: CurlLoopExecutor) {
        let started = state.withLock { state -> [CurlLoop] in
            state.executor = executor
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.useTaskExecutor(executor) }
    }

    /// The loop at `index`, started if it was not.
    func loop(at index: Int) -> CurlLoop {
        let (loop, executor, isNew) = state.withLock { state -> (CurlLoop, CurlLoopExecutor?, Bool) in
            if let loop = state.loops[index] { return (loop, nil, false) }
            if state.closed { return (first, nil, false) }
            let loop = make()
            state.loops[index] = loop
            return (loop, state.executor, true)
        }
        if isNew, let executor { loop.useTaskExecutor(executor) }
        return loop
    }

    /// The first loop: where work from outside the loops runs.
    var home: CurlLoop { first }

    /// The loop whose thread this is, if any.
    var current: CurlLoop? {
        state.withLock { state in
            for case let loop? in state.loops where loop.isLoopThread { return loop }
            return nil
        }
    }

    /// The loops started so far.
    var started: [CurlLoop] { state.withLock { $0.loops.compactMap { $0 } } }

    /// What `body` gives for each loop, started or not (`unstarted` for those that are not).
    func map<T>(unstarted: T, _ body: (CurlLoop) -> T) -> [T] {
        state.withLock { $0.loops }.map { $0.map(body) ?? unstarted }
    }

    /// Refuses new jobs on every loop, the transfers in flight going on; no loop starts afterwards.
    func drain() {
        let started = state.withLock { state -> [CurlLoop] in
            state.closed = true
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.drain() }
    }

    /// Returns once no started loop has a transfer in flight.
    func waitUntilIdle() async {
        for loop in started { await loop.waitUntilIdle() }
    }

    /// Shuts every started loop down; no loop starts afterwards.
    func close() {
        let started = state.withLock { state -> [CurlLoop] in
            state.closed = true
            // The executor refers to this set: let the cycle go.
            state.executor = nil
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.shutDown() }
    }
}

/// A count of calls in flight on one loop.
final class CallCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// The calls counted now.
    var count: Int { value.load(ordering: .relaxed) }

    /// Counts a call in.
    func enter() { value.add(1, ordering: .relaxed) }

    /// Counts a call in if fewer than `limit` are counted now, in one step, so that two callers that read the
    /// same count cannot both take the last place; whether it did.
    func enter(below limit: Int) -> Bool {
        var current = value.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = value.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts a call out.
    func leave() { value.subtract(1, ordering: .relaxed) }
}
