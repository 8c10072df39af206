import Foundation

@testable import ServerAPIKit

/// Text decoding by the charset a `Content-Type` declares: strict, and consistent with the UTF-8 the
/// JSON scanner is given.
enum CharsetHarness {
    /// Input: a `Content-Type` line, then the body.
    static func run(_ data: Data) {
        let (fields, body) = data.lines(1)
        let charset: TextCharset
        do {
            charset = try TextCharset.declared(by: fields[0])
        } catch {
            require(error.kind == .decoding, "an unknown charset threw \(error)", input: data)
            require(TextCharset.label(inContentType: fields[0]) != nil, "no label, yet no UTF-8", input: data)
            return
        }
        let text: String
        do {
            text = try charset.decode(body)
        } catch {
            require(error.kind == .decoding, "bad text threw \(error)", input: data)
            switch charset {
            case .latin1, .windows1252: require(false, "\(charset) never fails, yet: \(error)", input: data)
            default: break
            }
            return
        }
        do {
            let utf8 = try charset.utf8Bytes(body)
            if charset == .utf8 {
                let expected = body.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(body.dropFirst(3)) : body
                require(Data(text.utf8) == expected, "UTF-8 text is not its own bytes", input: data)
            } else {
                require(utf8 == Data(text.utf8), "utf8Bytes differs from the decoded text", input: data)
            }
        } catch {
            require(false, "decoded, but utf8Bytes threw \(error)", input: data)
        }
        if charset == .latin1 {
            require(text.unicodeScalars.count == body.count, "Latin-1 is one scalar per byte", input: data)
        }
    }
}
