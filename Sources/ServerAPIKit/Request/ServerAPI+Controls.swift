#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Chainable request controls: throttling, coalescing, latest-wins and business rules.
extension ServerAPI {
    /// Returns a copy that is not sent again within `interval` of its last send.
    ///
    /// ```swift
    /// let refresh = ServerAPI(host: host, path: "/feed").minimumInterval(.seconds(2), onThrottle: .returnPrevious)
    /// ```
    /// - Parameters:
    ///   - interval: The shortest time between two sends of the same call, on the manager's clock.
    ///   - onThrottle: `.fail` for a `throttled` error, `.returnPrevious` for the previous result.
    /// - Returns: The modified call.
    public func minimumInterval(_ interval: Duration, onThrottle: ThrottlePolicy.Behavior = .fail) -> ServerAPI {
        var copy = self
        copy.throttle = ThrottlePolicy(interval: interval, onThrottle: onThrottle)
        return copy
    }

    /// Returns a copy that shares one transport call with identical GET or HEAD calls in flight.
    ///
    /// Identical means the same method, normalized URL, body digest, `Authorization`, `Cookie`
    /// and varying headers, cache mode, accepted statuses and size limit, so two users never
    /// share a response. Downloads are never shared.
    /// - Parameter enabled: `false` opts this call out of a manager that coalesces by default.
    /// - Returns: The modified call.
    public func coalesced(_ enabled: Bool = true) -> ServerAPI {
        var copy = self
        copy.coalescing = enabled ? .enabled : .disabled
        return copy
    }

    /// Returns a copy that, when started, cancels the earlier unfinished calls with the same tag
    /// or, without a tag, the same method and endpoint (URL without its query): search as you type.
    /// - Parameter replaces: Whether starting this call cancels the earlier ones.
    /// - Returns: The modified call.
    public func replacesInFlight(_ replaces: Bool = true) -> ServerAPI {
        var copy = self
        copy.replacesInFlight = replaces
        return copy
    }

    /// Returns a copy with these business rules (laid over the manager's unless they say otherwise).
    /// - Returns: The modified call.
    public func businessRules(_ rules: BusinessRules) -> ServerAPI {
        var copy = self
        copy.businessRules = rules
        return copy
    }

    /// Returns a copy with user-facing messages for business codes, overriding the manager's for these codes.
    /// - Returns: The modified call.
    public func businessMessages(_ messages: [String: String]) -> ServerAPI {
        var copy = self
        copy.businessRules.messages.merge(messages) { _, new in new }
        return copy
    }

    /// Returns a copy whose failures with these business codes are marked `isSilent`.
    /// - Returns: The modified call.
    public func silentBusinessCodes(_ codes: String...) -> ServerAPI {
        var copy = self
        copy.businessRules.silentCodes.formUnion(codes)
        copy.businessRules.audibleCodes.subtract(codes)
        return copy
    }

    /// Returns a copy whose failures with these business codes are never silent, whatever the manager's rules say.
    /// - Returns: The modified call.
    public func audibleBusinessCodes(_ codes: String...) -> ServerAPI {
        var copy = self
        copy.businessRules.audibleCodes.formUnion(codes)
        copy.businessRules.silentCodes.subtract(codes)
        return copy
    }

    /// Returns a copy whose successful responses go through `interceptor`, which may throw to turn
    /// a business success into a failure; it replaces the manager's interceptor for this call.
    /// - Returns: The modified call.
    public func successInterceptor(_ interceptor: @escaping BusinessRules.SuccessInterceptor) -> ServerAPI {
        var copy = self
        copy.businessRules.successInterceptor = interceptor
        return copy
    }
}
