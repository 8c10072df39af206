internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
    /// response, read by the core's decoder to see where the body ends (see `CurlTransfer+Duplex`).
    var chunkDecoder: ChunkedDecoder?
    /// The response of a full-duplex call ended while its request body was still being sent: the body's
    /// stream has ended, and the request body ends at its next read.
    var responseEndedFirst = false

    /// The download writer, for a call with a download target.
    var download: (any CurlDownloadWriting)?

    /// A Digest challenge libcurl is answering itself in this hop (see `CurlTransfer+Credentials`).
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
