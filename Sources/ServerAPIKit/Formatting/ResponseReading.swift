#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What both core formatters share: reading the body, key paths, text, and decoding models from a byte range.
enum ResponseReading {
    /// Whether a response has no body by definition: a HEAD request, or 204, 205 or 304.
    static func isBodiless(_ response: TransportResponse, for api: ServerAPI) -> Bool {
        api.method == .head || response.status == 204 || response.status == 205 || response.status == 304
    }

    /// The call's key path, parsed; the empty path when it has none.
    static func keyPath(of api: ServerAPI) throws(ServerAPIError) -> JSONKeyPath {
        guard let text = api.keyPath, !text.isEmpty else { return JSONKeyPath() }
        return try JSONKeyPath(parsing: text)
    }

    /// The body bytes, read from the file for a download.
    static func bytes(of response: TransportResponse) throws(ServerAPIError) -> Data {
        switch response.body {
        case .data(let data):
            return data
        case .file(let url, _):
            do {
                return try Data(contentsOf: url, options: .mappedIfSafe)
            } catch {
                throw ServerAPIError(.fileSystem, "cannot read the downloaded file \(url.path)", underlying: error)
            }
        case .stream:
            throw ServerAPIError(.invalidRequest, "a streamed body is read from its stream, not formatted whole")
        }
    }

    /// The body as text in the charset its `Content-Type` declares (UTF-8 by default).
    static func text(of data: Data, in response: TransportResponse) throws(ServerAPIError) -> String {
        try TextCharset.declared(by: response.headers["Content-Type"]).decode(data)
    }

    /// The body as UTF-8 JSON bytes: transcoded when `Content-Type` declares another charset.
    static func jsonBytes(of data: Data, in response: TransportResponse) throws(ServerAPIError) -> Data {
        try TextCharset.declared(by: response.headers["Content-Type"]).utf8Bytes(data)
    }

    /// The error for an empty body where JSON was expected.
    static func emptyBody(_ response: TransportResponse, expected: String) -> ServerAPIError {
        ServerAPIError(
            .decoding, "the response body is empty (status \(response.status)), so it has no \(expected)",
            status: response.status)
    }

    /// Decodes a model from `data[range]` (the whole of `data` when `range` is `nil`) with a fresh decoder.
    ///
    /// The slice is handed to `JSONDecoder` as it is: nothing is re-serialized.
    /// - Parameter keyPath: The key path of the slice, from the root, for error messages; empty for the root.
    static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, range: Range<Data.Index>?, keyPath: String,
        makeDecoder: @Sendable () -> JSONDecoder
    ) throws(ServerAPIError) -> T {
        let slice = range.map { data[$0] } ?? data
        do {
            return try makeDecoder().decode(T.self, from: slice)
        } catch let error as DecodingError {
            throw decodingError(error, type: T.self, keyPath: keyPath, document: data)
        } catch let error as ServerAPIError {
            // A model's own `init(from:)` may throw a typed error on purpose: it goes through as it is.
            throw error
        } catch {
            throw ServerAPIError(
                .decoding, "cannot decode \(T.self)\(place(keyPath)): \(error)",
                keyPath: keyPath.isEmpty ? nil : keyPath,
                underlying: error)
        }
    }

    /// ` at key path "x"`, or nothing for the root.
    private static func place(_ keyPath: String) -> String {
        keyPath.isEmpty ? "" : " at key path \"\(keyPath)\""
    }

    /// A `DecodingError` as a `decoding` error naming the key path and the coding path inside the model;
    /// its `keyPath` is the two joined (`data.items[3].price`). Malformed JSON is reported by the
    /// scanner, with its byte offset in `document` (the whole body).
    static func decodingError(
        _ error: DecodingError, type: Any.Type, keyPath: String, document: Data
    ) -> ServerAPIError {
        var codingPath: [any CodingKey]
        let reason: String
        switch error {
        case .typeMismatch(_, let context):
            codingPath = context.codingPath
            reason = context.debugDescription
        case .valueNotFound(_, let context):
            codingPath = context.codingPath
            reason = context.debugDescription
        case .keyNotFound(let key, let context):
            codingPath = context.codingPath + [key]
            reason = "no key \"\(key.stringValue)\" in the object"
        case .dataCorrupted(let context):
            codingPath = context.codingPath
            // The scanner says exactly where malformed JSON is; `JSONDecoder` only that it is.
            if codingPath.isEmpty, case .some = context.underlyingError {
                do throws(ServerAPIError) {
                    try JSONScanner.validate(document)
                } catch let syntaxError {
                    var precise = syntaxError
                    if !keyPath.isEmpty {
                        precise.message = "cannot decode \(type)\(place(keyPath)): " + precise.message
                        precise.keyPath = keyPath
                    }
                    precise.underlying = error
                    return precise
                }
            }
            reason = context.debugDescription
        @unknown default:
            codingPath = []
            reason = "\(error)"
        }
        let inner = describe(codingPath)
        let full: String
        if inner.isEmpty {
            full = keyPath
        } else if keyPath.isEmpty || inner.hasPrefix("[") {
            full = keyPath + inner
        } else {
            full = keyPath + "." + inner
        }
        let location = inner.isEmpty ? "" : " (at \"\(inner)\" inside it)"
        return ServerAPIError(
            .decoding, "cannot decode \(type)\(place(keyPath))\(location): \(reason)",
            keyPath: full.isEmpty ? nil : full, underlying: error)
    }

    /// A coding path as key path text: `[3].price`.
    static func describe(_ codingPath: [any CodingKey]) -> String {
        JSONKeyPath.describe(
            codingPath.map { key in
                if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == "\(index)" {
                    .index(index)
                } else {
                    .key(key.stringValue)
                }
            })
    }

    /// Fills in what the response knows (status, URL, body excerpt) on a formatter's error.
    static func contextual(_ error: ServerAPIError, _ response: TransportResponse) -> ServerAPIError {
        var error = error
        if error.status == nil { error.status = response.status }
        if error.url == nil { error.url = response.url }
        if error.bodyExcerpt == nil, let data = response.data { error.bodyExcerpt = ServerAPIError.excerpt(data) }
        return error
    }
}
