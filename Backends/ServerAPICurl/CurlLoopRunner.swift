internal import CCurl
import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The loop thread's state and its loop: the multi handle, the transfers in flight and idle easy handles.
///
/// With `Configuration.socketInterface` on Linux the loop drives libcurl's socket interface on an epoll set
/// (`CurlSocketWatcher`); otherwise, or when the epoll set cannot be made, it drives `curl_multi_perform` and
/// sleeps in `curl_multi_poll`.
///
/// WebSockets (Linux) live on the loop beside the transfers: libcurl connects each in one of the loop's multi
/// handles for WebSockets, 32 sockets each (`CURLOPT_CONNECT_ONLY`, configured as any transfer), whose socket
/// interface drives one epoll set that also holds the connected WebSockets' sockets (`CurlWebSocket.Wire`); the
/// loop waits on that set as one more descriptor. Their multi handles are not the transfers': libcurl keeps a
/// connect-only connection in the connection cache of the multi handle that made it, where the per-host and total
/// connection limits would close it to make room for another, or hold up new transfers behind it.
///
/// - Important: Made on the loop thread and used only there; nothing in it is shared.
final class CurlLoopRunner {
    private let loop: CurlLoop
    private let multi: UnsafeMutableRawPointer
    private let settings: CurlSettings
    /// The strong references to transfers libcurl knows by unretained pointer, by job id.
    private var transfers: [UInt64: CurlTransfer] = [:]
    /// When each streamed call waiting for its final head runs out of time (its timeout bounds the head
    /// only, so libcurl has no total timeout for it), by job id.
    private var headDeadlines: [UInt64: ContinuousClock.Instant] = [:]
    /// The transfers whose messages `collectFinishedTransfers` read, finished after the last is read
    /// (kept to reuse its storage).
    private var finished: [(CurlTransfer, CURLcode)] = []
    /// Reset easy handles ready for the next transfer (saves an allocation and libcurl's set-up).
    private var idleHandles: [CurlEasyHandle] = []
    /// The most transfers this loop has had in flight at once since it last had none: that many idle
    /// handles are kept, so that a thousand calls at once reuse their handles instead of making and
    /// freeing one (about 5 KB in libcurl) per call.
    private var peakTransfers = 0
    /// The idle handles kept whatever the load, and all that are kept once no transfer is in flight.
    private static let minIdleHandles = 64
    /// The connections libcurl keeps for reuse (`CURLMOPT_MAXCONNECTS`): libcurl's own rule, four per transfer,
    /// but counted from the most transfers this loop has had in flight, not from those in flight when a connection
    /// is handed back. Between a finished transfer leaving and its caller's next call arriving the count dips, and
    /// libcurl closed the connections the next calls needed: 64 calls in flight over HTTP/1.1 on libcurl 8.14
    /// opened 84 to 187 connections where 64 serve (`scripts/bench-transports.sh --http3`).
    private var connectionCacheSize = 0
    #if os(Linux)
        /// The epoll set driving libcurl's socket interface; `nil` when it could not be made.
        private let watcher: CurlSocketWatcher?
    #endif
    /// How long `curl_multi_poll` waits when libcurl has no earlier timer (a wake-up ends it early).
    private static let pollMilliseconds: Int32 = 1000
    #if os(Linux)
        /// The multi handles that connect the loop's WebSockets and keep their connections, each with how many it
        /// holds, and their watcher, whose epoll set holds the connected WebSockets' sockets too; made for the first.
        /// libcurl finds a connect-only handle's connection at each `curl_easy_send` and `curl_easy_recv` by walking
        /// every connection of its multi handle: so a multi handle holds at most
        /// `CurlWebSocket.socketsPerMultiHandle`, and a send's cost does not grow with the loop's sockets.
        private var webSocketMultis: [(multi: UnsafeMutableRawPointer, sockets: Int)] = []
        /// Which of `webSocketMultis` holds each WebSocket's handle, by job id.
        private var webSocketMultiOf: [UInt64: Int] = [:]
        private var webSocketWatcher: CurlSocketWatcher?
        /// Where every WebSocket of the loop reads into (`curl_easy_recv`): an idle socket holds no buffer.
        private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        /// WebSockets whose connection libcurl is making, by job id.
        private var connecting: [UInt64: CurlTransfer] = [:]
        /// Connected WebSockets, by job id and by descriptor.
        private var webSockets: [UInt64: CurlWebSocket.Wire] = [:]
        private var wires: [Int32: CurlWebSocket.Wire] = [:]
        /// Whether the WebSockets' epoll set may hold ready descriptors: the loop's last wait found it readable, or
        /// the loop went round without waiting. Otherwise a turn does not look (an `epoll_wait` saved per turn).
        private var webSocketsMayBeReady = true
    #endif

