import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("EventSource: reconnecting server-sent events (MockTransport, TestClock)")
struct EventSourceTests {
    private func collect(_ source: EventSource) -> Task<([ServerSentEvent], ServerAPIError?), Never> {
        Task { await collectAll(source) }
    }

    @Test("a dropped connection reconnects with Last-Event-ID after the server's retry, and 204 stops it")
    func reconnects() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/es",
            .stream(
                [
                    .event(ServerSentEvent(data: "one", id: "1")),
                    .event(ServerSentEvent(data: "two", id: "2", retry: .milliseconds(500))),
                    .text("data: half an ev"),
                    .failure(ServerAPIError(.network, "the connection dropped")),
                ], headers: ["Content-Type": "text/event-stream"]),
            .events([ServerSentEvent(data: "three", id: "3")]),
            .status(204))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let reader = collect(manager.eventSource(.test("/es").tag("es")))
        // Two waits of the server's 500 ms: after the drop, and after the second body's clean end.
        for _ in 0..<2 {
            await clock.waitForSleepers(1)
            #expect(manager.inFlight.map(\.tag) == ["es"])
            clock.advance(by: .milliseconds(500))
        }
        let (events, error) = await reader.value
        #expect(error == nil)
        #expect(events.map(\.data) == ["one", "two", "three"])
        #expect(mock.requests.map { $0.headers["Last-Event-ID"] } == [nil, "2", "3"])
        #expect(mock.requests.allSatisfy { $0.headers["Accept"] == "text/event-stream" })
        #expect(clock.requestedSleeps == [.milliseconds(500), .milliseconds(500)])
        #expect(manager.inFlight.isEmpty)
    }

    @Test("an error status stops the source without reconnecting")
    func errorStatus() async {
        let mock = MockTransport()
        mock.stub(.get, "/es", .status(500))
        let manager = ServerAPIManager(transport: mock)
        let (events, error) = await collect(manager.eventSource(.test("/es"))).value
        #expect(events.isEmpty)
        #expect(error?.kind == .httpStatus)
        #expect(mock.requestCount == 1)
    }

    @Test("a response that is not an event stream is a decoding error")
    func wrongType() async {
        let mock = MockTransport()
        mock.stub(.get, "/es", .json(#"{"data":"x"}"#))
        let (_, error) = await collect(ServerAPIManager(transport: mock).eventSource(.test("/es"))).value
        #expect(error?.kind == .decoding)
    }

    @Test("connection failures back off and give up after maximumReconnects")
    func backoff() async {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/es", .cannotConnect())
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let reader = collect(
            manager.eventSource(.test("/es"), configuration: .init(retry: .seconds(1), maximumReconnects: 2)))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let (_, error) = await reader.value
        #expect(error?.kind == .cannotConnect)
        #expect(mock.requestCount == 3)
        #expect(clock.requestedSleeps == [.seconds(1), .seconds(2)])
    }

    @Test("an absurd retry: is capped at maximumRetry")
    func cappedRetry() async {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/es",
            .stream([.text("retry: 86400000\ndata: a\n\n")], headers: ["Content-Type": "text/event-stream"]),
            .status(204))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let reader = collect(manager.eventSource(.test("/es"), configuration: .init(maximumRetry: .seconds(30))))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(30))
        let (events, error) = await reader.value
        #expect(events.map(\.data) == ["a"])
        #expect(error == nil)
        #expect(clock.requestedSleeps == [.seconds(30)])
    }

    @Test("cancel(tag:) while waiting to reconnect ends the source with cancelled")
    func cancelWhileWaiting() async {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/es", .events([ServerSentEvent(data: "a")]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let reader = collect(manager.eventSource(.test("/es").tag("feed")))
        await clock.waitForSleepers(1)
        #expect(manager.cancel(tag: "feed").count == 1)
        let (events, error) = await reader.value
        #expect(events.map(\.data) == ["a"])
        #expect(error?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("cancel(tag:) while connected ends the source with cancelled, without reconnecting")
    func cancelWhileConnected() async {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/es",
            .stream(
                [.event(ServerSentEvent(data: "a")), .wait(.seconds(60)), .event(ServerSentEvent(data: "b"))],
                headers: ["Content-Type": "text/event-stream"]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let reader = collect(manager.eventSource(.test("/es").tag("feed")))
        await clock.waitForSleepers(1)
        #expect(manager.cancel(tag: "feed").count == 1)
        let (events, error) = await reader.value
        #expect(events.map(\.data) == ["a"])
        #expect(error?.kind == .cancelled)
        #expect(mock.requestCount == 1)
    }
}
