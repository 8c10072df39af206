import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Batch and chain requests")
struct BatchChainTests {
    @Test("a batch runs its calls concurrently and returns results in order")
    func batchOrder() async throws {
        let mock = MockTransport()
        let entered = EventCounter()
        mock.stub(handler: { request in
            entered.fire()
            await entered.wait(for: 3)  // each call waits until all three are in flight: they run at once
            return .json(#"{"p":"\#(request.url.path)"}"#)
        })
        let manager = ServerAPIManager(transport: mock)
        let results = try await manager.send(BatchRequest([.test("/a"), .test("/b"), .test("/c")]))
        #expect(results.map { $0.json?["p"]?.stringValue } == ["/a", "/b", "/c"])
    }

    @Test("fail fast: the first failure cancels the others and is thrown")
    func failFast() async {
        let mock = MockTransport()
        mock.stub(.get, "/slow", .json("{}", delay: .seconds(60)))
        mock.stub(.get, "/bad", .status(500))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(BatchRequest([.test("/slow"), .test("/bad")])) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 500)
        let all = await manager.results(of: BatchRequest([.test("/slow"), .test("/bad")]))
        #expect((try? all[0].get()) == nil)
        if case .failure(let first) = all[0] { #expect(first.kind == .cancelled) }
        if case .failure(let second) = all[1] { #expect(second.status == 500) }
    }

    @Test("collect all: every call runs to its end")
    func collectAll() async {
        let mock = MockTransport()
        mock.stub(.get, "/ok", .json("{}"))
        mock.stub(.get, "/bad", .status(404))
        let manager = ServerAPIManager(transport: mock)
        let all = await manager.results(
            of: BatchRequest([.test("/bad"), .test("/ok"), .test("/ok")], failurePolicy: .collectAll))
        #expect(all.map { (try? $0.get()) != nil } == [false, true, true])
    }

    @Test("a batch is in the registry and cancelling its tag cancels every call in it")
    func cancelBatch() async {
        let mock = MockTransport()
        let entered = EventCounter()
        mock.stub(handler: { _ in
            entered.fire()
            return .json("{}", delay: .seconds(60))
        })
        let manager = ServerAPIManager(transport: mock)
        let batch = BatchRequest([.test("/a"), .test("/b")], tag: "screen")
        let call = Task { try await manager.send(batch) }
        await entered.wait(for: 2)
        #expect(manager.inFlight.filter { $0.kind == .batch }.map(\.id) == [batch.id])
        #expect(manager.inFlight.filter { $0.kind == .call }.count == 2)
        #expect(manager.cancel(tag: "screen").map(\.id) == [batch.id])
        #expect(await expectError { try await call.value }?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a chain builds each call from the previous result, and stops when a step returns nil")
    func chain() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/login", .json(#"{"user":7}"#))
        mock.stub(.get, "/users/7", .json(#"{"name":"Ada"}"#))
        let manager = ServerAPIManager(transport: mock)
        let chain = ChainRequest(.test("/login"))
            .then { login in .test("/users/\(login.json?["user"]?.intValue ?? 0)") }
            .then { _ in nil }
            .then { _ in .test("/never") }
        let results = try await manager.send(chain)
        #expect(results.count == 2)
        #expect(results[1].json?["name"] == "Ada")
        #expect(mock.requests.map(\.url.path) == ["/login", "/users/7"])
    }

    @Test("a chain fails with the first failure and can be cancelled by its id")
    func chainFailure() async {
        let mock = MockTransport()
        mock.stub(.get, "/a", .status(403))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(ChainRequest(.test("/a")).then { _ in .test("/b") }) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 403 && mock.requestCount == 1)

        let entered = EventCounter()
        mock.stub(handler: { _ in
            entered.fire()
            return .json("{}", delay: .seconds(60))
        })
        let chain = ChainRequest(.test("/slow"))
        let call = Task { try await manager.send(chain) }
        await entered.wait()
        #expect(manager.cancel(id: chain.id).count == 1)
        #expect(await expectError { try await call.value }?.kind == .cancelled)
    }
}
