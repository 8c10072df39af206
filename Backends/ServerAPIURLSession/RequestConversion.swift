import Foundation
import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// Conversions between ServerAPIKit's transport values and Foundation's URL loading types.
enum RequestConversion {
    /// The `URLRequest` that sends `request`: method, headers, body (streamed when it has files).
    /// - Parameter streamed: Whether the response is streamed: then `request.timeout` bounds only the
    ///   time until the head, and only the configured `idleTimeout` limits silence after it.
    static func urlRequest(
        for request: TransportRequest, configuration: URLSessionTransport.Configuration,
        failureBox: BodyInputStream.FailureBox, streamed: Bool = false
    ) throws(ServerAPIError) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = configuration.handlesCookies
        // FoundationNetworking's timeoutInterval is an inactivity timer in whole seconds (0.5 would be 0 ms),
        // reset by every chunk, header line or body read (_EasyHandle.resetTimer) and applied over the whole
        // transfer; the total timeout is enforced by the transfer's own timer, which this one must not beat.
        // A streamed body may be silent for longer than the head's timeout (a quiet event feed): unless the
        // configuration asks for an idle limit, it gets the session's resource limit (a week), which
        // FoundationNetworking does not enforce by itself.
        let unlimited = Duration.seconds(URLSessionTransport.resourceTimeout)
        let idle = configuration.idleTimeout ?? (streamed ? unlimited : request.timeout + .seconds(1))
        urlRequest.timeoutInterval = max(1, idle.seconds.rounded(.up))
        setHeaders(request.headers, on: &urlRequest, configuration: configuration)
        switch request.body {
        case .empty:
            break
        case .data(let data):
            urlRequest.httpBody = data
        case .file, .segments:
            if let bytes = request.body.inMemoryBytes {
                urlRequest.httpBody = bytes
                break
            }
            if !request.headers.contains("Content-Length") {
                urlRequest.setValue(String(try request.body.contentLength()), forHTTPHeaderField: "Content-Length")
            }
            // FoundationNetworking gives libcurl no length for a body stream, so libcurl would add
            // "Transfer-Encoding: chunked" next to our Content-Length. A blank Transfer-Encoding
            // header is libcurl's way to turn chunking off, and a blank header is never sent. Only
            // there: Apple's loader has no libcurl underneath and would send the blank header.
            #if canImport(FoundationNetworking)
                if !request.headers.contains("Transfer-Encoding") {
                    urlRequest.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
                }
            #endif
            urlRequest.httpBodyStream = BodyInputStream(reader: try request.body.makeReader(), failureBox: failureBox)
        case .stream:
            throw URLSessionTransport.streamedBodyRefusal
        }
        return urlRequest
    }

    /// Sets a request's header fields on `urlRequest`, with the default User-Agent unless the session has one.
    static func setHeaders(
        _ headers: HTTPHeaders, on urlRequest: inout URLRequest, configuration: URLSessionTransport.Configuration
    ) {
        var headers = headers
        // Set here, or FoundationNetworking sends its own ("<process> (unknown version) curl/…"); a
        // User-Agent among the session's additional headers is the caller's own.
        if !configuration.additionalHeaders.contains("User-Agent") { headers.addDefaultUserAgent() }
        var seen = Set<String>()
        for field in headers {
            if seen.insert(field.name.lowercased()).inserted {
                urlRequest.setValue(field.value, forHTTPHeaderField: field.name)
            } else {
                // URLRequest keeps one field per name: repeated headers are sent comma-joined (RFC 9110 §5.3).
                urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
            }
        }
    }

    /// A response's headers. FoundationNetworking hands them over as a dictionary (repeated
    /// fields already joined), so they are sorted by name to keep the order stable.
    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var pairs: [(String, String)] = []
        for (name, value) in response.allHeaderFields {
            pairs.append((String(describing: name), String(describing: value)))
        }
        pairs.sort { $0.0.lowercased() < $1.0.lowercased() }
        return HTTPHeaders(pairs)
    }
}
