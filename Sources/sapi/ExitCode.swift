import ServerAPIKit

/// The exit codes `sapi` documents in `--help`.
enum ExitCode: Int32 {
    case ok = 0
    case usage = 1
    case httpStatus = 2
    case timeout = 3
    case network = 4
    case business = 5
    case decoding = 6
    case interrupted = 130

    /// The exit code for an error.
    init(_ error: ServerAPIError) {
        switch error.kind {
        case .timedOut: self = .timeout
        case .cannotConnect, .tls, .network, .tooManyRedirects, .responseTooLarge, .cacheMiss: self = .network
        case .business: self = .business
        case .decoding: self = .decoding
        case .cancelled: self = .interrupted
        case .httpStatus: self = .httpStatus
        default: self = .usage
        }
    }
}

/// A usage error: a message and, where useful, what to try.
struct UsageError: Error {
    var message: String
    var hint: String?
}
