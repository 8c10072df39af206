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
    /// handshake only. A refused upgrade (401, 404, …) throws `httpStatus` with an excerpt of the body. The
    /// connection stays in `inFlight` while it is open, so `cancel(id:)`, `cancel(tag:)`, first, last and all
    /// close it and end its `messages` with `cancelled`; plugins' `didComplete` runs when it ends.
    /// - Parameters:
    ///   - api: The call that describes the handshake.
    ///   - configuration: The connection's limits and keep-alive.
    /// - Returns: The open connection.
    /// - Throws: `ServerAPIError`: `unsupported` when the transport has no WebSockets, `httpStatus`,
    ///   `timedOut`, `cancelled`, `cannotConnect`, `tls`, …
    public func webSocket(_ api: ServerAPI, configuration: WebSocket.Configuration = .init()) async throws
        -> WebSocket
    {
        let api = WebSocketHandshakeRule.httpForm(of: api)
        // The steps a handshake shares with every call, in one place.
        let (call, resolved) = try webSocketCall(api)
        var request = resolved
        // A transport that frames bytes itself holds a frame to the message limit as it arrives.
        request.maxResponseSize = Int64(configuration.maxMessageSize)
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
        do {
            defer { timer.cancel() }
            do {
                try await prepareWebSocket(&request, api: api)
                if request.isCancelled { throw ServerAPIError.cancelled() }
                upgrade = try await transport.webSocket(request)
            } catch {
                var failure = ServerAPIError.wrap(error)
                if failure.kind == .cancelled, timedOut.withLock({ $0 }) {
                    failure = ServerAPIError(.timedOut, "the WebSocket handshake took longer than \(timeout)")
                }
                for plugin in plugins { plugin.didReceive(.failure(failure), for: request, api: api) }
                throw failure
            }
            request.cookies?.storage.store(responseHeaders: upgrade.response.headers, from: upgrade.response.url)
            for plugin in plugins { plugin.didReceive(.success(upgrade.response), for: request, api: api) }
            do {
                subprotocol = try WebSocketHandshakeRule.check(
                    upgrade.response, offered: WebSocketHandshakeRule.offeredProtocols(request.headers))
                guard upgrade.connection != nil else {
                    throw ServerAPIError(.network, "the transport returned no connection")
                }
            } catch {
                upgrade.connection?.close()
                throw error
            }
        } catch {
            let failure = ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
            endWebSocketCall(call, api: api, error: failure)
            throw failure
        }
        guard let connection = upgrade.connection else { throw ServerAPIError(.network, "unreachable") }
        let url = request.url
        let socket = WebSocket(
            connection: connection, response: upgrade.response, subprotocol: subprotocol, configuration: configuration,
            clock: self.configuration.clock
        ) { [self] error in
            endWebSocketCall(call, api: api, error: error?.with(requestID: api.id, url: url))
        }
        call.headReceived()
        call.bodyStreaming()
        call.onCancel { [weak socket] in socket?.cancel() }
        return socket
    }

    /// Lists a handshake in the in-flight registry as a `Call`, with its resolved request.
    @inline(never)
    private func webSocketCall(_ api: ServerAPI) throws -> (Call, TransportRequest) {
        var request = try api.transportRequest()
        let call = Call(api: api, request: request, registry: registry)
        request.call = call
        registerCall(call, for: api)
        return (call, request)
    }

    /// A handshake's request as every call's attempt makes it: the default headers and cookies, then the
    /// plugins' `prepare` and `willSend`.
    private func prepareWebSocket(_ request: inout TransportRequest, api: ServerAPI) async throws {
        for field in configuration.defaultHeaders where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        if let storage = configuration.cookies { request.attachCookies(storage) }
        for plugin in plugins { request = try await plugin.prepare(request, for: api) }
        if !request.isPrepared { try request.prepare() }
        for plugin in plugins { plugin.willSend(request, for: api) }
    }

    /// Ends a WebSocket's call, once: it leaves the registry and the plugins' `didComplete` sees it.
    private func endWebSocketCall(_ call: Call, api: ServerAPI, error: ServerAPIError?) {
        guard call.end(failed: error != nil), !plugins.isEmpty else { return }
        let now = Date()
        var metrics = RequestMetrics(attempts: 1, startedAt: call.info.startedAt)
        metrics.endedAt = now
        metrics.duration = .seconds(now.timeIntervalSince(call.info.startedAt))
        var failure = error
        failure?.metrics = metrics
        for plugin in plugins { plugin.didComplete(api, metrics: metrics, error: failure) }
    }
}
