internal import CCurl
@_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One call on the loop thread: its easy handle, what it sends and what it has received so far.
///
/// - Important: Loop thread only. libcurl holds an unretained pointer to it (callbacks' context and
///   `CURLOPT_PRIVATE`) while its easy handle is in the multi handle; `CurlLoopRunner` keeps it alive
///   until the handle has left and been reset.
final class CurlTransfer {
    /// What happened when libcurl said the transfer was done.
    enum Outcome {
        case response(TransportResponse)
        /// A streamed call's body ended normally, with these metrics and trailer fields (its head was
        /// delivered already).
        case streamEnded(TransportMetrics, trailers: HTTPHeaders)
        case failure(ServerAPIError)
        /// Send `request` again (to the redirect's target, or for a download that must start over).
        case again
    }

    let job: CurlJob
    let easy: CurlEasyHandle
    let settings: CurlSettings
    /// The loop, which a streamed body's reader and a streamed request body's pump ask to resume the transfer.
    let loop: CurlLoop
    /// The request being sent: the caller's, then each redirect's.
    @exclusivity(unchecked) var request: TransportRequest
    /// When the call started, for the timeout and metrics.
    let started: ContinuousClock.Instant
    /// When the current request (after redirects) started, as an offset from `started`.
    var hopStarted: Duration = .zero
    /// Request body bytes sent by earlier hops.
    var earlierBytesSent: Int64 = 0
    /// Whether the transfer went again over TCP after an HTTP/3 alternative failed (`fallsBackFromAlternative`).
    var leftAlternative = false

    /// The header list handed to libcurl (`CURLOPT_HTTPHEADER`); freed by `releaseRequestResources`.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// The host-address overrides handed to libcurl (`CURLOPT_RESOLVE`); freed with the header list.
    var resolveList: UnsafeMutablePointer<curl_slist>?
    /// Streams a body that is not handed to libcurl in one copy.
    var reader: BodyReader?
    /// Feeds a request body from an `AsyncSequence` (`BodySource.stream`).
    var pump: RequestBodyPump?

    /// A streamed call's body, once its final head has arrived and the caller has it.
    var source: ResponseBodyStream.Source?
    /// Whether the transfer is paused, per direction (`curl_easy_pause` sets both at once).
    var receivePaused = false
    var sendPaused = false

    /// The exchange's lifecycle (heads, redirects, body size, download decisions), as the core's rules say.
    @exclusivity(unchecked) var exchange: ExchangeStateMachine

    // The head being parsed (libcurl passes it line by line), then the final one, and the body kept in memory.
    //
    // `@exclusivity(unchecked)` on these and on `request` and `exchange`: the transfer lives on its loop thread
    // alone, and every access to them is a read or a mutation that calls nothing that touches the transfer,
    // so the runtime's exclusivity check (a thread-local access set, paid at every access of the header and body
    // callbacks) can never fire.
    @exclusivity(unchecked) var status = 0
    @exclusivity(unchecked) var headers = HTTPHeaders()
    @exclusivity(unchecked) var body = Data()
    /// The trailer fields after the final head's body, and the bytes of their names and values.
    var trailers = HTTPHeaders()
    var trailerSize = 0

    /// Full duplex (a streamed request body with a streamed response): the raw chunks of an HTTP/1.1
    /// response, read by the core's decoder to see where the body ends (see CurlTransfer+Receiving.swift).
    var chunkDecoder: ChunkedDecoder?
    /// The response of a full-duplex call ended while its request body was still being sent: the body's
    /// stream has ended, and the request body ends at its next read.
    var responseEndedFirst = false

    /// The download writer, for a call with a download target.
    var download: (any CurlDownloadWriting)?

    /// A Digest challenge libcurl is answering itself in this hop (`DigestChallenge`).
    var challenge = DigestChallenge.none
    /// The last progress reported, to report only changes.
    var reportedUpload: Int64 = -1
    var reportedDownload: Int64 = -1

    /// libcurl's receive buffer for downloads (its maximum is 512 KB).
    static let downloadBufferSize = 256 << 10

    /// `User-Agent: ServerAPIKit/<version>`, sent when the request has no `User-Agent` of its own.
    static let defaultUserAgentLine = "User-Agent: " + HTTPHeaders.defaultUserAgent

    /// libcurl's receive buffer for a streamed body: a quarter of the stream's buffer, between libcurl's
    /// default (16 KB) and its maximum (512 KB). Each piece is a hand-off to the reader, so larger pieces
    /// cost less CPU per megabyte, but the buffer is allocated for every streamed call in flight: a quarter keeps
    /// a thousand event streams (512 KB stream buffers by default) at 128 MB of it.
    static func receiveBufferSize(forStreamBuffer bufferSize: Int) -> Int {
        min(max(bufferSize / 4, 16 << 10), 512 << 10)
    }

    init(job: CurlJob, easy: CurlEasyHandle, settings: CurlSettings, loop: CurlLoop) {
        self.job = job
        self.easy = easy
        self.settings = settings
        self.loop = loop
        request = job.request
        started = .now
        exchange = ExchangeStateMachine(download: job.request.download != nil, streamed: job.streaming != nil)
    }

