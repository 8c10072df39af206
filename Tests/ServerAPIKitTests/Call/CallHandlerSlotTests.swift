import Foundation
import Synchronization
import Testing

@_spi(Backend) @testable import ServerAPIKit

/// The call's waits without a lock: the handler of its one wait in the slot, a second wait in the machine, the
/// attempt's start published, the end and the registry's listing left in one step.
@Suite struct CallHandlerSlotTests {
    static func call(_ n: UInt64, in registry: InFlightRegistry? = InFlightRegistry()) -> Call {
        var api = ServerAPI(url: URL(string: "https://api.test/\(n)")!)
        api.id = RequestID(rawValue: n)
        let call = Call(api: api, request: TransportRequest(url: api.url!), registry: registry)
        registry?.add(call)
        return call
    }

    /// Counts the runs of the handlers it makes.
    final class Runs: Sendable {
        let count = Atomic<Int>(0)
        func handler() -> @Sendable () -> Void { { self.count.add(1, ordering: .relaxed) } }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test("The slot's moves: claimed, installed, reclaimed and emptied; taken and closed are final")
    func slotMoves() {
        let slot = Atomic<UInt8>(HandlerSlot.empty)
        var seen: [UInt8] = []
        seen.append(HandlerSlot.claim(slot))
        seen.append(HandlerSlot.claim(slot))
        seen.append(HandlerSlot.install(slot))
        let reclaimed = HandlerSlot.reclaim(slot)
        HandlerSlot.release(slot)
        seen.append(HandlerSlot.claim(slot))
        // Taken while written: the writer learns it at install, and runs the handler itself.
        seen.append(HandlerSlot.take(slot))
        seen.append(HandlerSlot.install(slot))
        seen.append(HandlerSlot.close(slot))
        let reclaimedTaken = HandlerSlot.reclaim(slot)
        seen.append(HandlerSlot.claim(slot))
        #expect(reclaimed && !reclaimedTaken)
        #expect(
            seen == [
                HandlerSlot.empty, HandlerSlot.writing, HandlerSlot.installed, HandlerSlot.empty, HandlerSlot.writing,
                HandlerSlot.taken, HandlerSlot.taken, HandlerSlot.taken,
            ])

        let ended = Atomic<UInt8>(HandlerSlot.installed)
        let closedFrom = HandlerSlot.close(ended)
        let reclaimedClosed = HandlerSlot.reclaim(ended)
        let claimedClosed = HandlerSlot.claim(ended)
        #expect(closedFrom == HandlerSlot.installed && !reclaimedClosed && claimedClosed == HandlerSlot.closed)
    }

    @Test("A wait's handler runs once on a cancel, never once the wait ended, and at once on a cancelled call")
    func waitHandler() async {
        let runs = Runs()
        let call = Self.call(1)
        #expect(call.attemptStarted(1))
        // Ended before the cancel: dropped.
        await call.withCancellationHandler {
        } onCancel: {
            runs.count.add(1, ordering: .relaxed)
        }
        let stopped = await call.withCancellationHandler { () -> Int in
            call.cancel(.id)
            call.cancel(.all)
            return runs.value
        } onCancel: {
            runs.count.add(1, ordering: .relaxed)
        }
        #expect(stopped == 1)
        #expect(call.isCancelled)
        #expect(call.state == .cancelled(.id))
        // A wait that starts after the cancel runs its handler at once.
        await call.withCancellationHandler {
        } onCancel: {
            runs.count.add(1, ordering: .relaxed)
        }
        #expect(runs.value == 2)
        #expect(!call.attemptStarted(2))
    }

    @Test("A second wait at once goes to the machine, and a cancel stops both, each once")
    func twoWaits() {
        let runs = Runs()
        let call = Self.call(2)
        _ = call.attemptStarted(1)
        call.onCancel(runs.handler())
        call.onCancel(runs.handler())
        call.cancel(.tag)
        call.cancel(.tag)
        #expect(runs.value == 2)
    }

    @Test("A call that ended runs no handler: not one kept before its end, not one offered after")
    func afterEnd() {
        let runs = Runs()
        let call = Self.call(3)
        _ = call.attemptStarted(1)
        call.onCancel(runs.handler())
        #expect(call.end(failed: false))
        call.onCancel(runs.handler())
        #expect(!call.cancel(.all))
        #expect(runs.value == 0)
        #expect(!call.isCancelled)
        #expect(!call.attemptStarted(2))
        #expect(call.state == .finished)
    }

    @Test("The machine hears of a started attempt at its next event; the end leaves the registry with it")
    func attemptAndEnd() async {
        let registry = InFlightRegistry()
        let call = Self.call(4, in: registry)
        #expect(call.attemptStarted(1))
        #expect(call.state == .running(.attempting(1)))
        #expect(call.waitingToRetry(1))
        #expect(call.attemptStarted(2))
        call.headReceived()
        #expect(call.state == .running(.headReceived))
        #expect(registry.count == 1)
        #expect(call.end(failed: true))
        #expect(registry.count == 0)
        #expect(await registry.waitUntilEmpty())
        #expect(!call.end(failed: false))
        #expect(call.state == .failed)

        // A call no registry lists has a lock of its own, and the same lifecycle.
        let alone = Self.call(5, in: nil)
        #expect(alone.attemptStarted(1))
        #expect(alone.cancel(.scope))
        #expect(alone.end(failed: true))
        #expect(alone.state == .cancelled(.scope))
    }

    /// What a transport's handler holds for its wait (a session's task, in URLSessionTransport).
    final class Held: Sendable {}

    @Test("A cancel lets go of the handlers it ran, the slot's and the machine's, while the call lives on")
    func cancelReleasesHandlers() async {
        let call = Self.call(7)
        #expect(call.attemptStarted(1))
        weak var inSlot: Held?
        weak var inMachine: Held?
        do {
            let slotHeld = Held()
            let machineHeld = Held()
            inSlot = slotHeld
            inMachine = machineHeld
            // The first wait's handler goes to the slot, the second's (a wait at once) to the machine.
            await call.withCancellationHandler {
                await call.withCancellationHandler {
                    _ = call.cancel(.tag)
                } onCancel: {
                    _ = machineHeld
                }
            } onCancel: {
                _ = slotHeld
            }
        }
        #expect(call.isCancelled)
        #expect(inSlot == nil, "the slot's handler, run by the cancel, is still held by the call")
        #expect(inMachine == nil, "the machine's handler, run by the cancel, is still held by the call")
        #expect(call.end(failed: true))
    }

    @Test("Cancels racing waits on other threads run each handler at most once, and exactly once when it was kept")
    func races() async {
        for round in UInt64(0)..<200 {
            let call = Self.call(100 + round)
            _ = call.attemptStarted(1)
            let runs = Runs()
            let kept = Runs()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        // Each wait either ends before a cancel (its handler dropped) or is stopped by it (run once).
                        let cancelledDuring = await call.withCancellationHandler { () -> Bool in
                            await Task.yield()
                            return call.isCancelled
                        } onCancel: {
                            runs.count.add(1, ordering: .relaxed)
                        }
                        if cancelledDuring { kept.count.add(1, ordering: .relaxed) }
                    }
                }
                group.addTask { call.cancel(.all) }
            }
            // A wait that saw the cancel before it ended had its handler run, once; no handler ran twice.
            #expect(runs.value >= kept.value)
            #expect(runs.value <= 3)
            #expect(call.end(failed: true))
        }
    }
}
