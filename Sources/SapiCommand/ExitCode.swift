import ServerAPIKit

/// The exit codes `sapi` documents in `--help`: httpie's where httpie has one (0–6, 130), `sapi`'s own
/// in codes httpie does not use (7–9).
enum ExitCode: Int32 {
    case ok = 0
    /// Usage, invalid input, or another error.
    case usage = 1
    case timeout = 2
    /// A 3xx that was not followed, with `--check-status` (or in download mode).
    case redirectStatus = 3
    /// A 4xx, with `--check-status` (or in download mode).
    case clientErrorStatus = 4
    /// A 5xx, with `--check-status` (or in download mode).
    case serverErrorStatus = 5
    case tooManyRedirects = 6
    /// Cannot connect, TLS, or another network failure.
    case network = 7
    /// A business-code failure with `--envelope`.
    case business = 8
    /// Decoding failed, or `--key-path` found nothing.
    case decoding = 9
    case interrupted = 130

    /// The exit code for an error.
    init(_ error: ServerAPIError) {
        switch error.kind {
        case .timedOut: self = .timeout
        case .tooManyRedirects: self = .tooManyRedirects
        case .cannotConnect, .tls, .network, .responseTooLarge, .cacheMiss: self = .network
        case .business: self = .business
        case .decoding: self = .decoding
        case .cancelled: self = .interrupted
        case .httpStatus: self = error.status.flatMap(Self.status) ?? .usage
        default: self = .usage
        }
    }

    /// The exit code of a status that `--check-status` (or a download) fails on: 3, 4 or 5 for a
    /// 3xx, 4xx or 5xx; `nil` for any other status.
    static func status(_ status: Int) -> ExitCode? {
        switch status {
        case 300..<400: .redirectStatus
        case 400..<500: .clientErrorStatus
        case 500..<600: .serverErrorStatus
        default: nil
        }
    }
}

/// A usage error: a message and, where useful, what to try.
struct UsageError: Error {
    var message: String
    var hint: String?
}