    /// Checks the request, then prepares the first send: the download's `Range`, then the easy handle.
    func begin() throws(ServerAPIError) {
        try request.validateForSending(defaultStallTimeout: settings.stallTimeout)
        if let target = request.download {
            let writer = try settings.makeDownloadWriter(target, request.id, request.url)
            _ = writer.prepare(&request)
            download = writer
        }
        try configure()
    }

    /// Ends a transfer that will not complete (failure, cancellation, shutdown): the download keeps its
    /// partial file for a resume, and the header list is freed.
    func abandon() {
        _ = exchange.cancelled()
        download?.abandon()
        releaseRequestResources()
    }

    /// Frees what libcurl read while sending (the handle must have left the multi handle).
    func releaseRequestResources() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if let resolveList { curl_slist_free_all(resolveList) }
        resolveList = nil
        reader = nil
        pump?.cancel()
        pump = nil
    }

    // MARK: Setting up the easy handle

    /// Sets every option of the easy handle for `request`.
    ///
    /// A handle goes from transfer to transfer on its loop. The options every transfer sets alike are set once
    /// (`configureShared`); those a transfer may set differently are each set every time, to the transfer's value or
    /// libcurl's default; any other marks the handle for a reset after the transfer (`CurlEasyHandle.needsReset`).
    func configure() throws(ServerAPIError) {
        releaseRequestResources()
        resetResponse()
        hopStarted = ContinuousClock.now - started
        // Read once: each of the request's properties is an access to its copy-on-write box, and the
        // transfer settings (timeouts, socket) are a copy of the whole `ServerAPI.Transfer`.
        let url = request.url
        let limits = request.transfer
        let remaining = limits.timeout - hopStarted
        guard remaining > .zero else {
            throw .timedOut(after: limits.timeout)
        }
        if let refusal = settings.httpVersionRefusal { throw refusal }
        let context = Unmanaged.passUnretained(self).toOpaque()
        if !easy.hasSharedOptions {
            try configureShared()
            easy.hasSharedOptions = true
        }
        // A WebSocket's is its http(s) form (`configureConnectOnly`).
        if job.webSocket == nil { try easy.set(CURLOPT_URL, url.absoluteString) }
        try easy.set(CURLOPT_PRIVATE, pointer: context)
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        // A streamed call's timeout bounds the time until its head only: the loop enforces it (see
        // `CurlLoopRunner.checkHeadDeadlines`), as libcurl's total timeout would end a long body too. 0 is none.
        try easy.set(CURLOPT_TIMEOUT_MS, job.streaming == nil ? remaining.curlMilliseconds : 0)
        // 0 is libcurl's default.
        let connect = (limits.connectTimeout ?? settings.connectTimeout).map { min($0, remaining).curlMilliseconds }
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, connect ?? 0)
        try configureStallTimeout()
        // With HTTP/2, wait for a connection that can multiplex rather than opening another; where only
        // HTTP/1.1 is possible, waiting would hold every other call until the first connection answers.
        try easy.set(CURLOPT_PIPEWAIT, settings.mayMultiplex(url))
        let sendsBody = try configureMethodAndBody(context: context)
        try configureHeaders(sendsBody: sendsBody)
        try configureOccasional(url, limits, context: context)
    }

    /// The options every transfer of the loop sets alike, from the transport's configuration.
    private func configureShared() throws(ServerAPIError) {
        try easy.set(CURLOPT_NOSIGNAL, true)
        easy.restrictToHTTP()
        try easy.set(CURLOPT_HTTP_VERSION, settings.httpVersion)
        try configureProxy()
        // Redirects are followed through the core's ExchangeStateMachine and RedirectRule, not by libcurl:
        // libcurl 7.x keeps a CURLOPT_CUSTOMREQUEST method (PUT, PATCH, DELETE) across a 303, and every
        // transport must rewrite methods and strip credentials the same way.
        try easy.set(CURLOPT_FOLLOWLOCATION, false)
        // Full duplex takes it back (`configureFullDuplex`).
        if settings.automaticDecompression { try easy.set(CURLOPT_ACCEPT_ENCODING, "") }
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        if settings.tcpKeepAlive { try easy.set(CURLOPT_TCP_KEEPALIVE, true) }
        if let caFile = settings.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        let tls = try settings.tls.get()
        if !tls.dependsOnHost { try tls.apply(to: easy, host: "") }
        try easy.check(
            ccurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, curlWriteCallback), CURLOPT_WRITEFUNCTION)
        try easy.check(
            ccurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, curlHeaderCallback),
            CURLOPT_HEADERFUNCTION)
    }

    /// The options only some transfers set; each marks the handle for a reset after the transfer.
    private func configureOccasional(
        _ url: URL, _ limits: ServerAPI.Transfer, context: UnsafeMutableRawPointer
    ) throws(ServerAPIError) {
        if let altSvc = settings.altSvc {
            easy.needsReset = true
            try altSvc.apply(to: easy, url: url)
        }
        if !settings.resolve.isEmpty, resolveList == nil {
            easy.needsReset = true
            for entry in settings.resolve {
                guard let list = curl_slist_append(resolveList, entry) else {
                    throw ServerAPIError(.invalidRequest, "the host address overrides could not be handed to libcurl")
                }
                resolveList = list
            }
            try easy.set(CURLOPT_RESOLVE, list: resolveList)
        }
        try configureCredentials()
        if let socket = limits.unixSocketPath {
            easy.needsReset = true
            try easy.set(CURLOPT_UNIX_SOCKET_PATH, socket)
            // The socket is the route: no proxy stands between.
            try easy.set(CURLOPT_PROXY, "")
        }
        if isFullDuplex {
            easy.needsReset = true
            try configureFullDuplex()
        }
        if !settings.insecureHosts.isEmpty, let host = url.host?.lowercased(),
            settings.insecureHosts.contains(host)
        {
            easy.needsReset = true
            try easy.set(CURLOPT_SSL_VERIFYPEER, false)
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        // A download takes its body in larger pieces: fewer callbacks and file writes per
        // megabyte. A streamed body too, in proportion to its stream's buffer: each piece is a hand-off
        // to the reader (a thread wake-up when it waits), so a bulk stream in 16 KB pieces spends more
        // time waking its reader than moving bytes; a small stream buffer keeps many streams small.
        // Other calls keep libcurl's 16 KB buffer, so many at once stay small. Never set a buffer smaller
        // than that: `curl_easy_reset` puts the handle back to 16 KB without resizing a buffer libcurl
        // 7.88 may still hold, so the handle's next transfer would write past a smaller one and corrupt the
        // heap.
        if download != nil {
            easy.needsReset = true
            easy.setIfSupported(CURLOPT_BUFFERSIZE, Self.downloadBufferSize)
        } else if let streaming = job.streaming {
            easy.needsReset = true
            easy.setIfSupported(CURLOPT_BUFFERSIZE, Self.receiveBufferSize(forStreamBuffer: streaming.bufferSize))
        }
        if let tls = try? settings.tls.get(), tls.dependsOnHost {
            easy.needsReset = true
            try tls.apply(to: easy, host: url.host ?? "")
        }
        if request.progress != nil {
            easy.needsReset = true
            try easy.check(
                ccurl_easy_setopt_xferinfo_function(easy.raw, curlProgressCallback), CURLOPT_XFERINFOFUNCTION)
            try easy.set(CURLOPT_XFERINFODATA, pointer: context)
            try easy.set(CURLOPT_NOPROGRESS, false)
        }
        if job.webSocket != nil {
            easy.needsReset = true
            try configureConnectOnly()
        }
    }

    /// A WebSocket's transfer: libcurl only connects (TCP, a proxy, TLS, as configured above for any transfer) and
    /// hands the connection over (`CurlWebSocket.Wire` writes the handshake). Over HTTP/1.1, on a connection of its
    /// own, through an HTTP proxy in a `CONNECT` tunnel (a forwarding proxy would not pass the upgrade on).
    private func configureConnectOnly() throws(ServerAPIError) {
        guard let url = WebSocketHandshakeRule.httpForm(of: request.url.absoluteString) ?? httpURL(request.url) else {
            throw ServerAPIError(.invalidRequest, "a WebSocket needs an http(s) or ws(s) URL", url: request.url)
        }
        try easy.set(CURLOPT_URL, url)
        try easy.set(CURLOPT_CONNECT_ONLY, 1)
        try easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        try easy.set(CURLOPT_FRESH_CONNECT, true)
        if settings.altSvc != nil { try easy.set(CURLOPT_ALTSVC_CTRL, 0) }
        if httpProxyRoute != nil { try easy.set(CURLOPT_HTTPPROXYTUNNEL, true) }
    }

    /// `url` when it is an http(s) URL already.
    private func httpURL(_ url: URL) -> String? {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https" ? url.absoluteString : nil
    }

    private func resetResponse() {
        status = 0
        headers = HTTPHeaders()
        body = Data()
        trailers = HTTPHeaders()
        trailerSize = 0
        chunkDecoder = nil
        responseEndedFirst = false
        reportedUpload = -1
        reportedDownload = -1
    }

    /// Sets the method and the body; returns whether a body (perhaps empty) is sent.
    private func configureMethodAndBody(context: UnsafeMutableRawPointer) throws(ServerAPIError) -> Bool {
        let method = request.method.rawValue
        // Only a GET without a body sets nothing here.
        if method != "GET" { easy.needsReset = true }
        if let body = request.body.streamedBody {
            easy.needsReset = true
            try configureStreamedBody(body, method: method, context: context)
            return true
        }
        let length = try request.body.contentLength()
        if length > 0 { easy.needsReset = true }
        if method == "HEAD" {
            guard length == 0 else { throw ServerAPIError(.invalidRequest, "a HEAD request cannot have a body") }
            try easy.set(CURLOPT_NOBODY, true)
            return false
        }
        // POST, PUT and PATCH always say how long their body is, even when it is empty (servers
        // answer 411 to a PUT without Content-Length); other methods send a body only when they have one.
        guard length > 0 || method == "POST" || method == "PUT" || method == "PATCH" else {
            if method != "GET" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
            return false
        }
        try easy.set(CURLOPT_POST, true)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: length)
        if length == 0 {
            try easy.set(CURLOPT_COPYPOSTFIELDS, "")
        } else if length <= settings.copyBodyLimit, let bytes = inMemoryBody() {
            // libcurl copies the bytes (POSTFIELDSIZE first: they may hold NULs), so nothing of ours
            // needs to outlive this call.
            let code = bytes.withUnsafeBytes { buffer in
                ccurl_easy_setopt_pointer(
                    easy.raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress))
            }
            try easy.check(code, CURLOPT_COPYPOSTFIELDS)
        } else {
            reader = try request.body.makeReader()
            try easy.check(ccurl_easy_setopt_read_function(easy.raw, curlReadCallback), CURLOPT_READFUNCTION)
            try easy.set(CURLOPT_READDATA, pointer: context)
            // libcurl rewinds the body when it resends the request on a new connection.
            try easy.check(ccurl_easy_setopt_seek_function(easy.raw, curlSeekCallback), CURLOPT_SEEKFUNCTION)
            try easy.set(CURLOPT_SEEKDATA, pointer: context)
        }
        if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
        return true
    }

    private func inMemoryBody() -> Data? {
        switch request.body {
        case .empty: Data()
        case .data(let data): data
        case .file, .stream: nil
        case .segments: request.body.inMemoryBytes
        }
    }

    /// Sends exactly `request.headers`: libcurl's own `Accept: */*`, `Expect: 100-continue` and form
    /// `Content-Type` are removed unless the request sets them (an empty value removes a header in libcurl).
    private func configureHeaders(sendsBody: Bool) throws(ServerAPIError) {
        for field in request.headers {
            // "Name;" is libcurl's way to send a header with an empty value.
            try appendHeader(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        // The default User-Agent goes straight into libcurl's list: adding it to the request would copy
        // the request's fields, which it shares with the caller's value.
        if !request.headers.contains("User-Agent") { try appendHeader(Self.defaultUserAgentLine) }
        if !request.headers.contains("Accept") { try appendHeader("Accept:") }
        if sendsBody {
            if !request.headers.contains("Expect") { try appendHeader("Expect:") }
            if !request.headers.contains("Content-Type") { try appendHeader("Content-Type:") }
        }
        try easy.set(CURLOPT_HTTPHEADER, list: headerList)
    }

    private func appendHeader(_ line: String) throws(ServerAPIError) {
        // On failure curl_slist_append returns NULL and leaves the list as it was: still ours to free.
        guard let list = curl_slist_append(headerList, line) else {
            throw ServerAPIError(.invalidRequest, "libcurl could not allocate the request's headers")
        }
        headerList = list
    }
}

extension CurlTransfer {
    // MARK: Stall timeout

    /// The stall limit of the current request: its own, else the transport's.
    var stallTimeout: StallTimeout? { request.stallTimeout ?? settings.stallTimeout }

    /// Sets `CURLOPT_LOW_SPEED_LIMIT`/`TIME`: libcurl fails the transfer with "Operation too slow" when
    /// its speed stays below the limit for that many seconds (whole seconds: the duration is rounded up).
    /// Without a limit, both are 0 (none), as a reused handle may hold the last transfer's.
    func configureStallTimeout() throws(ServerAPIError) {
        guard let stall = stallTimeout else {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, 0)
            try easy.set(CURLOPT_LOW_SPEED_TIME, 0)
            return
        }
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, Int(clamping: stall.bytesPerSecond))
        try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, (stall.duration.curlMilliseconds + 999) / 1000))
    }

    // MARK: Proxy

    /// Points the easy handle at the configured proxy, or connects directly.
    func configureProxy() throws(ServerAPIError) {
        try CurlProxy.configure(easy, settings.proxy, caFile: settings.caFile, insecureHosts: settings.insecureHosts)
    }

    /// The proxy the current request goes through (its URL, without credentials); `nil` when direct.
    var proxyRoute: String? {
        guard let proxy = settings.proxy else { return nil }
        return CurlProxyRoute.proxy(for: request.url, proxy)
    }

    /// The HTTP proxy the current request goes through; `nil` when direct or through a SOCKS proxy, where
    /// a 407 comes from the server itself (the proxy speaks SOCKS, not HTTP).
    var httpProxyRoute: String? {
        guard let route = proxyRoute, !CurlProxyRoute.isSOCKS(route) else { return nil }
        return route
    }

    // MARK: Credentials

    /// Sets the request's challenge credentials for this hop. A redirect to another origin has none
    /// (`RedirectRule` drops them), and libcurl never follows redirects here, so they reach no other host
    /// (`CURLOPT_UNRESTRICTED_AUTH` stays off in any case).
    func configureCredentials() throws(ServerAPIError) {
        challenge = .none
        guard let credentials = request.credentials else { return }
        easy.needsReset = true
        guard credentials.scheme == .digest else {
            throw ServerAPIError(
                .invalidRequest, "CurlTransport cannot answer \(credentials.scheme.rawValue) authentication challenges")
        }
        try easy.set(CURLOPT_HTTPAUTH, Int(ccurl_auth_digest()))
        try easy.set(CURLOPT_USERNAME, credentials.user)
        try easy.set(CURLOPT_PASSWORD, credentials.password)
    }

    // MARK: Full duplex

    /// Whether this call sends a streamed request body and streams its response.
    var isFullDuplex: Bool { job.streaming != nil && request.body.streamedBody != nil }

    /// Sets a full-duplex call's easy handle: raw chunks, no content coding offered (why: the full-duplex section of
    /// CurlTransfer+Receiving.swift).
    func configureFullDuplex() throws(ServerAPIError) {
        try easy.set(CURLOPT_HTTP_TRANSFER_DECODING, false)
        try easy.set(CURLOPT_ACCEPT_ENCODING, pointer: nil)
    }
}