    init(
        loop: CurlLoop, multi: CurlMultiHandle, configuration: CurlTransport.Configuration, altSvc: CurlAltSvcFile?,
        makeDownloadWriter: @escaping CurlDownloadWriterFactory
    ) {
        self.loop = loop
        self.multi = multi.raw
        settings = CurlSettings(configuration, altSvc: altSvc, makeDownloadWriter: makeDownloadWriter)
        _ = ccurl_multi_setopt_long(self.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(0, configuration.maxConnections))
        _ = ccurl_multi_setopt_long(
            self.multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maxConnectionsPerHost))
        #if os(Linux)
            watcher =
                configuration.socketInterface
                ? loop.wakeup.flatMap { CurlSocketWatcher(multi: multi.raw, wakeup: $0) } : nil
        #endif
    }

    /// Runs until the transport is released, then ends every transfer and frees the multi handle.
    func run() {
        loop.enteringLoopThread()
        var jobs: [CurlJob] = []
        var cancellations: [UInt64] = []
        var resumptions: [CurlResumption] = []
        var tasks: [CurlTask] = []
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        while true {
            let shuttingDown = loop.takeWork(
                jobs: &jobs, cancellations: &cancellations, resumptions: &resumptions, tasks: &tasks,
                idleWaiters: &idleWaiters)
            for id in cancellations { cancelTransfer(id: id) }
            cancellations.removeAll(keepingCapacity: true)
            for resumption in resumptions { resume(resumption) }
            resumptions.removeAll(keepingCapacity: true)
            for job in jobs { start(job) }
            jobs.removeAll(keepingCapacity: true)
            if shuttingDown { break }
            // Callers that prefer this thread continue here: what they send next is in the inbox
            // before libcurl is driven again, with no wake-up between threads.
            if !tasks.isEmpty {
                // Held until the tasks ran: the unowned reference below does not keep it alive.
                let transportExecutor = loop.transportExecutor
                withExtendedLifetime(transportExecutor) {
                    let own = loop.asUnownedTaskExecutor()
                    let shared = transportExecutor?.asUnownedTaskExecutor() ?? own
                    for task in tasks { task.job.runSynchronously(on: task.viaTransport ? shared : own) }
                }
                tasks.removeAll(keepingCapacity: true)
            }
            drive()
            #if os(Linux)
                driveWebSockets()
            #endif
            if !headDeadlines.isEmpty { checkHeadDeadlines() }
            // The transport's shutdown waits for the loop's transfers and WebSockets to end (its grace period).
            if !idleWaiters.isEmpty, transfers.isEmpty, !hasWebSockets {
                for waiter in idleWaiters { waiter.resume() }
                idleWaiters.removeAll()
            }
            // Work handed over on this thread (a resumed caller's next request) sent no wake-up.
            if !loop.hasWork {
                waitForWork()
            } else {
                #if os(Linux)
                    webSocketsMayBeReady = true
                #endif
            }
        }
        let (late, waiting, lateIdleWaiters) = loop.close()
        for job in late { job.fail(.cancelled("the transport was shut down")) }
        for id in Array(transfers.keys) { cancelTransfer(id: id, reason: .cancelled("the transport was shut down")) }
        #if os(Linux)
            closeWebSockets(.cancelled("the transport was shut down"))
        #endif
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
        #if os(Linux)
            // The watcher outlives the multi handle: libcurl calls back into it until the clean-up returns.
            withExtendedLifetime(watcher) {}
        #endif
        // Tasks that still prefer this thread run elsewhere from now on (as CurlLoop.enqueue does).
        for task in tasks + waiting { loop.runElsewhere(task) }
        for waiter in idleWaiters + lateIdleWaiters { waiter.resume() }
    }

    /// Lets libcurl make progress on every transfer that can, and ends those that finished.
    private func drive() {
        #if os(Linux)
            if let watcher { return watcher.runDueTimers(collect: collectFinishedTransfers) }
        #endif
        var running: Int32 = 0
        _ = curl_multi_perform(multi, &running)
        collectFinishedTransfers()
    }

    /// Sleeps until a socket is ready, libcurl's next timer, or another thread signals new work.
    private func waitForWork() {
        var deadline = headDeadlines.values.min()
        #if os(Linux)
            if let timer = webSocketWatcher?.timerDeadline { deadline = min(deadline ?? timer, timer) }
            if let watcher {
                let alsoReady = watcher.wait(until: deadline, collect: collectFinishedTransfers)
                webSocketsMayBeReady = alsoReady
                return
            }
            webSocketsMayBeReady = true
        #endif
        guard let wakeup = loop.wakeup else { return }
        var milliseconds = Self.pollMilliseconds
        if let deadline {
            let left = (deadline - .now).curlMilliseconds
            milliseconds = Int32(clamping: min(Int(milliseconds), left))
        }
        // On the stack: this runs at every turn of the loop that waits.
        withUnsafeTemporaryAllocation(of: curl_waitfd.self, capacity: 2) { waiting in
            waiting[0] = curl_waitfd(fd: wakeup.readDescriptor, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            var count = 1
            #if os(Linux)
                // The WebSockets' epoll set: readable when one of them (or a socket libcurl is connecting) is ready.
                if let webSocketWatcher {
                    waiting[1] = curl_waitfd(
                        fd: webSocketWatcher.descriptor, events: Int16(CURL_WAIT_POLLIN), revents: 0)
                    count = 2
                }
            #endif
            _ = curl_multi_poll(multi, waiting.baseAddress, UInt32(count), milliseconds, nil)
            // Drained before the inbox is read: a signal sent after this belongs to work the next
            // `takeWork` may not see yet, and it wakes the next poll.
            if waiting[0].revents != 0 { wakeup.drain() }
            #if os(Linux)
                if count == 2 { webSocketsMayBeReady = waiting[1].revents != 0 }
            #endif
        }
    }

    // MARK: Starting

    private func start(_ job: CurlJob) {
        if let socket = job.webSocket {
            #if os(Linux)
                return startWebSocket(job, socket)
            #else
                return job.fail(ServerAPIError(.unsupported, CurlTransport.webSocketSupport ?? "no WebSockets here"))
            #endif
        }
        guard let easy = takeHandle() else {
            return job.fail(ServerAPIError(.network, "libcurl could not create an easy handle"))
        }
        let transfer = CurlTransfer(job: job, easy: easy, settings: settings, loop: loop)
        do throws(ServerAPIError) {
            try transfer.begin()
            try add(transfer)
        } catch {
            transfer.abandon()
            recycle(transfer.easy)
            return job.fail(error)
        }
        transfers[job.id] = transfer
        peakTransfers = max(peakTransfers, transfers.count)
        if transfers.count * 4 > connectionCacheSize {
            connectionCacheSize = transfers.count * 4
            _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connectionCacheSize)
        }
        loop.activeTransfers.add(1, ordering: .relaxed)
        if job.streaming != nil { headDeadlines[job.id] = transfer.started + job.request.timeout }
    }

    // MARK: Streaming

    /// Resumes a transfer paused for its streamed body (either way); ignores one that has ended.
    private func resume(_ resumption: CurlResumption) {
        let code: CURLcode
        let transfer: CurlTransfer
        switch resumption {
        case .receiving(let id):
            guard let found = transfers[id] else { return }
            transfer = found
            code = transfer.resume(receiving: true)
        case .sending(let id):
            guard let found = transfers[id] else { return }
            transfer = found
            code = transfer.resume(receiving: false)
        case .webSocket(let id):
            #if os(Linux)
                guard let wire = webSockets[id] else { return }
                wire.service(scratch: scratch)
                update(wire)
            #endif
            return
        }
        #if os(Linux)
            // libcurl scheduled the unpaused transfer, not always telling the timer callback.
            watcher?.expireNow()
        #endif
        // A callback stopped the transfer while libcurl delivered what it held back: it ends now.
        if code != CURLE_OK, transfers[transfer.job.id] === transfer { finish(transfer, code: code) }
    }

    /// Fails the streamed calls whose final head did not arrive within their timeout.
    private func checkHeadDeadlines() {
        let now = ContinuousClock.now
        for (id, deadline) in headDeadlines {
            #if os(Linux)
                if let wire = webSockets[id] {
                    if now >= deadline {
                        wire.deadlinePassed()
                        update(wire)
                    }
                    continue
                }
                if let transfer = connecting[id] {
                    if now >= deadline { cancelConnecting(id, reason: .timedOut(after: transfer.job.request.timeout)) }
                    continue
                }
            #endif
            guard let transfer = transfers[id], !transfer.headDelivered else {
                headDeadlines[id] = nil
                continue
            }
            guard now >= deadline else { continue }
            cancelTransfer(id: id, reason: .timedOut(after: transfer.job.request.timeout))
        }
    }

    private func add(_ transfer: CurlTransfer) throws(ServerAPIError) {
        let code = curl_multi_add_handle(multi, transfer.easy.raw)
        guard code == CURLM_OK else {
            throw ServerAPIError(
                .network, "libcurl could not start the transfer: \(String(cString: curl_multi_strerror(code)))")
        }
    }

    // MARK: Finishing

    private func collectFinishedTransfers() {
        // Every message is read before any handle leaves the multi handle: `curl_multi_remove_handle`
        // looks for the handle's message among those still queued, so removing while a thousand
        // calls' messages wait would walk the queue once per call.
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            // The message is invalid once its handle leaves the multi handle: copy what we need first.
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context) == CURLE_OK, let context else {
                continue
            }
            finished.append((Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue(), code))
        }
        guard !finished.isEmpty else { return }
        // Taken out while they finish, so that nothing a completion does can change the list being walked.
        var batch: [(CurlTransfer, CURLcode)] = []
        swap(&batch, &finished)
        for (transfer, code) in batch { finish(transfer, code: code) }
        batch.removeAll(keepingCapacity: true)
        if finished.isEmpty { finished = batch }
    }

    private func finish(_ transfer: CurlTransfer, code: CURLcode) {
        _ = curl_multi_remove_handle(multi, transfer.easy.raw)
        switch transfer.complete(code: code) {
        case .again:
            if transfer.easy.needsReset { transfer.easy.reset() }
            do throws(ServerAPIError) {
                try transfer.configure()
                try add(transfer)
            } catch {
                transfer.abandon()
                end(transfer)
                transfer.report(error, metrics: nil)
            }
        case .response(let response):
            end(transfer)
            transfer.job.continuation.resume(returning: response)
        case .streamEnded(let metrics, let trailers):
            end(transfer)
            transfer.source?.finish(metrics: metrics, trailers: trailers)
        case .failure(let error):
            let metrics = transfer.streamMetrics
            end(transfer)
            transfer.report(error, metrics: metrics)
        }
    }

    /// Forgets a transfer whose handle has left the multi handle, keeping the handle for the next one.
    private func end(_ transfer: CurlTransfer) {
        if transfers.removeValue(forKey: transfer.job.id) != nil {
            loop.activeTransfers.subtract(1, ordering: .relaxed)
        }
        headDeadlines[transfer.job.id] = nil
        recycle(transfer.easy)
        if transfers.isEmpty { trimIdleHandles() }
        transfer.releaseRequestResources()
    }

    private func cancelTransfer(id: UInt64, reason: ServerAPIError = .cancelled()) {
        guard let transfer = transfers[id] else {
            #if os(Linux)
                cancelWebSocketHandshake(id, reason: reason)
            #endif
            return
        }
        _ = curl_multi_remove_handle(multi, transfer.easy.raw)
        let metrics = transfer.streamMetrics
        transfer.abandon()
        end(transfer)
        transfer.report(reason, metrics: metrics)
    }

    /// Resets a handle that has left the multi handle and keeps it for the next transfer.
    private func recycle(_ easy: CurlEasyHandle) {
        // Every pointer to the transfer (callbacks' context, PRIVATE) is cleared before the transfer can be
        // released. A handle whose transfer set only what every transfer sets keeps its other options (a reset and
        // setting them again cost more than the transfer's own work in libcurl); with an alt-svc cache, a new
        // handle replaces it (`CurlAltSvcFile` says why).
        if settings.altSvc != nil {
            easy.renew()
        } else if easy.needsReset {
            easy.reset()
        } else {
            easy.forgetTransfer()
        }
        if idleHandles.count < max(Self.minIdleHandles, peakTransfers) { idleHandles.append(easy) }
        loop.idleHandles.store(idleHandles.count, ordering: .relaxed)
    }

    /// With nothing in flight, frees the handles a burst of calls left beyond `minIdleHandles`.
    private func trimIdleHandles() {
        peakTransfers = 0
        guard idleHandles.count > Self.minIdleHandles else { return }
        idleHandles.removeLast(idleHandles.count - Self.minIdleHandles)
        loop.idleHandles.store(idleHandles.count, ordering: .relaxed)
    }

    /// An idle handle, or a new one; `nil` when libcurl cannot allocate one.
    private func takeHandle() -> CurlEasyHandle? {
        if let easy = idleHandles.popLast() {
            loop.idleHandles.store(idleHandles.count, ordering: .relaxed)
            return easy
        }
        loop.handlesMade.add(1, ordering: .relaxed)
        return CurlEasyHandle()
    }
}

