import Foundation
import ServerAPIKit

extension HARArchive {
    /// A failure kept in an entry (`response._error`): replayed as the same `ServerAPIError`.
    ///
    /// Written as an object, `{"kind": "timed out", "message": "...", "tlsFailure": "..."}`. A plain string,
    /// as Chromium writes it (`"net::ERR_CONNECTION_REFUSED"`), is read too and mapped to the nearest kind.
    public struct RecordedError: Codable, Sendable, Hashable {
        /// The error's kind (`ServerAPIError.Kind.rawValue`).
        public var kind: String
        /// What happened.
        public var message: String
        /// Which part of TLS failed, for a `tls` error.
        public var tlsFailure: String?
        /// The HTTP status carried by the error, when there was one.
        public var status: Int?

        /// Creates a recorded failure.
        public init(kind: String, message: String, tlsFailure: String? = nil, status: Int? = nil) {
            self.kind = kind
            self.message = message
            self.tlsFailure = tlsFailure
            self.status = status
        }

        /// Keeps what a `ServerAPIError` says, not its request id or URL (a replay stamps its own).
        /// - Parameter error: The failure.
        public init(_ error: ServerAPIError) {
            self.init(
                kind: error.kind.rawValue, message: error.message, tlsFailure: error.tlsFailure?.rawValue,
                status: error.status)
        }

        enum CodingKeys: String, CodingKey {
            case kind, message, tlsFailure, status
        }

        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self.init(kind: Self.kind(ofBrowserError: text).rawValue, message: text)
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                kind: try container.decode(.kind, default: ServerAPIError.Kind.network.rawValue),
                message: try container.decode(.message, default: ""),
                tlsFailure: try container.decodeIfPresent(.tlsFailure),
                status: try container.decodeInteger(.status))
        }

        /// The error to throw: same kind, message, status and TLS failure.
        /// - Parameters:
        ///   - requestID: The replayed call's id.
        ///   - url: The replayed call's URL.
        public func serverAPIError(requestID: RequestID?, url: URL?) -> ServerAPIError {
            var error = ServerAPIError(
                ServerAPIError.Kind(rawValue: kind), message, requestID: requestID, url: url, status: status)
            error.tlsFailure = tlsFailure.map(TLSFailure.init(rawValue:))
            return error
        }

        /// The kind nearest to a browser's network error name (Chromium's `net::ERR_…`).
        static func kind(ofBrowserError text: String) -> ServerAPIError.Kind {
            let name = text.uppercased()
            if name.contains("TIMED_OUT") || name.contains("TIMEOUT") { return .timedOut }
            if name.contains("ABORTED") || name.contains("CANCEL") { return .cancelled }
            if name.contains("CERT") || name.contains("SSL") || name.contains("TLS") { return .tls }
            if name.contains("REFUSED") || name.contains("NAME_NOT_RESOLVED") || name.contains("UNREACHABLE")
                || name.contains("ADDRESS_INVALID") || name.contains("NAME_RESOLUTION")
            {
                return .cannotConnect
            }
            if name.contains("TOO_MANY_REDIRECTS") { return .tooManyRedirects }
            return .network
        }
    }
}
