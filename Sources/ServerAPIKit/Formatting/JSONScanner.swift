#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Finds values in UTF-8 JSON bytes without building the rest of the document.
///
/// The scanner walks the bytes once: it looks into the objects and arrays on a key path and skips
/// every other value without building it, while still validating the whole document (grammar,
/// escapes, surrogate pairs, UTF-8, at most 512 levels of nesting), so malformed JSON is reported
/// wherever it is. This is what lets the formatters hand `JSONDecoder` only the bytes of the model
/// at a key path instead of re-serializing a subtree.
///
/// ```swift
/// let range = try JSONScanner.range(of: JSONKeyPath(parsing: "data.items[0]"), in: body)
/// let item = try JSONDecoder().decode(Item.self, from: body[range])
/// ```
/// A leading UTF-8 byte order mark is ignored. Anchors (`#`, `~`) mean the root here.
package enum JSONScanner {
    /// Checks that `data` is one valid JSON value (surrounded by optional whitespace).
    /// - Throws: `ServerAPIError` of kind `decoding` saying what is wrong and at which byte offset.
    package static func validate(_ data: Data) throws(ServerAPIError) {
        _ = try range(of: [], in: data)
    }

    /// The range of the value at a key path, as indices of `data` (so `data[range]` is its JSON text).
    /// - Parameters:
    ///   - keyPath: Where the value is; anchors mean the root.
    ///   - data: A JSON document, UTF-8.
    /// - Returns: The indices of the value's bytes in `data`.
    /// - Throws: `ServerAPIError` of kind `decoding`: malformed JSON (with the byte offset), or a key
    ///   path that leads nowhere (with `keyPath` set and what was found instead in the message).
    package static func range(of keyPath: JSONKeyPath, in data: Data) throws(ServerAPIError) -> Range<Data.Index> {
        try range(of: keyPath.components, in: data)
    }

    /// The value at a key path, parsed.
    /// - Parameters:
    ///   - keyPath: Where the value is; anchors mean the root.
    ///   - data: A JSON document, UTF-8.
    /// - Returns: The value; integers that fit in 64 bits are exact `.int`s, larger ones `.double`s.
    /// - Throws: `ServerAPIError` of kind `decoding`, as `range(of:in:)`.
    package static func value(at keyPath: JSONKeyPath, in data: Data) throws(ServerAPIError) -> JSONValue {
        try value(at: keyPath.components, in: data)
    }

    // MARK: Shared by the formatters

    /// The indices in `data` of the value at `components` (from the root).
    static func range(of components: [JSONKeyPath.Component], in data: Data) throws(ServerAPIError)
        -> Range<Data.Index>
    {
        let steps = components.map(JSONStep.init)
        let location = try scan(data) { cursor throws(JSONSyntaxError) in
            cursor.skipByteOrderMark()
            cursor.skipWhitespace()
            let location = try cursor.locate(steps[...])
            try cursor.expectEnd()
            return location
        }
        switch location {
        case .found(let range):
            return (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)
        case .missing(let miss):
            throw missError(miss, components: components, in: data)
        }
    }

    /// The value at `components` (from the root), parsed.
    static func value(at components: [JSONKeyPath.Component], in data: Data) throws(ServerAPIError) -> JSONValue {
        let subtree = components.isEmpty ? data : data[try range(of: components, in: data)]
        return try parse(subtree)
    }

    /// Parses a whole JSON document.
    static func parse(_ data: Data) throws(ServerAPIError) -> JSONValue {
        try scan(data) { cursor throws(JSONSyntaxError) in
            cursor.skipByteOrderMark()
            cursor.skipWhitespace()
            let value = try cursor.parseValue()
            try cursor.expectEnd()
            return value
        }
    }

    /// Runs `body` with a cursor over `data`, turning syntax errors into `decoding` errors.
    static func scan<T>(_ data: Data, _ body: (inout JSONCursor) throws(JSONSyntaxError) -> T) throws(ServerAPIError)
        -> T
    {
        let result: Result<T, JSONSyntaxError> = data.withUnsafeBytes { buffer in
            JSONCursor.withCursor(over: buffer) { cursor in
                do throws(JSONSyntaxError) {
                    return .success(try body(&cursor))
                } catch {
                    return .failure(error)
                }
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw syntaxError(error)
        }
    }

    /// The `decoding` error for malformed JSON.
    static func syntaxError(_ error: JSONSyntaxError) -> ServerAPIError {
        ServerAPIError(
            .decoding,
            (error.malformed ? "the response is not valid JSON: " : "the response's JSON cannot be read: ")
                + "\(error.reason) at byte \(error.offset)")
    }

    /// The `decoding` error for a key path that leads nowhere: it names the key path and what was found.
    static func missError(_ miss: JSONMiss, components: [JSONKeyPath.Component], in data: Data) -> ServerAPIError {
        let full = JSONKeyPath.describe(components)
        func place(_ step: Int) -> String {
            step == 0 ? "the root" : "\"\(JSONKeyPath.describe(components[..<step]))\""
        }
        let detail: String
        switch miss {
        case .noKey(let step, let objectStart):
            let (keys, more) =
                (try? scan(data) { cursor in cursor.keys(ofObjectAt: objectStart, limit: 20) }) ?? ([], false)
            let listed = keys.map { "\"\($0)\"" }.joined(separator: ", ") + (more ? ", …" : "")
            let wanted = if case .key(let key) = components[step] { key } else { "" }
            detail =
                "no key \"\(wanted)\" in the object at \(place(step)), "
                + (keys.isEmpty ? "which is empty" : "which has keys [\(listed)]")
        case .outOfRange(let step, let count):
            let index = if case .index(let index) = components[step] { index } else { 0 }
            detail =
                "index \(index) is out of range: the array at \(place(step)) has "
                + (count == 1 ? "1 element" : "\(count) elements")
        case .mismatch(let step, let found):
            let expected = if case .key = components[step] { "an object" } else { "an array" }
            detail = "expected \(expected) at \(place(step)) but found \(found.name)"
        }
        return ServerAPIError(.decoding, "key path \"\(full)\": \(detail)", keyPath: full)
    }
}
