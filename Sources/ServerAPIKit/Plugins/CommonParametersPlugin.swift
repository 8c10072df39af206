#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Adds common headers and query items to every request: an app version, a device id, a locale.
///
/// ```swift
/// let common = CommonParametersPlugin(
///     headers: ["X-App-Version": "5.2.0"],
///     query: [QueryItem(name: "platform", value: "linux")])
/// ```
/// A header or query item the call already has is left as the call set it. Parameters go in the
/// query (whatever the method), never into a body: a body is the call's own.
/// - Important: Put this plugin before a `SigningPlugin`, so the signature covers what it adds.
public struct CommonParametersPlugin: ServerAPIPlugin {
    /// Headers and query items to add.
    public struct Parameters: Sendable, Hashable {
        /// Headers to add.
        public var headers: HTTPHeaders
        /// Query items to add, after the call's own.
        public var query: [QueryItem]

        /// Creates the headers and query items added to every call that does not set them.
        public init(headers: HTTPHeaders = [:], query: [QueryItem] = []) {
            self.headers = headers
            self.query = query
        }
    }

    private let parameters: @Sendable (ServerAPI) async throws -> Parameters

    /// Adds the same headers and query items to every request.
    /// - Parameters:
    ///   - headers: Headers to add.
    ///   - query: Query items to add.
    public init(headers: HTTPHeaders = [:], query: [QueryItem] = []) {
        let fixed = Parameters(headers: headers, query: query)
        self.parameters = { _ in fixed }
    }

    /// Adds headers and query items computed for each attempt (a timestamp, a nonce, the current locale).
    /// - Parameter parameters: Computes what to add for a call; a thrown error fails the call.
    public init(_ parameters: @escaping @Sendable (ServerAPI) async throws -> Parameters) {
        self.parameters = parameters
    }

    public func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
        let added = try await parameters(api)
        var request = request
        for field in added.headers where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        try request.headers.validate()
        request.url = try Self.appending(added.query, to: request.url)
        return request
    }

    /// `url` with the items whose names its query lacks appended, encoded as the core encodes a call's query.
    static func appending(_ items: [QueryItem], to url: URL) throws(ServerAPIError) -> URL {
        guard !items.isEmpty else { return url }
        let present = Set(
            (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map(\.name))
        let encoded = items.filter { !present.contains($0.name) }.map { item in
            let name = PercentEncoding.encode(item.name)
            return item.value.map { "\(name)=\(PercentEncoding.encode($0))" } ?? name
        }
        guard !encoded.isEmpty else { return url }
        var text = url.absoluteString
        var fragment = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = String(text[hash...])
            text = String(text[..<hash])
        }
        let separator = text.contains("?") ? (text.hasSuffix("?") || text.hasSuffix("&") ? "" : "&") : "?"
        guard let result = URL(string: text + separator + encoded.joined(separator: "&") + fragment) else {
            throw ServerAPIError(.invalidRequest, "common query parameters made an invalid URL", url: url)
        }
        return result
    }
}
