import ServerAPIKit
import Testing

/// A library's limitation on one transport kind, recorded as a known issue: why, and the one failure it
/// causes. `withKnownIssue(…) matching: limit.matches` then hides that failure only: any other (a refused
/// connection, a timeout, a regression of ours) is reported as usual, and the test fails as "known issue
/// was not recorded" the day the limitation goes away.
struct KnownLimit: Sendable {
    /// Why the case cannot pass on that kind: the known issue's comment.
    var reason: String
    /// Whether an issue is the failure this limitation causes.
    var matches: @Sendable (Issue) -> Bool

    /// The call fails with a `ServerAPIError` of `kind` whose message contains `message` (every message
    /// when `nil`).
    static func error(_ kind: ServerAPIError.Kind, containing message: String? = nil, because reason: String)
        -> KnownLimit
    {
        KnownLimit(reason: reason) { issue in
            guard case .errorCaught(let error) = issue.kind, let error = error as? ServerAPIError else { return false }
            return error.kind == kind && (message.map { error.message.contains($0) } ?? true)
        }
    }

    /// The expectations commented `label` fail, and nothing else: `#expect(…, "label")`.
    static func expectation(_ label: String, because reason: String) -> KnownLimit {
        KnownLimit(reason: reason) { issue in
            guard case .expectationFailed = issue.kind else { return false }
            return issue.comments.contains { $0.rawValue == label }
        }
    }
}