#if os(Linux)
    // MARK: WebSockets

    extension CurlLoopRunner {
        /// The size of `scratch`.
        private static let scratchSize = 64 << 10

        /// Whether the loop has WebSockets connecting or connected.
        fileprivate var hasWebSockets: Bool { !connecting.isEmpty || !webSockets.isEmpty }

        /// Makes the WebSockets' first multi handle, watcher and scratch buffer, once; `false` when they cannot be
        /// made.
        private func setUpWebSockets() -> Bool {
            if webSocketWatcher != nil { return true }
            guard let made = CurlMultiHandle.make() else { return false }
            guard let watcher = CurlSocketWatcher(multi: made, wakeup: nil),
                self.watcher.map({ $0.watchAlso(watcher.descriptor) }) ?? true
            else {
                curl_multi_cleanup(made)
                return false
            }
            webSocketMultis = [(made, 0)]
            webSocketWatcher = watcher
            scratch = .allocate(byteCount: Self.scratchSize, alignment: 16)
            return true
        }

        /// A multi handle with room for one more WebSocket (a new one when all are full), counted as holding it;
        /// `nil` when the loop cannot watch WebSockets or libcurl cannot make one.
        private func takeWebSocketMulti(for id: UInt64) -> UnsafeMutableRawPointer? {
            guard setUpWebSockets(), let webSocketWatcher else { return nil }
            var index = webSocketMultis.firstIndex { $0.sockets < CurlWebSocket.socketsPerMultiHandle }
            if index == nil, let made = CurlMultiHandle.make() {
                webSocketWatcher.attach(made)
                webSocketMultis.append((made, 0))
                index = webSocketMultis.count - 1
            }
            guard let index else { return nil }
            webSocketMultis[index].sockets += 1
            webSocketMultiOf[id] = index
            return webSocketMultis[index].multi
        }

        /// Takes a WebSocket's handle out of its multi handle (which closes its connection).
        private func removeFromWebSocketMulti(_ id: UInt64, _ easy: CurlEasyHandle) {
            guard let index = webSocketMultiOf.removeValue(forKey: id) else { return }
            _ = curl_multi_remove_handle(webSocketMultis[index].multi, easy.raw)
            webSocketMultis[index].sockets -= 1
        }

        /// Starts connecting a WebSocket: a transfer configured as any other, connect-only (`CurlTransfer.configure`).
        fileprivate func startWebSocket(_ job: CurlJob, _ socket: CurlWebSocket) {
            guard let easy = takeHandle() else {
                return job.fail(ServerAPIError(.network, "libcurl could not create an easy handle"))
            }
            guard let webSocketMulti = takeWebSocketMulti(for: job.id) else {
                recycle(easy)
                return job.fail(ServerAPIError(.network, "the transport could not watch a WebSocket"))
            }
            let transfer = CurlTransfer(job: job, easy: easy, settings: settings, loop: loop)
            do throws(ServerAPIError) {
                try transfer.begin()
                let code = curl_multi_add_handle(webSocketMulti, easy.raw)
                guard code == CURLM_OK else {
                    throw ServerAPIError(
                        .network, "libcurl could not start the transfer: \(String(cString: curl_multi_strerror(code)))")
                }
            } catch {
                removeFromWebSocketMulti(job.id, easy)
                transfer.abandon()
                recycle(easy)
                socket.ended(error)
                return job.fail(error)
            }
            connecting[job.id] = transfer
            headDeadlines[job.id] = transfer.started + job.request.timeout
            webSocketWatcher?.expireNow(webSocketMulti)
        }

        /// Lets libcurl make progress on the connections it is making, and the WebSockets on theirs.
        fileprivate func driveWebSockets() {
            // Also once the last WebSocket is gone: libcurl may still watch a connection it is shutting down.
            guard let webSocketWatcher else { return }
            webSocketWatcher.runDueTimers(collect: collectConnected)
            guard webSocketsMayBeReady else { return }
            webSocketsMayBeReady = false
            webSocketWatcher.poll(
                ours: { descriptor, mask in
                    guard let wire = wires[descriptor] else { return false }
                    wire.ready(mask, scratch: scratch)
                    update(wire)
                    return true
                }, collect: collectConnected)
        }

        /// Takes the connections libcurl has made (or failed to make).
        private func collectConnected() {
            var done: [(CurlTransfer, CURLcode)] = []
            var remaining: Int32 = 0
            for (multi, _) in webSocketMultis {
                while let message = curl_multi_info_read(multi, &remaining) {
                    guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else {
                        continue
                    }
                    var context: UnsafeMutableRawPointer?
                    guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context) == CURLE_OK, let context else {
                        continue
                    }
                    done.append(
                        (
                            Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue(),
                            message.pointee.data.result
                        ))
                }
            }
            for (transfer, code) in done { connected(transfer, code: code) }
        }

        /// libcurl connected a WebSocket (TCP, a proxy's tunnel, TLS), or could not: the handshake starts on the
        /// connection. The handle stays in the multi handle: libcurl finds a connect-only handle's connection in the
        /// multi handle's connection cache, and closes it when the handle leaves.
        private func connected(_ transfer: CurlTransfer, code: CURLcode) {
            let id = transfer.job.id
            guard connecting.removeValue(forKey: id) != nil, let socket = transfer.job.webSocket else { return }
            let descriptor = code == CURLE_OK ? ccurl_active_socket(transfer.easy.raw) : CURL_SOCKET_BAD
            guard descriptor != CURL_SOCKET_BAD else {
                let error: ServerAPIError
                if code == CURLE_OK {
                    error = ServerAPIError(.network, "libcurl connected the WebSocket without a socket")
                } else if case .failure(let failure) = transfer.complete(code: code) {
                    error = failure
                } else {
                    error = .curl(code, detail: transfer.easy.errorMessage)
                }
                return abandonConnecting(transfer, socket, error)
            }
            let wire = CurlWebSocket.Wire(socket: socket, transfer: transfer, descriptor: descriptor)
            webSockets[id] = wire
            wires[descriptor] = wire
            wire.start(scratch: scratch)
            update(wire)
        }

        /// Ends a WebSocket libcurl is connecting (cancelled, timed out, the loop stops).
        private func cancelConnecting(_ id: UInt64, reason: ServerAPIError) {
            guard let transfer = connecting.removeValue(forKey: id), let socket = transfer.job.webSocket else { return }
            abandonConnecting(transfer, socket, reason)
        }

        private func abandonConnecting(_ transfer: CurlTransfer, _ socket: CurlWebSocket, _ error: ServerAPIError) {
            removeFromWebSocketMulti(transfer.job.id, transfer.easy)
            headDeadlines[transfer.job.id] = nil
            transfer.abandon()
            recycle(transfer.easy)
            socket.ended(error)
            transfer.report(error, metrics: nil)
        }

        /// Cancels a WebSocket's handshake (the caller's task was cancelled); an open WebSocket is the core's to
        /// close.
        fileprivate func cancelWebSocketHandshake(_ id: UInt64, reason: ServerAPIError) {
            if connecting[id] != nil { return cancelConnecting(id, reason: reason) }
            guard let wire = webSockets[id] else { return }
            switch wire.phase {
            case .handshake, .refused:
                wire.fail(reason)
                update(wire)
            case .open, .closing, .finished:
                break
            }
        }

        /// Watches a WebSocket's descriptor for what it waits for, keeps its deadline, and releases it once it is
        /// finished.
        fileprivate func update(_ wire: CurlWebSocket.Wire) {
            guard let webSocketWatcher else { return }
            let id = wire.id
            if wire.isFinished { return release(wire) }
            headDeadlines[id] = wire.deadline
            let interest = wire.interest
            guard interest != wire.watched else { return }
            if let interest {
                _ = ccurl_epoll_watch(
                    webSocketWatcher.descriptor, wire.descriptor, interest, wire.watched == nil ? 0 : 1)
            } else {
                _ = ccurl_epoll_unwatch(webSocketWatcher.descriptor, wire.descriptor)
            }
            wire.watched = interest
        }

        /// Forgets a finished WebSocket: its descriptor leaves the set before its handle leaves the multi handle,
        /// which closes the connection.
        private func release(_ wire: CurlWebSocket.Wire) {
            let id = wire.id
            if let webSocketWatcher, wire.watched != nil {
                _ = ccurl_epoll_unwatch(webSocketWatcher.descriptor, wire.descriptor)
            }
            wire.watched = nil
            webSockets[id] = nil
            if wires[wire.descriptor] === wire { wires[wire.descriptor] = nil }
            headDeadlines[id] = nil
            removeFromWebSocketMulti(id, wire.easy)
            wire.handshakeDone()
            recycle(wire.easy)
        }

        /// Ends every WebSocket of the loop (it stops) and frees their multi handle.
        fileprivate func closeWebSockets(_ reason: ServerAPIError) {
            for id in Array(connecting.keys) { cancelConnecting(id, reason: reason) }
            for wire in Array(webSockets.values) {
                wire.fail(reason)
                release(wire)
            }
            for (multi, _) in webSocketMultis { curl_multi_cleanup(multi) }
            webSocketMultis = []
            webSocketMultiOf = [:]
            // The watcher outlives the multi handle: libcurl calls back into it until the clean-up returns.
            webSocketWatcher = nil
            scratch.deallocate()
            scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
    }
#else
    extension CurlLoopRunner {
        fileprivate var hasWebSockets: Bool { false }
    }
#endif
