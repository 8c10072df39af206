import Foundation
import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// Turns the errors URLSession reports into `ServerAPIError`s, keeping the original as `underlying`.
enum URLErrorMapping {
    /// The `ServerAPIError` for an error a task completed with.
    /// - Parameter contentCoded: Whether the response's head announced a content coding: FoundationNetworking
    ///   reports a coding libcurl cannot decode (or a body invalid in its coding) as `URLError.unknown`.
    static func map(_ error: any Error, request: TransportRequest, contentCoded: Bool = false) -> ServerAPIError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain, let code = code(nsError.code) else {
            return ServerAPIError(
                .network, "the request failed: \(nsError.localizedDescription)", requestID: request.id,
                url: request.url, underlying: error)
        }
        if let failure = tlsFailure(code, message: nsError.localizedDescription) {
            var tls = ServerAPIError.tls(
                failure, describe(failure, message: nsError.localizedDescription), underlying: error)
            tls = tls.with(requestID: request.id, url: request.url)
            return tls
        }
        // The core validated the URL (an http or https URL with a host) before this transport saw it: an
        // unsupportedURL from FoundationNetworking is then its libcurl refusing the server's answer (an HTTP/0.9 or
        // non-HTTP reply is libcurl's "unsupported protocol"), the server's fault, not the call's.
        if code == .unsupportedURL, ["http", "https"].contains(request.url.scheme?.lowercased() ?? ""),
            request.url.host?.isEmpty == false
        {
            return ServerAPIError(
                .network,
                "the server's answer is not HTTP (URLError \(code.rawValue): \(nsError.localizedDescription))",
                requestID: request.id, url: request.url, underlying: error)
        }
        if contentCoded, code == .unknown || code == .cannotDecodeContentData {
            return ServerAPIError(
                .network, "the response's content coding could not be decoded (URLError \(code.rawValue))",
                requestID: request.id, url: request.url, underlying: error)
        }
        let (kind, message) = describe(code)
        return ServerAPIError(kind, message, requestID: request.id, url: request.url, underlying: error)
    }

    /// The `URLError.Code` of an `NSURLErrorDomain` error's code.
    /// - Important: One spelling for both Foundations: swift-corelibs-foundation's `URLError.Code` is an enum
    ///   whose failable initializer gives `nil` for a code it does not know; Apple's is a struct whose
    ///   initializer takes any value, and its result is wrapped here. (`guard let` on it would not compile there.)
    private static func code(_ rawValue: Int) -> URLError.Code? {
        URLError.Code(rawValue: rawValue)
    }

    static func describe(_ code: URLError.Code) -> (ServerAPIError.Kind, String) {
        switch code {
        case .cancelled:
            (.cancelled, "the request was cancelled")
        case .timedOut:
            (.timedOut, "the request timed out")
        case .cannotConnectToHost:
            (.cannotConnect, "could not connect to the server")
        case .cannotFindHost, .dnsLookupFailed:
            (.cannotConnect, "the server's host name could not be resolved")
        case .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed:
            (.cannotConnect, "there is no network connection")
        case .networkConnectionLost:
            (.network, "the connection was lost before the response was complete")
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            (.network, "the server's response is not valid HTTP")
        case .zeroByteResource, .resourceUnavailable:
            (.network, "the server sent no usable response")
        case .httpTooManyRedirects:
            (.tooManyRedirects, "the request was redirected too many times")
        case .redirectToNonExistentLocation:
            (.network, "the server redirected to a location that does not exist")
        case .secureConnectionFailed:
            (.tls, "the TLS handshake failed")
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            (.tls, "the server's certificate is expired or not yet valid")
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            (.tls, "the server's certificate is not trusted")
        case .clientCertificateRejected, .clientCertificateRequired:
            (.tls, "the server requires a client certificate that was not accepted")
        case .appTransportSecurityRequiresSecureConnection:
            (.tls, "a secure connection is required")
        case .badURL, .unsupportedURL:
            (.invalidRequest, "the URL cannot be requested")
        case .dataLengthExceedsMaximum:
            (.responseTooLarge, "the response is larger than allowed")
        case .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile, .cannotRemoveFile,
            .cannotMoveFile, .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile:
            (.fileSystem, "a local file could not be read or written")
        case .userAuthenticationRequired, .userCancelledAuthentication:
            (.network, "the server requires authentication the request did not provide")
        default:
            (.network, "the request failed (URLError \(code.rawValue))")
        }
    }
}
