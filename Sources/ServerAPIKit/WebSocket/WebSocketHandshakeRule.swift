#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The handshake's rules (RFC 6455 §4), once for every transport: the URL a `ws`/`wss` call is sent to,
/// and what an answer must be for the connection to open.
package enum WebSocketHandshakeRule {
    /// The call with its `ws://` or `wss://` URL (or host) written as `http://` or `https://`: the handshake is
    /// an HTTP request, and cookies, plugins and the transport see it as one.
    package static func httpForm(of api: ServerAPI) -> ServerAPI {
        var api = api
        if let url = api.url, let rewritten = httpForm(of: url.absoluteString) {
            api.url = URL(string: rewritten) ?? url
        }
        if let rewritten = httpForm(of: api.host) { api.host = rewritten }
        if let rewritten = httpForm(of: api.path) { api.path = rewritten }
        return api
    }

    /// `text` with a leading `ws://` or `wss://` (any case) written as `http://` or `https://`; `nil` when it
    /// has neither.
    package static func httpForm(of text: String) -> String? {
        let lower = text.prefix(6).lowercased()
        if lower.hasPrefix("wss://") { return "https://" + text.dropFirst(6) }
        if lower.hasPrefix("ws://") { return "http://" + text.dropFirst(5) }
        return nil
    }

    /// `text` with a leading `http://` or `https://` (any case) written as `ws://` or `wss://`, or as it is when it
    /// is a `ws`/`wss` URL already; `nil` for any other scheme. The URL a WebSocket is opened at, as transports that
    /// pick their WebSocket handling by scheme take it (libcurl, URLSession) and as a user reads it.
    package static func webSocketForm(of text: String) -> String? {
        let lower = text.prefix(8).lowercased()
        if lower.hasPrefix("https://") { return "wss://" + text.dropFirst(8) }
        if lower.hasPrefix("http://") { return "ws://" + text.dropFirst(7) }
        if lower.hasPrefix("ws://") || lower.hasPrefix("wss://") { return text }
        return nil
    }

    /// The subprotocols a request offers, from its `Sec-WebSocket-Protocol` headers.
    package static func offeredProtocols(_ headers: HTTPHeaders) -> [String] {
        headers.values(for: "Sec-WebSocket-Protocol").flatMap { $0.split(separator: ",") }.map { trim($0) }
            .filter { !$0.isEmpty }
    }

    /// The extensions a request offers, by name, from its `Sec-WebSocket-Extensions` headers (parameters dropped).
    package static func offeredExtensions(_ headers: HTTPHeaders) -> [String] {
        extensionNames(headers.values(for: "Sec-WebSocket-Extensions"))
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes in base64 (RFC 6455 §4.1), a nonce per handshake. The core
    /// writes it on every handshake request, so that it can check the answer's `Sec-WebSocket-Accept` whatever the
    /// transport (libcurl sends a key the request already has instead of its own).
    package static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: base64 of the SHA-1 of the key and RFC 6455's
    /// GUID.
    package static func accept(forKey key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// Checks the server's answer as RFC 6455 §4.1 says a client must: status 101, `Upgrade: websocket`,
    /// `Connection: Upgrade`, the `Sec-WebSocket-Accept` that proves the server read this handshake's key, a
    /// subprotocol only if the request offered it, and no extension the request did not offer (the frames of one
    /// the client does not know could not be read). Any miss fails the connection before a frame is read.
    /// - Parameters:
    ///   - response: The transport's answer.
    ///   - key: The `Sec-WebSocket-Key` the request carried; `nil` when the transport made its own and checked the
    ///     upgrade's fields itself (`WebSocketUpgrade.handshakeVerified`).
    ///   - offered: The subprotocols the request offered.
    ///   - offeredExtensions: The extensions the request offered (`offeredExtensions(_:)`); none by default.
    /// - Returns: The subprotocol the server chose, if any.
    /// - Throws: `httpStatus` (with the body) for any other status; `network` for an answer that is not
    ///   an upgrade to this WebSocket, or that picks a subprotocol or an extension not offered.
    package static func check(
        _ response: TransportResponse, key: String?, offered: [String], offeredExtensions: [String] = []
    ) throws(ServerAPIError) -> String? {
        guard response.status == 101 else {
            throw ServerAPIError.httpStatus(response.status, body: response.data, url: response.url)
        }
        func refuse(_ what: String) -> ServerAPIError {
            ServerAPIError(
                .network, "the WebSocket handshake's answer \(what) (RFC 6455 §4.1)", url: response.url)
        }
        if let key {
            guard tokens(response.headers.values(for: "Upgrade")).contains("websocket") else {
                throw refuse("has no \"Upgrade: websocket\"")
            }
            guard tokens(response.headers.values(for: "Connection")).contains("upgrade") else {
                throw refuse("has no \"Connection: Upgrade\"")
            }
            let answered = response.headers.values(for: "Sec-WebSocket-Accept")
            guard let value = answered.first else { throw refuse("has no Sec-WebSocket-Accept") }
            guard answered.count == 1, trim(Substring(value)) == accept(forKey: key) else {
                throw refuse("has a Sec-WebSocket-Accept that does not match the request's key")
            }
        }
        let chosenExtensions = extensionNames(response.headers.values(for: "Sec-WebSocket-Extensions"))
        if let unasked = chosenExtensions.first(where: { !offeredExtensions.contains($0) }) {
            throw refuse("chose the extension \"\(unasked)\", which the call did not offer")
        }
        guard let chosen = response.headers["Sec-WebSocket-Protocol"].map({ trim(Substring($0)) }), !chosen.isEmpty
        else { return nil }
        guard offered.contains(chosen) else {
            throw refuse("chose the subprotocol \"\(chosen)\", which the call did not offer")
        }
        return chosen
    }

    /// The comma-separated tokens of header values, trimmed and lower-cased.
    private static func tokens(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { trim($0).lowercased() }
    }

    /// The extension names in `Sec-WebSocket-Extensions` values: `a; x=1, b` is `a` and `b`, lower-cased.
    private static func extensionNames(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }
            .map { trim($0.split(separator: ";", maxSplits: 1).first ?? "").lowercased() }
            .filter { !$0.isEmpty }
    }

    private static func trim(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

extension ServerAPI {
    /// Offers WebSocket subprotocols, in order of preference (`Sec-WebSocket-Protocol`); the server's choice
    /// is `WebSocket.subprotocol`.
    /// - Parameter protocols: The subprotocols, such as `"graphql-transport-ws"`.
    /// - Returns: A copy of the call with the header set.
    public func webSocketProtocols(_ protocols: String...) -> ServerAPI {
        setHeader("Sec-WebSocket-Protocol", protocols.joined(separator: ", "))
    }
}
