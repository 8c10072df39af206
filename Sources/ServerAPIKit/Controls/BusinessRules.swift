import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How business failures (`ServerAPIError` of kind `business`, whatever formatter produced them)
/// are presented, and which business successes are turned into failures.
///
/// The manager's `configuration.businessRules` apply to every call; a call's own rules
/// (`ServerAPI.businessRules`) are laid over them: its messages win code by code, its message
/// closure and interceptor replace the manager's, its silent codes add to the manager's and its
/// audible codes remove from them. A call whose rules have `inheritsManagerRules == false` uses
/// only its own.
///
/// ```swift
/// var rules = BusinessRules(messages: ["1001": "Your session has ended. Please sign in again."])
/// rules.silentCodes = ["2001"]    // "already in the cart": nothing to show
/// let manager = ServerAPIManager(transport: transport, formatter: envelope,
///                                configuration: .init(businessRules: rules))
/// ```
public struct BusinessRules: Sendable, Hashable {
    /// Turns a business failure into the message a user sees; `nil` leaves it unchanged.
    public typealias MessageProvider = @Sendable (ServerAPIError) -> String?
    /// Looks at a successful response (status accepted, envelope code a success) and throws to
    /// turn it into a failure. A thrown `ServerAPIError` is used as it is; any other error
    /// becomes a `business` error with it as the underlying error.
    public typealias SuccessInterceptor = @Sendable (TransportResponse, ServerAPI) throws -> Void

    /// User-facing messages by business code.
    public var messages: [String: String]
    /// Codes whose failures are marked `isSilent`.
    public var silentCodes: Set<String>
    /// Codes that are never silent for this call, even when the manager's rules silence them.
    public var audibleCodes: Set<String>
    /// Whether these rules are laid over the manager's (`true`) or replace them.
    public var inheritsManagerRules: Bool

    private var messageBox: Box<MessageProvider>?
    private var interceptorBox: Box<SuccessInterceptor>?

    /// Creates business rules; empty rules inherit the manager's.
    /// - Parameters:
    ///   - messages: User-facing messages by business code, looked up before `messageProvider`.
    ///   - silentCodes: Codes whose failures are marked `isSilent`.
    ///   - messageProvider: Computes a message for a business failure the table does not cover.
    ///   - successInterceptor: Turns a business success into a failure by throwing.
    ///   - inheritsManagerRules: Whether a call's rules are laid over the manager's.
    public init(
        messages: [String: String] = [:], silentCodes: Set<String> = [],
        messageProvider: MessageProvider? = nil, successInterceptor: SuccessInterceptor? = nil,
        inheritsManagerRules: Bool = true
    ) {
        self.messages = messages
        self.silentCodes = silentCodes
        self.audibleCodes = []
        self.inheritsManagerRules = inheritsManagerRules
        self.messageProvider = messageProvider
        self.successInterceptor = successInterceptor
    }

    /// Rules that do nothing and ignore the manager's: for a call that wants raw business errors.
    public static let none = BusinessRules(inheritsManagerRules: false)

    /// Computes a message for a business failure the `messages` table does not cover.
    public var messageProvider: MessageProvider? {
        get { messageBox?.value }
        set { messageBox = newValue.map(Box.init) }
    }

    /// Turns a business success into a failure by throwing.
    public var successInterceptor: SuccessInterceptor? {
        get { interceptorBox?.value }
        set { interceptorBox = newValue.map(Box.init) }
    }

    /// These rules laid over `base` (the manager's), as the type's documentation describes.
    package func resolved(over base: BusinessRules) -> BusinessRules {
        guard inheritsManagerRules else { return self }
        var merged = base
        merged.messages.merge(messages) { _, call in call }
        merged.silentCodes = base.silentCodes.union(silentCodes).subtracting(audibleCodes)
        merged.audibleCodes = []
        merged.messageBox = messageBox ?? base.messageBox
        merged.interceptorBox = interceptorBox ?? base.interceptorBox
        return merged
    }

    /// Marks a business failure silent and gives it a user-facing message, as these rules say.
    /// Errors of other kinds are returned unchanged.
    package func apply(to error: ServerAPIError) -> ServerAPIError {
        guard error.kind == .business, let code = error.code else { return error }
        var error = error
        if silentCodes.contains(code) { error.isSilent = true }
        if let message = messages[code] ?? messageProvider?(error) { error.userMessage = message }
        return error
    }

    /// The success interceptor that applies when these rules are laid over `base`, if any;
    /// cheaper than `resolved(over:)`, for the path every successful call takes.
    func interceptor(over base: BusinessRules) -> SuccessInterceptor? {
        interceptorBox?.value ?? (inheritsManagerRules ? base.interceptorBox?.value : nil)
    }

    /// Runs a success interceptor.
    /// - Throws: `ServerAPIError`: the interceptor's, or a `business` error wrapping what it threw.
    static func intercept(
        _ response: TransportResponse, for api: ServerAPI, with interceptor: SuccessInterceptor
    ) throws(ServerAPIError) {
        do {
            try interceptor(response, api)
        } catch let error as ServerAPIError {
            throw error
        } catch {
            throw ServerAPIError(.business, "the response was rejected: \(error)", underlying: error)
        }
    }
}

extension BusinessRules {
    /// A closure compared by identity, so rules holding closures stay `Hashable`.
    private struct Box<Value: Sendable>: Sendable, Hashable {
        let value: Value
        let id: UInt64

        init(_ value: Value) {
            self.value = value
            self.id = boxCounter.add(1, ordering: .relaxed).newValue
        }

        static func == (lhs: Box, rhs: Box) -> Bool { lhs.id == rhs.id }
        func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }
}

private let boxCounter = Atomic<UInt64>(0)
