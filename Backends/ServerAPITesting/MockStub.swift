import Foundation
import ServerAPIKit

/// A canned answer of `MockTransport`: a response or a failure, after an optional delay.
public struct MockStub: Sendable {
    /// What the stub answers.
    public enum Outcome: Sendable {
        /// A response with this status, headers and body.
        case response(status: Int, headers: HTTPHeaders, body: Data)
        /// A failure, thrown as it is.
        case failure(ServerAPIError)
    }

    /// What the stub answers.
    public var outcome: Outcome
    /// How long to wait before answering; a wait longer than the request's timeout ends in `timedOut`.
    public var delay: Duration

    /// Creates a stub.
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
            return .json(String(decoding: try encoder.encode(value), as: UTF8.self), status: status, headers: headers, delay: delay)
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
