/// Percent-encoding as RFC 3986 defines it: everything but unreserved characters is escaped.
enum PercentEncoding {
    /// Encodes a query name or value: only `A–Z a–z 0–9 - . _ ~` stay as they are, so `+`, `&`,
    /// `=`, `/`, spaces and every non-ASCII byte are escaped.
    static func encode(_ string: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes a form field: as `encode`, so a space becomes `%20` (which every server reads).
    static func formEncode(_ string: String) -> String { encode(string) }

    /// Encodes a path: unreserved characters, `/` and sub-delimiters that are safe in a path stay;
    /// anything already percent-encoded (`%XX`) is kept.
    static func encodePath(_ string: String) -> String {
        // Most paths need no escape: they come back as they are, without copying their bytes.
        if string.utf8.allSatisfy({ isUnreserved($0) || isPathSafe($0) }) { return string }
        let bytes = Array(string.utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) {
                out.append(contentsOf: bytes[index...(index + 2)])
                index += 3
                continue
            }
            if isUnreserved(byte) || isPathSafe(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `/` and the sub-delimiters that are safe in a path: `!$&'()*+,;=:@`.
    private static func isPathSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
            UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            true
        default: false
        }
    }

    /// Encodes a whole URL as written (RFC 3986): every existing `%XX` escape is kept as it is, and only
    /// what may not appear in a URL is escaped: spaces, control characters, `"<>\\^`{|}`, non-ASCII bytes,
    /// a `%` that starts no escape (as `%25`), any `#` after the first, and `[` `]` outside the host. The
    /// authority (`user:password@host:port`) is left as it is, for URL's parser to accept or refuse. Reserved characters keep their
    /// meaning. A valid URL comes back unchanged, so encoding twice changes nothing.
    ///
    /// Foundation's `URL(string:)` escapes every `%` of a string that needs any escape (`/a%2Fb c` becomes
    /// `/a%252Fb%20c`); every URL the core makes from text goes through this rule first, so the same bytes
    /// reach the wire with every transport.
    /// - Parameter string: The URL as written.
    /// - Returns: The URL with the characters it may not contain escaped.
    static func encodeURL(_ string: String) -> String {
        // Most URLs have only bytes no rule looks at twice (no `%`, `#` or brackets): returned as they are,
        // with nothing allocated.
        if string.utf8.allSatisfy({ isUnreserved($0) || isPlainReserved($0) }) { return string }
        let input = Array(string.utf8)
        let authority = authorityRange(input)
        // Whether the byte at `position` may stay; `seenHash` says whether a `#` came before it.
        func keeps(_ position: Int, seenHash: Bool) -> Bool {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "%"):
                return position + 2 < input.count && isHex(input[position + 1]) && isHex(input[position + 2])
            case UInt8(ascii: "#"):
                return !seenHash
            case _ where authority.contains(position):
                // The authority is left to URL's parser, which refuses a host that is not one (a space, say).
                return true
            case UInt8(ascii: "["), UInt8(ascii: "]"):
                // Brackets enclose an IPv6 host; anywhere else they are escaped.
                return false
            default:
                return isUnreserved(byte) || isPlainReserved(byte)
            }
        }
        // Most URLs need nothing: the text is returned as it is.
        var seenHash = false
        var first: Int?
        for position in input.indices {
            if !keeps(position, seenHash: seenHash) {
                first = position
                break
            }
            if input[position] == UInt8(ascii: "#") { seenHash = true }
        }
        guard let first else { return string }
        var out = Array(input[..<first])
        out.reserveCapacity(input.count + 16)
        for position in first..<input.count {
            let byte = input[position]
            if keeps(position, seenHash: seenHash) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
            if byte == UInt8(ascii: "#") { seenHash = true }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Where the authority (`user@host:port`) of a URL's bytes is: after `scheme://`, up to the first `/`,
    /// `?` or `#`; empty when the text has no `://` before its path.
    private static func authorityRange(_ bytes: [UInt8]) -> Range<Int> {
        var index = 0
        while index + 2 < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") {
                guard bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else { break }
                let start = index + 3
                var end = start
                while end < bytes.count, !"/?#".utf8.contains(bytes[end]) { end += 1 }
                return start..<end
            }
            // A scheme is letters, digits, `+`, `-` and `.`: anything else means there is none.
            guard isUnreserved(byte) || byte == UInt8(ascii: "+") else { break }
            index += 1
        }
        return 0..<0
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    /// Whether a byte is a reserved character (RFC 3986 gen-delims and sub-delims) other than `#`, `[` and
    /// `]`: one that may stay anywhere in a URL.
    private static func isPlainReserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "!"),
            UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default: false
        }
    }
}
