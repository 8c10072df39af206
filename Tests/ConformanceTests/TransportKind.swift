import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession

/// The transports the conformance suite holds to one contract. Adding a backend is one case here.
enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlsession
    case curl

    /// A new transport of this kind.
    func make() -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport()
        case .curl: CurlTransport()
        }
    }

    var description: String { rawValue }
}
