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
            if isUnreserved(byte) || "/!$&'()*+,;=:@".utf8.contains(byte) {
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
}
