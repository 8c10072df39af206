/// What a transport does with a response head that may be a redirect (see `RedirectRule.decide`).
package enum RedirectDecision: Sendable {
    /// Send this request next: the redirect's target, with method, body and headers rewritten.
    case follow(TransportRequest)
    /// The response is the caller's: not a redirect, a redirect without `Location`, or redirects are off.
    case deliver
    /// End the call with this error: too many redirects, or a target that is not an http(s) URL.
    case fail(ServerAPIError)
}
