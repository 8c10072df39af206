internal import CCurl
import ServerAPIKit

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

/// The thread side of a `CurlWebSocketSession`: its easy and multi handles, the handshake's head, the frame
/// decoder and the bytes waiting to be sent.
///
/// - Important: Its thread only, as every libcurl handle the transport owns: it is made, run and released
///   there (`run()`), and libcurl's callbacks find it through an unretained pointer while `run()` holds it.
final class CurlWebSocketDriver {
    private let session: CurlWebSocketSession
    private var status = 0
    private var headers = HTTPHeaders()
    private var refusalBody = Data()
    private var upgraded = false
    private var codec: WebSocketFrameCodec
    /// Why sending failed.
    private var sendFailure: ServerAPIError?
    /// Whether the write callback paused receiving because the core is behind.
    private var receivePaused = false
    /// The easy handle, for the progress callback's sends.
    private var easyRaw: UnsafeMutableRawPointer?
    /// Encoded frames being sent, and how much of the first went out.
    private var pending: [(bytes: Data, sent: Int, written: CheckedContinuation<Void, any Error>?)] = []
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    private let started = ContinuousClock.now

    init(session: CurlWebSocketSession) {
        self.session = session
        codec = WebSocketFrameCodec(
            maxFramePayload: session.request.maxResponseSize.map { Int(clamping: $0) } ?? 16 << 20)
    }

    deinit {
        curl_slist_free_all(headerList)
        curl_slist_free_all(resolveList)
    }

    /// Runs the connection until it ends or the session closes it.
    func run() {
        guard CurlGlobal.initializationFailure == nil, let easy = CurlEasyHandle(), let multi = curl_multi_init()
        else {
            return session.ended(ServerAPIError(.network, "libcurl could not make the WebSocket's handles"))
        }
        // The session cleans the multi handle up when it goes: wake-ups may still arrive after this thread ends.
        session.attach(multi: multi)
        do {
            try configure(easy)
        } catch {
            return session.ended(error)
        }
        _ = curl_multi_add_handle(multi, easy.raw)
        var outcome: ServerAPIError?? = nil
        while outcome == nil {
            // The core's reader, resumed from another thread (a full inbox's reader made room).
            session.run(session.takeJobs())
            let work = session.takeWork()
            pending.append(contentsOf: work.outgoing.map { ($0.bytes, 0, $0.written) })
            if work.close {
                outcome = .some(nil)
                break
            }
            if work.resume, receivePaused {
                receivePaused = false
                _ = curl_easy_pause(easy.raw, CURLPAUSE_CONT)
            } else if upgraded, !pending.isEmpty {
                // Makes libcurl run the transfer on this perform, so that its progress callback sends. libcurl
                // runs no callback of a transfer paused for receiving, so a send unpauses it too: the write
                // callback then takes what arrives beyond the core's buffer, up to `sendingReceiveLimit`.
                receivePaused = false
                _ = curl_easy_pause(easy.raw, CURLPAUSE_CONT)
            }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            if let done = finished(multi, easy) {
                outcome = .some(done)
            } else if let sendFailure {
                outcome = .some(sendFailure)
            }
            guard outcome == nil else { break }
            // The core's reader, resumed by the frames this perform delivered (or by a written frame): it runs now,
            // before the thread sleeps, and what it sends goes out on the next turn.
            session.run(session.takeJobs())
            // Waits for libcurl's sockets or a wake-up; not at all while bytes wait to be sent. Senders wake it
            // only once it said it sleeps.
            let idle = (pending.isEmpty || Self.send == nil) && session.sleepIfIdle()
            _ = curl_multi_poll(multi, nil, 0, idle ? 1000 : 0, nil)
        }
        _ = curl_multi_remove_handle(multi, easy.raw)
        let error = outcome ?? nil
        for item in pending {
            item.written?.resume(throwing: error ?? ServerAPIError(.network, "the WebSocket is closed"))
        }
        pending.removeAll()
        session.ended(error)
        withExtendedLifetime(easy) {}
    }

