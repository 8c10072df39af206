import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A canned answer of `MockTransport`: a response or a failure, after an optional delay.
public struct MockStub: Sendable {
    /// What the stub answers.
    public enum Outcome: Sendable {
        /// A response with this status, headers and body.
        case response(status: Int, headers: HTTPHeaders, body: Data)
        /// A failure, thrown as it is.
        case failure(ServerAPIError)
        /// A response whose body arrives in parts: chunks, waits on the mock's clock, a failure mid-body.
        case stream(status: Int, headers: HTTPHeaders, parts: [MockStreamPart])
    }

    /// What the stub answers.
    public var outcome: Outcome
    /// How long to wait before answering; a wait longer than the request's timeout ends in `timedOut`.
    public var delay: Duration
    /// The session a WebSocket handshake that this stub accepts (status 101) then plays; `nil` for other stubs.
    public var webSocket: MockWebSocketScript?

    /// Creates a stub that answers with `outcome`, after `delay` on the mock's clock.
    public init(_ outcome: Outcome, delay: Duration = .zero) {
        self.outcome = outcome
        self.delay = delay
    }

    /// A response with raw bytes.
    public static func data(
        _ body: Data, status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
    ) -> MockStub {
        MockStub(.response(status: status, headers: headers, body: body), delay: delay)
    }

    /// A JSON response from JSON text.
    public static func json(
        _ text: String, status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
    ) -> MockStub {
        var headers = headers
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        return .data(Data(text.utf8), status: status, headers: headers, delay: delay)
    }

    /// A JSON response encoded from a value (keys sorted).
    public static func json(
        _ value: some Encodable, status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
    ) -> MockStub {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return .json(
                String(decoding: try encoder.encode(value), as: UTF8.self), status: status, headers: headers,
                delay: delay)
        } catch {
            return .failure(ServerAPIError(.invalidRequest, "the stub's JSON cannot be encoded: \(error)"))
        }
    }

    /// A text response.
    public static func text(
        _ text: String, status: Int = 200, headers: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"],
        delay: Duration = .zero
    ) -> MockStub {
        .data(Data(text.utf8), status: status, headers: headers, delay: delay)
    }

    /// An empty response with a status.
    public static func status(_ status: Int, headers: HTTPHeaders = [:], delay: Duration = .zero) -> MockStub {
        .data(Data(), status: status, headers: headers, delay: delay)
    }

    /// A response whose body arrives in parts, for streamed calls (`ServerAPIManager.stream`).
    ///
    /// ```swift
    /// mock.stub(.get, "/feed", .stream([.text("one\n"), .wait(.seconds(1)), .text("two\n"), .failure(.init(.network, "dropped"))]))
    /// ```
    /// A whole-body call (`send`) gets the parts joined, or the failure.
    public static func stream(
        _ parts: [MockStreamPart], status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
    ) -> MockStub {
        MockStub(.stream(status: status, headers: headers, parts: parts), delay: delay)
    }

    /// A `text/event-stream` response that sends these events, each as its own chunk, with waits between
    /// them when `interval` is not zero.
    public static func events(
        _ events: [ServerSentEvent], interval: Duration = .zero, status: Int = 200, headers: HTTPHeaders = [:],
        delay: Duration = .zero
    ) -> MockStub {
        var headers = headers
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "text/event-stream") }
        var parts: [MockStreamPart] = []
        for (index, event) in events.enumerated() {
            if index > 0, interval > .zero { parts.append(.wait(interval)) }
            parts.append(.event(event))
        }
        return .stream(parts, status: status, headers: headers, delay: delay)
    }

    /// A failure.
    public static func failure(_ error: ServerAPIError, delay: Duration = .zero) -> MockStub {
        MockStub(.failure(error), delay: delay)
    }

    /// A timeout failure.
    public static func timeout(delay: Duration = .zero) -> MockStub {
        .failure(ServerAPIError(.timedOut, "the request timed out (stub)"), delay: delay)
    }

    /// A connection failure.
    public static func cannotConnect(delay: Duration = .zero) -> MockStub {
        .failure(ServerAPIError(.cannotConnect, "could not connect (stub)"), delay: delay)
    }
}

/// One part of a `MockStub.stream` body.
public enum MockStreamPart: Sendable {
    /// Bytes, delivered as one chunk.
    case chunk(Data)
    /// A wait on the mock's clock before the next part (a `TestClock` in tests advances it).
    case wait(Duration)
    /// The body fails here, after the chunks before it were delivered.
    case failure(ServerAPIError)

    /// UTF-8 text, delivered as one chunk.
    public static func text(_ text: String) -> MockStreamPart { .chunk(Data(text.utf8)) }

    /// A server-sent event in its wire form (`event:`, `id:`, `retry:`, one `data:` line per line of
    /// its data, a blank line), delivered as one chunk.
    public static func event(_ event: ServerSentEvent) -> MockStreamPart {
        var text = ""
        if event.type != "message" { text += "event: \(event.type)\n" }
        if !event.id.isEmpty { text += "id: \(event.id)\n" }
        if let retry = event.retry {
            let milliseconds = retry.components.seconds * 1000 + retry.components.attoseconds / 1_000_000_000_000_000
            text += "retry: \(milliseconds)\n"
        }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return .text(text + "\n")
    }
}
