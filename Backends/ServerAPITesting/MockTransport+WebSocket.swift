@_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockTransport {
    /// Answers a WebSocket handshake from the request's stub: a `MockStub.webSocket` stub opens a connection
    /// whose server plays its script; any other stub is the server's refusal (its status, headers and body).
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        let stub = try await answer(request)
        switch stub.outcome {
        case .failure(let error):
            throw error.with(requestID: request.id, url: request.url)
        case .response(let status, let headers, let body):
            var response = TransportResponse(
                status: status, headers: headers, body: .data(body), url: request.url,
                metrics: TransportMetrics(transport: name))
            guard status == 101, let script = stub.webSocket else {
                return WebSocketUpgrade(response: response, connection: nil)
            }
            // A scripted server proves it read the handshake, as a real one does, unless the stub answers with an
            // accept of its own (a test of a server that does not).
            if response.headers["Sec-WebSocket-Accept"] == nil, let key = request.headers["Sec-WebSocket-Key"] {
                response.headers["Sec-WebSocket-Accept"] = WebSocketHandshakeRule.accept(forKey: key)
            }
            // The server takes a permessage-deflate offer as the script says, and compresses as its answer agreed.
            var deflate: WebSocketDeflateParameters?
            if let answer = script.compression,
                WebSocketHandshakeRule.offeredExtensions(request.headers).contains(WebSocketDeflateNegotiation.name)
            {
                response.headers.add(name: "Sec-WebSocket-Extensions", value: answer)
                deflate = WebSocketDeflateNegotiation.answered(response.headers)
            }
            let connection = MockWebSocketConnection()
            let server = MockWebSocketServer(
                connection: connection, script: script, deflate: deflate, clock: clock,
                mismatch: { [weak self] in self?.recordWebSocketMismatch($0) },
                closed: { [weak self] in self?.recordWebSocketClose($0) })
            Task { await server.run() }
            return WebSocketUpgrade(response: response, connection: connection)
        case .stream(let status, let headers, _):
            return WebSocketUpgrade(
                response: TransportResponse(
                    status: status, headers: headers, body: .data(Data()), url: request.url,
                    metrics: TransportMetrics(transport: name)),
                connection: nil)
        }
    }
}
