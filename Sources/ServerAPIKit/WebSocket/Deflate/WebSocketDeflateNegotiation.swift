#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a connection agreed for permessage-deflate (RFC 7692): each direction's window and whether it compresses
/// each message on its own.
package struct WebSocketDeflateParameters: Sendable, Hashable {
    /// The window the client compresses with, 8–15 (8: the client sends uncompressed, as zlib cannot compress
    /// with a window of 256 bytes).
    package var clientMaxWindowBits: Int
    /// The window the server compresses with at most, 8–15: the client's inflater's window.
    package var serverMaxWindowBits: Int
    /// Whether the client resets its compressor after each message.
    package var clientNoContextTakeover: Bool
    /// Whether the server resets its compressor after each message (the client may then reset its inflater).
    package var serverNoContextTakeover: Bool

    /// Creates a set of parameters; the defaults are RFC 7692's when the answer says nothing.
    package init(
        clientMaxWindowBits: Int = 15, serverMaxWindowBits: Int = 15, clientNoContextTakeover: Bool = false,
        serverNoContextTakeover: Bool = false
    ) {
        self.clientMaxWindowBits = clientMaxWindowBits
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverNoContextTakeover = serverNoContextTakeover
    }
}

/// permessage-deflate's negotiation (RFC 7692 §5, §7.1), once for every transport: the client's offer, and what the
/// server's answer agrees to, or why it fails the handshake.
package enum WebSocketDeflateNegotiation {
    /// The extension's name in `Sec-WebSocket-Extensions`.
    package static let name = "permessage-deflate"

    /// Why a server's answer fails the handshake (RFC 7692 §7.1: "a client MUST _Fail the WebSocket Connection_").
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// `Sec-WebSocket-Extensions` is not a list of extensions with parameters (RFC 6455 §9.1).
        case malformed(String)
        /// permessage-deflate is answered more than once.
        case repeatedExtension
        /// A parameter RFC 7692 does not define for an answer.
        case unknownParameter(String)
        /// A parameter given twice.
        case repeatedParameter(String)
        /// A parameter with a value it may not have (or without one it needs).
        case invalidValue(parameter: String, value: String?)
        /// `client_max_window_bits` in an answer to an offer without it.
        case clientWindowNotOffered
        /// `server_max_window_bits` missing, or above what the client asked for.
        case serverWindowNotHonoured(asked: Int, answered: Int?)
        /// `server_no_context_takeover` missing although the client asked for it.
        case serverContextTakeoverNotHonoured

        package var description: String {
            switch self {
            case .malformed(let value): "has a Sec-WebSocket-Extensions that cannot be read (\"\(value)\")"
            case .repeatedExtension: "accepts permessage-deflate more than once"
            case .unknownParameter(let name):
                "gives permessage-deflate the parameter \"\(name)\", which it does not have"
            case .repeatedParameter(let name): "gives permessage-deflate's \"\(name)\" more than once"
            case .invalidValue(let name, let value?):
                "gives permessage-deflate's \"\(name)\" the value \"\(value)\", which it may not have"
            case .invalidValue(let name, nil): "gives permessage-deflate's \"\(name)\" no value, where it needs one"
            case .clientWindowNotOffered: "sets client_max_window_bits, which the client did not offer"
            case .serverWindowNotHonoured(let asked, let answered?):
                "sets server_max_window_bits=\(answered), more than the \(asked) the client asked for"
            case .serverWindowNotHonoured(let asked, nil):
                "accepts permessage-deflate without the server_max_window_bits=\(asked) the client asked for"
            case .serverContextTakeoverNotHonoured:
                "accepts permessage-deflate without the server_no_context_takeover the client asked for"
            }
        }
    }

    /// Checks a configuration before it is offered.
    /// - Throws: `invalidRequest` for a window or level out of range, or a negative minimum size.
    package static func validate(_ compression: WebSocket.Compression) throws(ServerAPIError) {
        func refuse(_ what: String) -> ServerAPIError {
            ServerAPIError(.invalidRequest, "WebSocket.Compression.\(what)")
        }
        guard (9...15).contains(compression.clientMaxWindowBits) else {
            throw refuse("clientMaxWindowBits is \(compression.clientMaxWindowBits); it must be 9 to 15")
        }
        if let bits = compression.serverMaxWindowBits, !(8...15).contains(bits) {
            throw refuse("serverMaxWindowBits is \(bits); it must be 8 to 15")
        }
        guard (1...9).contains(compression.level) else {
            throw refuse("level is \(compression.level); it must be 1 to 9")
        }
        guard compression.minimumSize >= 0 else {
            throw refuse("minimumSize is \(compression.minimumSize); it must be 0 or more")
        }
    }

    /// The `Sec-WebSocket-Extensions` value that offers `compression`: `permessage-deflate; client_max_window_bits`
    /// by default.
    package static func offer(_ compression: WebSocket.Compression) -> String {
        var offer = name
        if compression.clientNoContextTakeover { offer += "; client_no_context_takeover" }
        if compression.serverNoContextTakeover { offer += "; server_no_context_takeover" }
        // Bare, the parameter says the client can take a smaller window from the server (RFC 7692 §7.1.2.2).
        offer += "; client_max_window_bits"
        if compression.clientMaxWindowBits < 15 { offer += "=\(compression.clientMaxWindowBits)" }
        if let bits = compression.serverMaxWindowBits { offer += "; server_max_window_bits=\(bits)" }
        return offer
    }

    /// What the server's answer agrees to, for an offer made with `offer(_:)`.
    /// - Parameters:
    ///   - headers: The answer's headers.
    ///   - offered: The configuration the client offered.
    /// - Returns: The agreed parameters; `nil` when the server declined (its answer has no permessage-deflate).
    /// - Throws: `Failure` for an answer a client must fail the connection for (RFC 7692 §7.1).
    package static func agreed(
        _ headers: HTTPHeaders, offered: WebSocket.Compression
    ) throws(Failure) -> WebSocketDeflateParameters? {
        let answers = try extensions(headers.values(for: "Sec-WebSocket-Extensions")).filter {
            $0.name.lowercased() == name
        }
        guard let answer = answers.first else { return nil }
        guard answers.count == 1 else { throw .repeatedExtension }
        var agreed = WebSocketDeflateParameters(
            clientMaxWindowBits: offered.clientMaxWindowBits, clientNoContextTakeover: offered.clientNoContextTakeover)
        var seen: Set<String> = []
        var serverWindow: Int?
        for item in answer.parameters {
            let (parameter, value) = (item.name, item.value)
            let key = parameter.lowercased()
            guard seen.insert(key).inserted else { throw .repeatedParameter(parameter) }
            switch key {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { throw .invalidValue(parameter: parameter, value: value) }
                if key == "server_no_context_takeover" {
                    agreed.serverNoContextTakeover = true
                } else {
                    agreed.clientNoContextTakeover = true
                }
            case "server_max_window_bits":
                let bits = try windowBits(parameter, value)
                serverWindow = bits
                agreed.serverMaxWindowBits = bits
            case "client_max_window_bits":
                // offer(_:) always offers it; an answer may only lower the client's window.
                let bits = try windowBits(parameter, value)
                agreed.clientMaxWindowBits = min(bits, offered.clientMaxWindowBits)
            default:
                throw .unknownParameter(parameter)
            }
        }
        if let asked = offered.serverMaxWindowBits {
            // RFC 7692 §7.1.2.1: a server accepts the parameter by answering it, with the same or a smaller value.
            guard let serverWindow, serverWindow <= asked else {
                throw .serverWindowNotHonoured(asked: asked, answered: serverWindow)
            }
        }
        if offered.serverNoContextTakeover, !agreed.serverNoContextTakeover {
            throw .serverContextTakeoverNotHonoured
        }
        return agreed
    }

    /// What an answer agreed, read without the offer (the offer was `offer(.default)` or asked for less): for
    /// those who watch a connection the core negotiated (a recording, a replay, a mock server). `nil` when the answer
    /// has no permessage-deflate or cannot be read.
    package static func answered(_ headers: HTTPHeaders) -> WebSocketDeflateParameters? {
        try? agreed(headers, offered: .default)
    }

    /// `headers` without permessage-deflate in `Sec-WebSocket-Extensions` (the header goes when nothing else is in
    /// it): an answer replayed to a client that did not offer compression. A value that cannot be read is kept.
    package static func declined(_ headers: HTTPHeaders) -> HTTPHeaders {
        let values = headers.values(for: "Sec-WebSocket-Extensions")
        guard !values.isEmpty, let elements = try? extensions(values) else { return headers }
        let kept = elements.filter { $0.name.lowercased() != name }
        guard kept.count < elements.count else { return headers }
        var headers = headers
        headers.remove(name: "Sec-WebSocket-Extensions")
        guard !kept.isEmpty else { return headers }
        let text = kept.map { element in
            ([element.name]
                + element.parameters.map { parameter in
                    parameter.value.map { "\(parameter.name)=\"\($0)\"" } ?? parameter.name
                }).joined(separator: "; ")
        }
        headers.add(name: "Sec-WebSocket-Extensions", value: text.joined(separator: ", "))
        return headers
    }

    /// A window size: a decimal 8–15 without leading zeros (RFC 7692 §7.1.2).
    private static func windowBits(_ parameter: String, _ value: String?) throws(Failure) -> Int {
        guard let value, let bits = Int(value), (8...15).contains(bits), value == String(bits) else {
            throw .invalidValue(parameter: parameter, value: value)
        }
        return bits
    }

    /// One element of `Sec-WebSocket-Extensions`: a name and its parameters, values unquoted.
    package struct Element: Sendable, Hashable {
        /// One parameter: `name` or `name=value`.
        package struct Parameter: Sendable, Hashable {
            package var name: String
            package var value: String?
        }

        package var name: String
        package var parameters: [Parameter] = []
    }

    /// The elements of `Sec-WebSocket-Extensions` values (RFC 6455 §9.1): `extension *( ";" param [ "=" value ] )`,
    /// comma-separated, a value a token or a quoted string whose content is a token.
    /// - Throws: `malformed` for anything else.
    package static func extensions(_ values: [String]) throws(Failure) -> [Element] {
        var elements: [Element] = []
        for value in values {
            var scanner = Scanner(Array(value.utf8))
            while true {
                scanner.skipSpace()
                if scanner.atEnd { break }
                // Empty list elements (", ,") are allowed by the list syntax (RFC 9110 §5.6.1).
                if scanner.take(UInt8(ascii: ",")) { continue }
                guard let name = scanner.token() else { throw .malformed(value) }
                var element = Element(name: name)
                scanner.skipSpace()
                while scanner.take(UInt8(ascii: ";")) {
                    scanner.skipSpace()
                    guard let parameter = scanner.token() else { throw .malformed(value) }
                    scanner.skipSpace()
                    var parameterValue: String?
                    if scanner.take(UInt8(ascii: "=")) {
                        scanner.skipSpace()
                        guard let read = scanner.token() ?? scanner.quoted(), !read.isEmpty,
                            read.utf8.allSatisfy(Scanner.isTokenByte)
                        else { throw .malformed(value) }
                        parameterValue = read
                        scanner.skipSpace()
                    }
                    element.parameters.append(Element.Parameter(name: parameter, value: parameterValue))
                }
                elements.append(element)
                guard scanner.atEnd || scanner.take(UInt8(ascii: ",")) else { throw .malformed(value) }
            }
        }
        return elements
    }

    /// Reads the header's grammar byte by byte.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func token() -> String? {
            let start = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted string's content, its escapes undone; `nil` when there is none or it does not end.
        mutating func quoted() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var content: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") { return String(decoding: content, as: UTF8.self) }
                if byte == UInt8(ascii: "\\") {
                    guard index < bytes.count else { return nil }
                    content.append(bytes[index])
                    index += 1
                } else {
                    content.append(byte)
                }
            }
            return nil
        }

        /// RFC 9110's tchar: visible ASCII other than delimiters.
        static func isTokenByte(_ byte: UInt8) -> Bool {
            guard byte > 0x20, byte < 0x7F else { return false }
            return !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
        }
    }
}
