import Foundation

@testable import ServerAPIKit

/// The JSON scanner, cursor and parser: they agree on validity, a parsed value re-encoded parses to the
/// same value, and the scanner finds at a key path what the parsed tree has there.
enum JSONHarness {
    static func run(_ data: Data) {
        let scanned = Result { () throws(ServerAPIError) in try JSONScanner.validate(data) }
        let parsed = Result { () throws(ServerAPIError) in try JSONValue(parsing: data) }
        switch (scanned, parsed) {
        case (.success, .success(let value)):
            checkRoundTrip(value, data)
            checkLookup(value, data)
        case (.failure(let scanError), .failure(let parseError)):
            require(scanError.kind == .decoding, "the scanner threw \(scanError)", input: data)
            require(parseError.kind == .decoding, "the parser threw \(parseError)", input: data)
        case (.success, .failure(let error)):
            // Valid JSON may hold a number too large for a Double: only the parser has to make one.
            require(
                error.message.contains("does not fit in a Double"),
                "the scanner accepted what the parser rejects: \(error)", input: data)
        case (.failure(let error), .success):
            require(false, "the parser accepted what the scanner rejects: \(error)", input: data)
        }
    }

    /// Encoded by `JSONEncoder` and parsed again, a value is the same (numbers compared by value:
    /// `1.0` is written `1`, which reads back as an integer).
    static func checkRoundTrip(_ value: JSONValue, _ data: Data) {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(value)
        } catch {
            require(false, "a parsed value does not encode: \(error)", input: data)
            return
        }
        do {
            let again = try JSONValue(parsing: encoded)
            require(
                same(value, again),
                "re-encoded as \(String(decoding: encoded, as: UTF8.self)) it reads back as \(again), not \(value)",
                input: data)
        } catch {
            require(
                false, "the re-encoded value \(String(decoding: encoded, as: UTF8.self)) does not parse: \(error)",
                input: data)
        }
    }

    /// Down the first member or element at each level (and the last, for an array), the scanner's lookup
    /// and the tree's agree.
    static func checkLookup(_ value: JSONValue, _ data: Data) {
        var components: [JSONKeyPath.Component] = []
        var current = value
        for level in 0..<6 {
            switch current {
            case .object(let object):
                guard let key = object.keys.min() else { return }
                components.append(.key(key))
                current = object[key]!
            case .array(let array):
                guard !array.isEmpty else { return }
                let index = level % 2 == 0 ? 0 : array.count - 1
                components.append(.index(index))
                current = array[index]
            default:
                return
            }
            let path = JSONKeyPath(anchor: .root, components: components)
            do {
                let scanned = try JSONScanner.value(at: path, in: data)
                let tree = try value.value(at: path)
                require(same(scanned, tree), "at \(path) the scanner finds \(scanned), the tree \(tree)", input: data)
                require(same(tree, current), "at \(path) the tree's lookup finds \(tree), not \(current)", input: data)
            } catch {
                require(false, "\(path) is in the document but the lookup failed: \(error)", input: data)
            }
            // The path names what it found, written and read back.
            do {
                let reparsed = try JSONKeyPath(parsing: path.description)
                require(reparsed == path, "\(path) reads back as \(reparsed)", input: data)
            } catch {
                require(false, "the key path \(path.description) does not read back: \(error)", input: data)
            }
        }
    }

    static func same(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy(same)
        case (.object(let left), .object(let right)):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
        case (.int(let left), .double(let right)), (.double(let right), .int(let left)):
            return Double(left) == right
        default:
            return lhs == rhs
        }
    }
}
