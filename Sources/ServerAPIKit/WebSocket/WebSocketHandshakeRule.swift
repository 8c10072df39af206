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

    /// Checks the server's answer: status 101, a subprotocol only if the request offered it, and no extension the
    /// request did not offer (RFC 6455 §4.1: the frames of one the client does not know could not be read).
    /// - Parameters:
    ///   - offered: The subprotocols the request offered.
    ///   - offeredExtensions: The extensions the request offered (`offeredExtensions(_:)`); none by default.
    /// - Returns: The subprotocol the server chose, if any.
    /// - Throws: `httpStatus` (with the body) for any other status; `network` for a subprotocol or an extension
    ///   not offered.
    package static func check(
        _ response: TransportResponse, offered: [String], offeredExtensions: [String] = []
    ) throws(ServerAPIError) -> String? {
        guard response.status == 101 else {
            throw ServerAPIError.httpStatus(response.status, body: response.data, url: response.url)
        }
        let chosenExtensions = extensionNames(response.headers.values(for: "Sec-WebSocket-Extensions"))
        if let unasked = chosenExtensions.first(where: { !offeredExtensions.contains($0) }) {
            throw ServerAPIError(
                .network, "the server chose the extension \"\(unasked)\", which the call did not offer",
                url: response.url)
        }
        guard let chosen = response.headers["Sec-WebSocket-Protocol"].map({ trim(Substring($0)) }), !chosen.isEmpty
        else { return nil }
        guard offered.contains(chosen) else {
            throw ServerAPIError(
                .network, "the server chose the subprotocol \"\(chosen)\", which the call did not offer",
                url: response.url)
        }
        return chosen
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
