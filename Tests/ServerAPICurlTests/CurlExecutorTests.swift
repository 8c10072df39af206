import Foundation
import ServerAPICurl
@_spi(Backend) import ServerAPIKit
import ServerAPITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `CurlTransport.executor`: callers that prefer the transport's thread continue on it after each call.
@Suite("CurlTransport: its thread as a task executor")
struct CurlExecutorTests {
    @Test(
        "calls made on the transport's executor succeed, one after the other and side by side, and continue on its thread"
    )
    func callsOnTheExecutor() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let manager = ServerAPIManager(transport: transport)
            let api = ServerAPI(host: server.base, path: "/echo").format(.data)
            // Progress closures run on the transport's thread: they tell which thread that is.
            let loopThread = Locked<UInt?>(nil)
            let record: @Sendable (TransferProgress) -> Void = { _ in loopThread.withLock { $0 = currentThreadID() } }
            let threads = try await Task(executorPreference: transport.executor) {
                var threads: [UInt] = []
                for _ in 0..<20 {
                    #expect(try await manager.send(api, progress: record).status == 200)
                    threads.append(currentThreadID())
                }
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<16 { group.addTask { try await manager.send(api).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 16))
                return threads
            }.value
            let loop = loopThread.withLock { $0 }
            #expect(loop != nil)
            #expect(threads.count == 20)
            #expect(threads.allSatisfy { $0 == loop })
        }
    }

    @Test("a call on the executor is cancelled by the registry and by its task like any other")
    func cancellation() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let manager = ServerAPIManager(transport: transport)
            let slow = ServerAPI(host: server.base, path: "/delay").query("seconds", "30").tag("slow")
                .method(.post).body(.text("x"))
            for way in ["tag", "task"] {
                let sent = EventCounter()
                let call = Task(executorPreference: transport.executor) {
                    try await manager.send(slow) { progress in
                        if progress.direction == .upload, progress.completed == 1 { sent.fire() }
                    }
                }
                await sent.wait()
                if way == "tag" { #expect(manager.cancel(tag: "slow").count == 1) } else { call.cancel() }
                let error = await expectError { try await call.value }
                #expect(error?.kind == .cancelled)
            }
            #expect(manager.inFlight.isEmpty)
        }
    }

    @Test("a task that prefers the executor of a transport that was released goes on elsewhere")
    func afterRelease() async throws {
        try await CurlTestServer.with { server in
            var transport: CurlTransport? = CurlTransport()
            let executor = transport!.executor
            let first = try await withTaskExecutorPreference(executor) {
                try await transport!.perform(TransportRequest(url: URL(string: server.base + "/echo")!)).status
            }
            #expect(first == 200)
            transport = nil
            // The loop has stopped: code that still prefers its executor runs on the global one.
            let after = try await withTaskExecutorPreference(executor) {
                try await CurlTransport().perform(TransportRequest(url: URL(string: server.base + "/echo")!)).status
            }
            #expect(after == 200)
        }
    }
}

/// The calling thread's identity (a synchronous function: thread identity is not for async code).
private func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}
