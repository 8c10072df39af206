#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPIManager {
    /// Opens a WebSocket described by a call: `ws://` and `wss://` URLs, or `http(s)://` ones upgraded.
    ///
    /// ```swift
    /// let socket = try await manager.webSocket(
    ///     ServerAPI(url: URL(string: "wss://chat.example/room")!).webSocketProtocols("chat.v2").tag("chat"))
    /// try await socket.send(.text("hello"))
    /// for try await message in socket.messages { print(message) }
    /// ```
    /// The handshake is a call like any other: the manager's default headers and cookies, the plugins'
    /// `prepare` and `willSend` (an auth header, a signature), and the call's `timeout`, which bounds the
    /// handshake only. A refused upgrade (401, 404, …) throws `httpStatus` with an excerpt of the body; an answer
    /// that is not an upgrade to this WebSocket (no `Upgrade: websocket` or `Connection: Upgrade`, a
    /// `Sec-WebSocket-Accept` that does not match the key the core sent, an extension or subprotocol not offered)
    /// throws `network` before any message is read (RFC 6455 §4.1). The
    /// connection stays in `inFlight` while it is open, so `cancel(id:)`, `cancel(tag:)`, first, last and all
    /// close it and end its `messages` with `cancelled`; plugins' `didComplete` runs when it ends.
    ///
    /// With `reconnection`, a connection that drops is made again, with backoff, and `messages` goes on across
    /// connections (see `WebSocket.Reconnection`); each connection is a call of its own for the plugins.
    /// - Parameters:
    ///   - api: The call that describes the handshake.
    ///   - configuration: The connection's limits and keep-alive.
    ///   - reconnection: How to reconnect after a drop; `nil` (the default) never reconnects.
    /// - Returns: The open connection.
    /// - Throws: `ServerAPIError`: `unsupported` when the transport has no WebSockets, `httpStatus`,
    ///   `timedOut`, `cancelled`, `cannotConnect`, `tls`, …
    public func webSocket(
        _ api: ServerAPI, configuration: WebSocket.Configuration = .init(), reconnection: WebSocket.Reconnection? = nil
    ) async throws -> WebSocket {
        let api = WebSocketHandshakeRule.httpForm(of: api)
        let link = try await openWebSocket(api, configuration: configuration)
        let reconnector = reconnection.map { policy in
            WebSocket.Reconnector(
                policy: policy,
                open: { [self] in try await openWebSocket(api, configuration: configuration) },
                wait: { [self] delay in try await waitRegistered(delay, for: api) })
        }
        return WebSocket(
            link: link, configuration: configuration, clock: self.configuration.clock, reconnector: reconnector)
    }

    /// Makes one connection: the handshake as a call, which stays in flight until the connection ends.
    /// - Parameter api: The call, its URL already in its `http(s)` form.
    func openWebSocket(_ api: ServerAPI, configuration: WebSocket.Configuration) async throws -> WebSocket.Link {
        if let compression = configuration.compression {
            do {
                try WebSocketDeflateNegotiation.validate(compression)
            } catch {
                throw error.with(requestID: api.id, url: nil)
            }
        }
        // permessage-deflate is offered when the transport carries the frames' RSV1: the core compresses.
        let compression = transport.carriesWebSocketExtensions ? configuration.compression : nil
        // The steps a handshake shares with every call: accepted and listed as a streamed call is, and prepared as
        // an attempt is (default headers, cookies, the plugins).
        let call = try accept(api, progress: nil, streams: true)
        call.stampAttempt(1)
        var request = attemptRequest(call.request, number: 1, of: call)
        // A transport that frames bytes itself holds a frame to the message limit as it arrives.
        request.maxResponseSize = Int64(configuration.maxMessageSize)
        let key = WebSocketHandshakeRule.newKey()
        let timedOut = Locked(false)
        let clock = self.configuration.clock
        let timeout = request.timeout
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            timedOut.withLock { $0 = true }
            call.cancel(.all)
        }
        let upgrade: WebSocketUpgrade
        let subprotocol: String?
        var deflate: WebSocketDeflateParameters?
        do {
            defer { timer.cancel() }
            do {
                if !plugins.isEmpty { try await prepareByPlugins(&request, api: api) }
                // The key is the core's, after the plugins, so that the answer can be checked against it whatever
                // the transport (WebSocketHandshakeRule.check).
                request.headers["Sec-WebSocket-Key"] = key
                if let compression {
                    request.headers.add(
                        name: "Sec-WebSocket-Extensions", value: WebSocketDeflateNegotiation.offer(compression))
                }
                if !request.isPrepared { try request.prepare() }
                for plugin in plugins { plugin.willSend(request, for: api) }
                if request.isCancelled { throw ServerAPIError.cancelled() }
                upgrade = try await transport.webSocket(request)
            } catch {
                var failure = ServerAPIError.wrap(error)
                if failure.kind == .cancelled, timedOut.withLock({ $0 }) {
                    failure = ServerAPIError(.timedOut, "the WebSocket handshake took longer than \(timeout)")
                }
                throw failedExchange(failure, request: request, api: api)
            }
            received(upgrade.response, request: request, call, api: api)
            do {
                subprotocol = try WebSocketHandshakeRule.check(
                    upgrade.response, key: upgrade.handshakeVerified ? nil : key,
                    offered: WebSocketHandshakeRule.offeredProtocols(request.headers),
                    offeredExtensions: WebSocketHandshakeRule.offeredExtensions(request.headers))
                if let compression {
                    do {
                        deflate = try WebSocketDeflateNegotiation.agreed(upgrade.response.headers, offered: compression)
                    } catch {
                        throw ServerAPIError(
                            .network, "the WebSocket handshake's answer \(error) (RFC 7692 §7.1)",
                            url: upgrade.response.url, underlying: error)
                    }
                }
                guard upgrade.connection != nil else {
                    throw ServerAPIError(.network, "the transport returned no connection")
                }
            } catch {
                upgrade.connection?.close()
                throw error
            }
        } catch {
            throw complete(call, ServerAPIError.wrap(error).with(requestID: api.id, url: request.url))
        }
        guard let connection = upgrade.connection else { throw ServerAPIError(.network, "unreachable") }
        let url = request.url
        // The connection's end, on another thread, works on this copy: the call's own metrics stay with this task.
        let headMetrics = call.metrics
        call.headReceived()
        call.bodyStreaming()
        var compressor: WebSocketCompressingSender?
        if let deflate, let compression {
            compressor = WebSocketCompressingSender(WebSocketDeflateSender(client: deflate, compression: compression))
        }
        return WebSocket.Link(
            connection: connection, response: upgrade.response, subprotocol: subprotocol, call: call,
            deflate: deflate, compressor: compressor
        ) { [self] error in
            let metrics = endMetrics(headMetrics, call: call)
            if let error {
                _ = complete(call, error.with(requestID: api.id, url: url), metrics: metrics)
            } else {
                completeSucceeded(call, metrics: metrics)
            }
        }
    }
}