    /// Sends pending bytes, at most `sendChunk` of them per call; from the progress callback only.
    ///
    /// libcurl 8.14 sends raw bytes outside its callbacks only for a `CURLOPT_CONNECT_ONLY` handle (which would
    /// leave the bytes that arrive with the handshake's answer to its frame decoder); inside a callback it sends
    /// them whole, blocking, and from 8.20 may report 0 bytes sent while doing so. So the bytes go out from the
    /// progress callback, in chunks small enough for a socket's buffer, and a `CURLE_OK` means the chunk went out.
    /// - Returns: `false` to abort the transfer (the failure is in `sendFailure`).
    fileprivate func sendPending() -> Bool {
        guard upgraded, let send = Self.send, let easy = easyRaw else { return true }
        // Frames queued together go out together, up to a chunk per call.
        var budget = Self.sendChunk
        while budget > 0, !pending.isEmpty {
            let item = pending[0]
            let count = min(budget, item.bytes.count - item.sent)
            var sent = 0
            let code = item.bytes.withUnsafeBytes { raw in
                ccurl_ws_send_raw(send, easy, raw.baseAddress! + item.sent, count, &sent)
            }
            guard code == CURLE_OK else {
                if code == CURLE_AGAIN { return true }
                sendFailure = .curl(code, detail: nil)
                return false
            }
            budget -= count
            pending[0].sent += count
            if pending[0].sent == item.bytes.count {
                pending.removeFirst()
                session.wrote(item.bytes.count)
                item.written?.resume()
            }
        }
        return true
    }

    /// The largest piece `sendPending` hands libcurl at once.
    static let sendChunk = 64 << 10
    /// `curl_ws_send` in the loaded libcurl.
    static let send = ccurl_ws_send_symbol()