// Request bodies (`BodySource.stream`): a `RequestBodyPump` reads the sequence one chunk ahead on a
// task; the read callback copies from that chunk and answers `CURL_READFUNC_PAUSE` when none is ready.
// The pump's `onReady` hops to the loop, which unpauses sending.
extension CurlTransfer {
    // MARK: Request body

    /// Sends a body from an `AsyncSequence`: `Content-Length` when its length is known, else chunked
    /// (libcurl chooses chunked itself for a POST of unknown size over HTTP/1.1; HTTP/2 frames the body).
    func configureStreamedBody(
        _ body: RequestBodyStream, method: String, context: UnsafeMutableRawPointer
    ) throws(ServerAPIError) {
        if method == "HEAD" { throw ServerAPIError(.invalidRequest, "a HEAD request cannot have a body") }
        if exchange.redirects > 0 {
            throw ServerAPIError(
                .invalidRequest,
                "the server redirected to \(request.url.absoluteString) keeping the method and body (307 or 308), "
                    + "and a streamed request body can be sent only once")
        }
        try easy.set(CURLOPT_POST, true)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: body.length ?? -1)
        let loop = self.loop
        let id = job.id
        let pump = try RequestBodyPump(body, onReady: { loop.resume(.sending(id)) })
        self.pump = pump
        try easy.check(ccurl_easy_setopt_read_function(easy.raw, curlReadCallback), CURLOPT_READFUNCTION)
        try easy.set(CURLOPT_READDATA, pointer: context)
        try easy.check(ccurl_easy_setopt_seek_function(easy.raw, curlSeekCallback), CURLOPT_SEEKFUNCTION)
        try easy.set(CURLOPT_SEEKDATA, pointer: context)
        if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
        if body.hasTrailers {
            // libcurl asks for them before the last CRLF of a chunked upload (HTTP/1.1 only: over HTTP/2 it
            // never calls back, and the body goes without them; so in 7.88 and still in 8.19, whose HTTP/2
            // code has no request trailers).
            try easy.check(ccurl_easy_setopt_trailer_function(easy.raw, curlTrailerCallback), CURLOPT_TRAILERFUNCTION)
            try easy.set(CURLOPT_TRAILERDATA, pointer: context)
        }
        pump.start()
    }

    /// Copies the next body bytes into libcurl's buffer.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let pump { return sendStreamedBody(pump, into: buffer) }
        guard let reader else { return 0 }
        do throws(ServerAPIError) {
            return try reader.read(into: buffer)
        } catch {
            exchange.failed(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Copies the next bytes the pump holds (from the read callback); pauses sending when it holds none.
    func sendStreamedBody(_ pump: RequestBodyPump, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        // The response ended first: the request body ends here (what the sequence had not given is not sent).
        if responseEndedFirst { return 0 }
        switch pump.read(into: buffer) {
        case .bytes(let count):
            return count
        case .end:
            return 0
        case .wouldBlock:
            // The pump's onReady resumes sending once it has the next chunk.
            sendPaused = true
            return Int(CURL_READFUNC_PAUSE)
        case .failed(let error):
            exchange.failed(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Appends the request body's trailer fields to libcurl's list (from the trailer callback).
    /// - Returns: `CURL_TRAILERFUNC_OK`, or `CURL_TRAILERFUNC_ABORT` when the fields are not valid trailers.
    func sendTrailers(into list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>) -> Int32 {
        guard let body = request.body.streamedBody else { return Int32(CURL_TRAILERFUNC_OK) }
        do throws(ServerAPIError) {
            for field in try body.trailers() {
                // On failure curl_slist_append returns NULL and leaves the list as it was (libcurl frees it).
                guard let appended = curl_slist_append(list.pointee, "\(field.name): \(field.value)") else {
                    throw ServerAPIError(.invalidRequest, "libcurl could not allocate the request's trailer fields")
                }
                list.pointee = appended
            }
            return Int32(CURL_TRAILERFUNC_OK)
        } catch {
            exchange.failed(error)
            return Int32(CURL_TRAILERFUNC_ABORT)
        }
    }

    /// Starts the body again from its first byte (libcurl asks for nothing else when it resends).
    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        if let pump { return rewindStreamedBody(pump, to: offset, origin: origin) }
        guard offset == 0, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        do throws(ServerAPIError) {
            reader = try request.body.makeReader()
            return Int32(CURL_SEEKFUNC_OK)
        } catch {
            exchange.failed(error)
            return Int32(CURL_SEEKFUNC_FAIL)
        }
    }

    /// libcurl asks to send the body again from its start (a reused connection that turned out dead):
    /// fine while nothing was sent, impossible after that.
    func rewindStreamedBody(_ pump: RequestBodyPump, to offset: Int64, origin: Int32) -> Int32 {
        if offset == 0, origin == SEEK_SET, pump.bytesDelivered == 0 { return Int32(CURL_SEEKFUNC_OK) }
        exchange.failed(
            ServerAPIError(
                .invalidRequest,
                "libcurl had to send the request again, and its streamed body can be sent only once"))
        return Int32(CURL_SEEKFUNC_FAIL)
    }
}

extension CurlProxy {
    /// Points `easy` at `proxy`, or connects directly when it is `nil`.
    /// - Parameters:
    ///   - caFile: The transport's extra CA file, which an https:// proxy is verified with too.
    ///   - insecureHosts: Lower-cased hosts not verified: an https:// proxy among them is not either.
    static func configure(
        _ easy: CurlEasyHandle, _ proxy: Proxy?, caFile: String?, insecureHosts: Set<String>
    ) throws(ServerAPIError) {
        guard let proxy else {
            // Connect directly: libcurl would otherwise pick a proxy from http_proxy/https_proxy in the
            // environment, which no other transport does.
            try easy.set(CURLOPT_PROXY, "")
            return
        }
        // Proxy.environment: no CURLOPT_PROXY or CURLOPT_NOPROXY, so libcurl reads the variables itself.
        guard let url = proxy.url else { return }
        // `credentials` is a var: checked again here in case it changed after `Proxy.init` checked it.
        try proxy.checkCredentials()
        // The scheme picks the protocol: libcurl takes socks5h://, socks5://, socks4a:// and socks4:// here
        // as well as http(s)://. SOCKS credentials go in the same two options (RFC 1929 for SOCKS5, the
        // user name as SOCKS4's user id), and an https:// server is reached without CONNECT: the SOCKS
        // connection is the tunnel.
        try easy.set(CURLOPT_PROXY, url.absoluteString)
        // Set even when empty: an explicit proxy is not bypassed by the environment's no_proxy.
        try easy.set(CURLOPT_NOPROXY, proxy.bypass.joined(separator: ","))
        if let credentials = proxy.credentials {
            // Separate options rather than CURLOPT_PROXYUSERPWD, so a ':' in the user name is kept.
            try easy.set(CURLOPT_PROXYUSERNAME, credentials.user)
            try easy.set(CURLOPT_PROXYPASSWORD, credentials.password)
        }
        if url.scheme == "https" {
            // An https:// proxy is verified like a server: with the transport's extra CA file, and not
            // at all only when its host is listed as insecure.
            if let caFile { try easy.set(CURLOPT_PROXY_CAINFO, caFile) }
            if let host = url.host?.lowercased(), insecureHosts.contains(host) {
                try easy.set(CURLOPT_PROXY_SSL_VERIFYPEER, false)
                try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
            }
        }
    }
}

/// A transport's configuration in the form every transfer applies it, worked out once per loop and
/// shared by its transfers (a class: a transfer holds one reference, not a copy of every field).
final class CurlSettings {
    let httpVersion: Int
    /// Why the configured HTTP version cannot be used with the loaded libcurl (HTTP/3 without it): every request
    /// fails with it, as with `tls` below.
    let httpVersionRefusal: ServerAPIError?
    let automaticDecompression: Bool
    let connectTimeout: Duration?
    let caFile: String?
    /// Lower-cased host names whose certificates are not verified.
    let insecureHosts: Set<String>
    let tcpKeepAlive: Bool
    let proxy: Proxy?
    let stallTimeout: StallTimeout?
    /// `CURLOPT_RESOLVE` entries, `host:port:addresses`.
    let resolve: [String]
    /// The transport's alt-svc cache (`Configuration.altSvc`), shared by its loops.
    let altSvc: CurlAltSvcFile?
    /// Pins and client certificate, or why the transport's TLS options cannot be used (every request fails with it).
    let tls: CurlTLS.Prepared
    /// In-memory bodies up to this size are handed to libcurl in one copy; larger ones are streamed.
    let copyBodyLimit: Int64 = 1 << 20
    /// Makes each download's writer.
    let makeDownloadWriter: CurlDownloadWriterFactory

    init(
        _ configuration: CurlTransport.Configuration, altSvc: CurlAltSvcFile?,
        makeDownloadWriter: @escaping CurlDownloadWriterFactory
    ) {
        self.makeDownloadWriter = makeDownloadWriter
        self.altSvc = altSvc
        httpVersion =
            switch configuration.httpVersion {
            case .http1: CURL_HTTP_VERSION_1_1
            case .http2PriorKnowledge: CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            case .http3: CURL_HTTP_VERSION_3
            case .http3Only: CURL_HTTP_VERSION_3ONLY
            default: CURL_HTTP_VERSION_2TLS
            }
        httpVersionRefusal = CurlTransport.refusal(configuration.httpVersion)
        automaticDecompression = configuration.automaticDecompression
        connectTimeout = configuration.connectTimeout
        caFile = configuration.additionalTrustedCAFile?.path
        insecureHosts = Set(configuration.insecureHosts.map { $0.lowercased() })
        tcpKeepAlive = configuration.tcpKeepAlive
        proxy = configuration.proxy
        stallTimeout = configuration.stallTimeout
        resolve = configuration.resolve.map(\.curlEntry)
        tls = CurlTLS.prepare(configuration.tls)
    }

    /// Whether a request to `url` may be multiplexed on an HTTP/2 or HTTP/3 connection: HTTP/2 with prior
    /// knowledge, or HTTP/2 or 3 allowed and, as libcurl then negotiates them only for https (ALPN, QUIC), the URL
    /// is https.
    func mayMultiplex(_ url: URL) -> Bool {
        httpVersion == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            || (httpVersion != CURL_HTTP_VERSION_1_1 && url.scheme?.lowercased() == "https")
    }
}

/// A transport's `TLSOptions` in the form libcurl takes them, checked and worked out once when the
/// transport is created: pins as `sha256//…` lists per host, key files already hashed, the client
/// certificate's files known to be readable.
struct CurlTLS {
    /// libcurl's `CURLOPT_PINNEDPUBLICKEY` value for each host that an entry names (lower-cased).
    var pinsByHost: [String: String] = [:]
    /// The value for every other host, when entries without hosts exist.
    var defaultPins: String?
    var clientCertificate: ClientCertificate?
    /// The hosts allowed below TLS 1.2 (lower-cased).
    var legacyProtocolHosts: Set<String> = []

    /// The prepared options, or why they cannot be used.
    typealias Prepared = Result<CurlTLS, ServerAPIError>

    /// Prepares `options`, keeping the error instead of throwing it.
    static func prepare(_ options: TLSOptions) -> Prepared {
        Result { () throws(ServerAPIError) in try CurlTLS(options) }
    }

    /// Checks `options` and prepares them.
    /// - Parameter options: The transport's TLS options.
    /// - Throws: `ServerAPIError`: `invalidRequest` for a pin that is not a base64 SHA-256 digest or a key
    ///   file that cannot be read or is not a public key; `tls` (`clientCertificateProblem`) for a client
    ///   certificate or key file that is missing, unreadable, in the wrong format, or encrypted without a
    ///   passphrase. The message names the file.
    init(_ options: TLSOptions) throws(ServerAPIError) {
        var hosts = Set<String>()
        for entry in options.pins where !entry.isEmpty { hosts.formUnion(entry.hosts.map { $0.lowercased() }) }
        for host in hosts {
            if let pins = options.pins(for: host) { pinsByHost[host] = try Self.curlPins(pins) }
        }
        let everyHost = options.pins.filter { !$0.isEmpty && $0.hosts.isEmpty }
        if !everyHost.isEmpty {
            defaultPins = try Self.curlPins(
                PublicKeyPins(sha256: everyHost.flatMap(\.sha256), keyFiles: everyHost.flatMap(\.keyFiles)))
        }
        if let certificate = options.clientCertificate { try Self.check(certificate) }
        clientCertificate = options.clientCertificate
        legacyProtocolHosts = Set(options.legacyProtocolHosts.map { $0.lowercased() })
    }

    /// Whether what `apply` sets depends on the request's host.
    var dependsOnHost: Bool { !pinsByHost.isEmpty || !legacyProtocolHosts.isEmpty }

    /// Sets the pins that apply to `host` and the client certificate on `easy`.
    /// - Parameter host: The request's host, worked out only when some pins name hosts (a URL's host is
    ///   parsed again each time it is read).
    func apply(to easy: CurlEasyHandle, host: @autoclosure () -> String) throws(ServerAPIError) {
        // TLS 1.2 is the floor (libcurl's own default takes 1.0), to the server and to an HTTPS proxy alike, unless
        // the host is one the options let down.
        let legacy = !legacyProtocolHosts.isEmpty && legacyProtocolHosts.contains(host().lowercased())
        let floor = legacy ? CURL_SSLVERSION_TLSv1_0 : CURL_SSLVERSION_TLSv1_2
        try easy.set(CURLOPT_SSLVERSION, floor)
        try easy.set(CURLOPT_PROXY_SSLVERSION, CURL_SSLVERSION_TLSv1_2)
        if let pins = (pinsByHost.isEmpty ? nil : pinsByHost[host().lowercased()]) ?? defaultPins {
            try easy.set(CURLOPT_PINNEDPUBLICKEY, pins)
        }
        if let certificate = clientCertificate {
            try easy.set(CURLOPT_SSLCERT, certificate.certificateFile.path)
            try easy.set(CURLOPT_SSLCERTTYPE, certificate.format.rawValue)
            if let key = certificate.keyFile {
                try easy.set(CURLOPT_SSLKEY, key.path)
                try easy.set(CURLOPT_SSLKEYTYPE, certificate.format.rawValue)
            }
            if let passphrase = certificate.passphrase { try easy.set(CURLOPT_KEYPASSWD, passphrase) }
        }
    }

    // MARK: Pins

    /// `sha256//A;sha256//B`: every digest, key files hashed here, so that digests and files can be mixed
    /// (libcurl takes either one file or a list of digests) and a bad file is reported now.
    static func curlPins(_ pins: PublicKeyPins) throws(ServerAPIError) -> String {
        var digests: [String] = []
        for pin in pins.sha256 {
            let base64 = pin.hasPrefix("sha256//") ? String(pin.dropFirst(8)) : pin
            guard let digest = Data(base64Encoded: base64), digest.count == 32 else {
                throw ServerAPIError(
                    .invalidRequest,
                    "the public-key pin \"\(pin)\" is not a base64 SHA-256 digest (44 characters ending in \"=\")")
            }
            digests.append(base64)
        }
        for file in pins.keyFiles { digests.append(try digest(ofPublicKeyFile: file)) }
        return digests.map { "sha256//" + $0 }.joined(separator: ";")
    }

    /// The base64 SHA-256 of the DER SubjectPublicKeyInfo in a PEM (`PUBLIC KEY`) or DER file.
    static func digest(ofPublicKeyFile file: URL) throws(ServerAPIError) -> String {
        let contents: Data
        do {
            contents = try Data(contentsOf: file)
        } catch {
            throw ServerAPIError(
                .invalidRequest, "the pinned public key file \(file.path) cannot be read", underlying: error)
        }
        let der: Data
        if let text = String(data: contents, encoding: .utf8), text.contains("-----BEGIN") {
            guard let block = pemBlock("PUBLIC KEY", in: text) else {
                throw ServerAPIError(
                    .invalidRequest,
                    "\(file.path) holds no PEM PUBLIC KEY block (from a certificate: "
                        + "openssl x509 -in cert.pem -pubkey -noout > key.pub)")
            }
            der = block
        } else {
            // DER: a SubjectPublicKeyInfo is an ASN.1 SEQUENCE.
            guard contents.first == 0x30 else {
                throw ServerAPIError(.invalidRequest, "\(file.path) is neither a PEM nor a DER public key")
            }
            der = contents
        }
        var hash = SHA256()
        hash.update(der)
        return Data(hash.finalize()).base64EncodedString()
    }

    /// The bytes of the first PEM block labelled `label` (`-----BEGIN label-----`).
    static func pemBlock(_ label: String, in text: String) -> Data? {
        guard let begin = text.firstRange(of: "-----BEGIN \(label)-----"),
            let end = text[begin.upperBound...].firstRange(of: "-----END \(label)-----")
        else { return nil }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64))
    }

    // MARK: Client certificate

    /// What can be checked without a handshake: the files exist and are readable, PEM files hold a
    /// certificate and a private key, and an encrypted key comes with a passphrase. A wrong passphrase or
    /// a key that does not match shows at the first TLS connection (`clientCertificateProblem`).
    static func check(_ certificate: ClientCertificate) throws(ServerAPIError) {
        func problem(_ sentence: String) -> ServerAPIError {
            .tls(.clientCertificateProblem, sentence)
        }
        func read(_ file: URL, _ role: String) throws(ServerAPIError) -> Data {
            do {
                return try Data(contentsOf: file)
            } catch {
                var failure = problem("the client \(role) file \(file.path) cannot be read")
                failure.underlying = error
                throw failure
            }
        }
        let certificateData = try read(certificate.certificateFile, "certificate")
        var keyData: Data?
        if let keyFile = certificate.keyFile { keyData = try read(keyFile, "key") }
        guard certificate.format == .pem else { return }
        let certificateText = String(decoding: certificateData, as: UTF8.self)
        guard certificateText.contains("-----BEGIN CERTIFICATE-----") else {
            throw problem("\(certificate.certificateFile.path) holds no PEM certificate")
        }
        let keyText = keyData.map { String(decoding: $0, as: UTF8.self) } ?? certificateText
        let keyPath = (certificate.keyFile ?? certificate.certificateFile).path
        guard keyText.contains("PRIVATE KEY-----") else {
            throw problem("\(keyPath) holds no PEM private key")
        }
        let encrypted = keyText.contains("ENCRYPTED PRIVATE KEY-----") || keyText.contains("Proc-Type: 4,ENCRYPTED")
        if encrypted, certificate.passphrase == nil {
            throw problem("the client key \(keyPath) is encrypted and no passphrase was given")
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a tiny positive duration never becomes libcurl's "no limit" 0.
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1000 - 1 else { return Int.max }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: max(1, milliseconds))
    }

    /// A duration from libcurl's microsecond timings.
    static func curlMicroseconds(_ value: Int64) -> Duration { .microseconds(value) }
}
