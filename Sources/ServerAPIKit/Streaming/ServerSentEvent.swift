/// One event of a `text/event-stream` body, as `ServerSentEventParser` dispatches it.
///
/// The fields mean what they mean to a browser's `EventSource` (the WHATWG HTML specification's
/// `MessageEvent`), plus the reconnection time the event's own lines asked for.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type from the `event:` field; `"message"` when the event had none.
    public var type: String
    /// The event's data: its `data:` lines joined with `"\n"`.
    public var data: String
    /// The stream's last event id when the event was dispatched: the latest `id:` field seen so far,
    /// in this event or an earlier one; empty when the server has sent none or reset it with an empty `id`.
    public var id: String
    /// The reconnection time a valid `retry:` field among this event's lines asked for; `nil` when none did.
    public var retry: Duration?

    /// Creates an event, as the parser delivers them; tests and mock streams make their own.
    ///
    /// - Parameters:
    ///   - type: The event type; `"message"` by default, as in a browser.
    ///   - data: The event's data.
    ///   - id: The last event id; empty when there is none.
    ///   - retry: The reconnection time the event asked for, if any.
    public init(type: String = "message", data: String = "", id: String = "", retry: Duration? = nil) {
        self.type = type
        self.data = data
        self.id = id
        self.retry = retry
    }
}