    /// The transfer's end, if it ended: `.some(nil)` for a clean end, `.some(error)` otherwise.
    private func finished(_ multi: UnsafeMutableRawPointer, _ easy: CurlEasyHandle) -> ServerAPIError?? {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE else { continue }
            let code = message.pointee.data.result
            if !upgraded {
                if status > 0, status != 101 {
                    session.refused(response(body: refusalBody))
                    return .some(nil)
                }
                let route = session.settings.proxy.flatMap { CurlProxyRoute.proxy(for: session.request.url, $0) }
                if let failure = CurlProxy.failure(code, easy: easy, route: route, url: session.request.url) {
                    return .some(failure)
                }
                return .some(.curl(code, detail: easy.errorMessage, status: status))
            }
            return .some(code == CURLE_OK ? nil : .curl(code, detail: easy.errorMessage))
        }
        return nil
    }

    private func response(body: Data) -> TransportResponse {
        TransportResponse(
            status: status, headers: headers, body: .data(body), url: session.request.url,
            metrics: TransportMetrics(transport: "curl", total: ContinuousClock.now - started))
    }

    private func configure(_ easy: CurlEasyHandle) throws(ServerAPIError) {
        let request = session.request
        let settings = session.settings
        let url = request.url
        // libcurl picks its WebSocket handler by the scheme.
        guard let wsURL = WebSocketHandshakeRule.webSocketForm(of: url.absoluteString) else {
            throw ServerAPIError(.invalidRequest, "a WebSocket needs an http(s) or ws(s) URL", url: url)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_URL, wsURL)
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.check(ccurl_easy_setopt_ws_raw_mode(easy.raw), CURLOPT_URL)
        try easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        try easy.set(CURLOPT_FOLLOWLOCATION, false)
        // The connection ends with the WebSocket: none is kept in the multi handle's cache (which lives on with the
        // session, for wake-ups) once the transfer is removed.
        try easy.set(CURLOPT_FORBID_REUSE, true)
        if let connect = request.transfer.connectTimeout ?? settings.connectTimeout {
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, connect.curlMilliseconds)
        }
        if !settings.resolve.isEmpty {
            for entry in settings.resolve { resolveList = curl_slist_append(resolveList, entry) }
            try easy.set(CURLOPT_RESOLVE, list: resolveList)
        }
        try CurlProxy.configure(easy, settings.proxy, caFile: settings.caFile, insecureHosts: settings.insecureHosts)
        if let route = settings.proxy.flatMap({ CurlProxyRoute.proxy(for: url, $0) }), !CurlProxyRoute.isSOCKS(route) {
            // Through an HTTP proxy, in a CONNECT tunnel: a forwarding proxy would not pass the upgrade on. The
            // proxy's answer to CONNECT stays out of the handshake's head.
            try easy.set(CURLOPT_HTTPPROXYTUNNEL, true)
            try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        }
        if let caFile = settings.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        if let host = url.host?.lowercased(), settings.insecureHosts.contains(host) {
            try easy.set(CURLOPT_SSL_VERIFYPEER, false)
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        try CurlTLS(settings.tls).apply(to: easy, host: url.host ?? "")
        // libcurl writes the upgrade's own fields (Upgrade, Connection, Sec-WebSocket-Version) and leaves the
        // request's Sec-WebSocket-Key, the core's, in place of one of its own (the core checks the answer against it).
        for field in request.headers {
            headerList = curl_slist_append(headerList, "\(field.name): \(field.value)")
        }
        try easy.set(CURLOPT_HTTPHEADER, list: headerList)
        try easy.check(
            ccurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, curlWebSocketWriteCallback),
            CURLOPT_WRITEFUNCTION)
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.check(
            ccurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, curlWebSocketHeaderCallback),
            CURLOPT_HEADERFUNCTION)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        try easy.check(
            ccurl_easy_setopt_xferinfo_function(easy.raw, curlWebSocketProgressCallback), CURLOPT_XFERINFOFUNCTION)
        try easy.set(CURLOPT_XFERINFODATA, pointer: context)
        try easy.set(CURLOPT_NOPROGRESS, false)
        // Reads of up to 64 KiB: a stream of messages costs fewer reads and callbacks than with the 16 KiB default.
        try easy.set(CURLOPT_BUFFERSIZE, 64 << 10)
        easyRaw = easy.raw
    }

    // MARK: Callbacks

    fileprivate func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self)
        let trimmed = line.trimmingTrailingWhitespace()
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = HTTPHeaders()
            return
        }
        if trimmed.isEmpty {
            if status == 101, !upgraded {
                upgraded = true
                session.upgraded(response(body: Data()))
            }
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = String(trimmed[..<colon])
        let value = String(trimmed[trimmed.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
        headers.add(name: name, value: value)
    }

    /// - Returns: `nil` to take the bytes, `pause` to leave them with libcurl, `false` to abort.
    fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard upgraded else {
            refusalBody.append(contentsOf: bytes.prefix(max(0, 4096 - refusalBody.count)))
            return bytes.count
        }
        // Bytes offered while the core is behind stay with libcurl until the session resumes the transfer.
        if session.shouldPause(sending: !pending.isEmpty) {
            receivePaused = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        do {
            session.deliver(try codec.decode(bytes))
        } catch {
            // The connection stays up for the core's close frame with the failure's code; what arrives after
            // the failure is dropped (the decoder takes nothing more).
            session.failReceiving(
                ServerAPIError(
                    error.code == .messageTooBig ? .responseTooLarge : .network,
                    "\(error.message) (closed with \(error.code))", underlying: error))
        }
        return bytes.count
    }
}

private func driver(_ context: UnsafeMutableRawPointer) -> CurlWebSocketDriver {
    Unmanaged<CurlWebSocketDriver>.fromOpaque(context).takeUnretainedValue()
}

/// CURLOPT_WRITEFUNCTION of a WebSocket: the connection's raw bytes after the handshake.
func curlWebSocketWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context else { return 0 }
    guard let data, length > 0 else { return length }
    return driver(context).receive(UnsafeRawBufferPointer(start: data, count: length))
}

/// CURLOPT_HEADERFUNCTION of a WebSocket: the handshake's response head, a line at a time.
func curlWebSocketHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context, let data else { return 0 }
    driver(context).receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    return length
}

/// CURLOPT_XFERINFOFUNCTION of a WebSocket: where its bytes are sent (see `CurlWebSocketDriver.sendPending`).
func curlWebSocketProgressCallback(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloadNow: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploadNow: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    return driver(context).sendPending() ? 0 : 1
}
