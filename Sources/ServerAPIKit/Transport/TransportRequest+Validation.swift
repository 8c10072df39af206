#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TransportRequest {
    /// Checks what every transport refuses the same way before it sends anything: a URL that is not
    /// http(s) with a host, a method that is not an HTTP token (a line break in it would inject a header),
    /// a timeout that is not positive, a stall limit that cannot be enforced, and header names or values
    /// that are not valid HTTP.
    ///
    /// Checked by the transport rather than trusted: a header with a line break would inject another
    /// header, and a transport may be handed requests that did not come through `ServerAPIManager`.
    /// - Parameter stallTimeout: The stall limit in force: the request's own, else the transport's default.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package func validate(stallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard let scheme = url.scheme, ServerOrigin.isHTTP(scheme), url.host?.isEmpty == false else {
            throw .notHTTPURL(url)
        }
        guard HTTPMethod.isToken(method) else { throw .notTokenMethod(method) }
        try validateTransfer(stallTimeout: stallTimeout)
    }

    /// What `validate(stallTimeout:)` checks after the URL and the method.
    private func validateTransfer(stallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard timeout > .zero else {
            throw ServerAPIError(.invalidRequest, "the timeout must be positive, not \(timeout)")
        }
        if let stallTimeout, !stallTimeout.isValid {
            throw ServerAPIError(.invalidRequest, "the stall timeout must be positive, not \(stallTimeout)")
        }
        try headers.validate()
        if let unixSocketPath { try UnixSocket.validate(unixSocketPath) }
    }

    /// Checks the request (see `validate(stallTimeout:)`) and marks it prepared, so that the transport
    /// does not check it again. The manager prepares each request once, after the plugins' `prepare`.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package mutating func prepare() throws(ServerAPIError) {
        try validate(stallTimeout: stallTimeout)
        isPrepared = true
    }

    /// `prepare()` for a request made from a description's resolution (`ServerAPI.transportRequest`): its URL was
    /// checked when the description was resolved, and whether its method is a token was kept with it, so that a
    /// description sent again does not parse its URL's host and scheme again.
    /// - Parameter methodIsToken: The resolution's check of the method.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong, as `prepare()` would.
    package mutating func prepare(resolvedMethodIsToken methodIsToken: Bool) throws(ServerAPIError) {
        guard methodIsToken else { throw .notTokenMethod(method) }
        try validateTransfer(stallTimeout: stallTimeout)
        isPrepared = true
    }

    /// What a transport calls before it sends: the whole check for a request that was not prepared
    /// (or changed since), and for a prepared one only the transport's own default stall limit.
    /// - Parameter defaultStallTimeout: The transport's stall limit for requests that set none.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package func validateForSending(defaultStallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard isPrepared else { return try validate(stallTimeout: stallTimeout ?? defaultStallTimeout) }
        if stallTimeout == nil, let defaultStallTimeout, !defaultStallTimeout.isValid {
            throw ServerAPIError(.invalidRequest, "the stall timeout must be positive, not \(defaultStallTimeout)")
        }
    }
}

extension HTTPMethod {
    /// Whether the method is an RFC 9110 token: what every transport sends, and nothing that could end the line.
    static func isToken(_ method: HTTPMethod) -> Bool {
        !method.rawValue.isEmpty && method.rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte)
    }
}

extension ServerAPIError {
    /// A method that is not an HTTP token.
    static func notTokenMethod(_ method: HTTPMethod) -> ServerAPIError {
        ServerAPIError(.invalidRequest, "the method \"\(method.rawValue)\" is not a valid HTTP token")
    }
}
