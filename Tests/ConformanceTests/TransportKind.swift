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

    /// A new transport of this kind that keeps at most `maxErrorBodySize` bytes of a download's error body.
    func make(maxErrorBodySize: Int) -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport(configuration: .init(maxErrorBodySize: maxErrorBodySize))
        case .curl: CurlTransport(configuration: .init(maxErrorBodySize: maxErrorBodySize))
        }
    }

    /// Whether a streamed response's transfer pauses when its reader stops reading. FoundationNetworking
    /// cannot pause one (`URLSessionTask.suspend()` aborts it), so URLSession streams are not held back.
    var pausesStreams: Bool { self == .curl }

    var description: String { rawValue }
}
