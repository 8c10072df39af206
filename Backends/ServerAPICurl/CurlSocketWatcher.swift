#if os(Linux)
    internal import CCurl

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Drives a multi handle through libcurl's socket interface on an epoll set (Linux): libcurl says
    /// which sockets to watch (`CURLMOPT_SOCKETFUNCTION`) and when its next timeout is due
    /// (`CURLMOPT_TIMERFUNCTION`); the loop waits in `epoll_wait` and hands libcurl only the sockets that
    /// are ready (`curl_multi_socket_action`). Unlike `curl_multi_perform` and `curl_multi_poll`, which
    /// walk every transfer and every socket on each turn, a turn costs what is ready, however many
    /// transfers are in flight. The loop's wake-up descriptor is in the same epoll set.
    ///
    /// A loop's WebSockets have a watcher of their own, without a wake-up: its set holds the sockets libcurl is
    /// connecting and the connected WebSockets' (`CurlWebSocket.Wire`), and the loop waits on the set as a whole (an
    /// epoll descriptor is readable while a descriptor in its set is ready), then reads it without waiting (`poll`).
    /// It drives several multi handles (`attach`): each holds a few of the loop's WebSockets, as libcurl looks a
    /// connect-only handle's connection up among all of its multi handle's at every `curl_easy_send` and
    /// `curl_easy_recv`.
    ///
    /// - Important: Made on the loop thread and used only there, like the multi handle.
    final class CurlSocketWatcher {
        /// A multi handle the watcher drives, and when libcurl next wants
        /// `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` on it (`nil` for never). Its callbacks' context.
        final class Driven {
            let multi: UnsafeMutableRawPointer
            unowned let watcher: CurlSocketWatcher
            var timerDeadline: ContinuousClock.Instant?

            init(multi: UnsafeMutableRawPointer, watcher: CurlSocketWatcher) {
                self.multi = multi
                self.watcher = watcher
            }
        }

        /// The first multi handle; the others are `attach`ed.
        private var primary: Driven!
        private var others: [Driven] = []
        /// Which of the others owns a socket libcurl watches (the primary's are not listed).
        private var owners: [curl_socket_t: Driven] = [:]
        private let epoll: Int32
        private let wakeup: CurlWakeup?
        /// A descriptor the loop waits on with libcurl's but reads itself (the WebSockets' set), or -1.
        private var alsoWatched: Int32 = -1
        private let ready: UnsafeMutablePointer<ccurl_ready>
        private static let readyCapacity: Int32 = 256

        /// Creates the epoll set with the wake-up descriptor in it (when there is one) and installs libcurl's
        /// callbacks on `multi`; `nil` when the process is out of descriptors (the loop then polls).
        init?(multi: UnsafeMutableRawPointer, wakeup: CurlWakeup?) {
            let epoll = ccurl_epoll_create()
            guard epoll >= 0 else { return nil }
            if let wakeup, ccurl_epoll_watch(epoll, wakeup.readDescriptor, CURL_POLL_IN, 0) != 0 {
                close(epoll)
                return nil
            }
            self.epoll = epoll
            self.wakeup = wakeup
            ready = .allocate(capacity: Int(Self.readyCapacity))
            primary = install(on: multi)
        }

        /// Drives `multi` too, on the same epoll set.
        func attach(_ multi: UnsafeMutableRawPointer) {
            others.append(install(on: multi))
        }

        /// Installs libcurl's callbacks on `multi`, with its `Driven` as their context (kept alive by this watcher).
        private func install(on multi: UnsafeMutableRawPointer) -> Driven {
            let driven = Driven(multi: multi, watcher: self)
            let context = Unmanaged.passUnretained(driven).toOpaque()
            _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
            _ = ccurl_multi_setopt_socket_function(multi) { _, socket, what, context, socketp in
                guard let context else { return -1 }
                let driven = Unmanaged<Driven>.fromOpaque(context).takeUnretainedValue()
                driven.watcher.watch(socket, what: what, known: socketp != nil, by: driven)
                return 0
            }
            _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
            _ = ccurl_multi_setopt_timer_function(multi) { _, milliseconds, context in
                guard let context else { return -1 }
                let driven = Unmanaged<Driven>.fromOpaque(context).takeUnretainedValue()
                driven.timerDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
                return 0
            }
            return driven
        }

        /// The earliest of libcurl's timers on the multi handles; `nil` for none.
        var timerDeadline: ContinuousClock.Instant? {
            var earliest = primary.timerDeadline
            for driven in others {
                if let deadline = driven.timerDeadline { earliest = min(earliest ?? deadline, deadline) }
            }
            return earliest
        }

        /// Hands a ready socket to the multi handle that watches it.
        private func act(on socket: curl_socket_t, mask: Int32) {
            let multi = others.isEmpty ? primary.multi : (owners[socket] ?? primary).multi
            var running: Int32 = 0
            _ = curl_multi_socket_action(multi, socket, mask, &running)
        }

        /// The epoll set's descriptor: readable while a descriptor in the set is ready.
        var descriptor: Int32 { epoll }

        /// Watches `other` for reading besides libcurl's sockets; `wait` returns when it is ready but leaves it to
        /// the caller.
        func watchAlso(_ other: Int32) -> Bool {
            guard ccurl_epoll_watch(epoll, other, CURL_POLL_IN, 0) == 0 else { return false }
            alsoWatched = other
            return true
        }

        /// Handles what is ready now, without waiting: each descriptor `ours` does not take (it returns `false`) is
        /// libcurl's, and is handed to it; `collect` reads the completions after each.
        func poll(ours: (Int32, Int32) -> Bool, collect: () -> Void) {
            let count = ccurl_epoll_wait(epoll, ready, Self.readyCapacity, 0)
            guard count > 0 else { return }
            for index in 0..<Int(count) {
                let socket = ready[index].fd
                let mask = ready[index].mask
                if ours(socket, mask) { continue }
                act(on: socket, mask: mask)
                collect()
            }
        }

        /// Must outlive the multi handle: libcurl calls back into it until `curl_multi_cleanup` returns.
        deinit {
            ready.deallocate()
            close(epoll)
        }

        /// Adds, changes or removes a socket in the epoll set, as `driven`'s multi handle asks (from inside its
        /// calls). A socket libcurl knows as watched carries a non-nil `socketp` (`curl_multi_assign`).
        private func watch(_ socket: curl_socket_t, what: Int32, known: Bool, by driven: Driven) {
            if what == CURL_POLL_REMOVE {
                _ = ccurl_epoll_unwatch(epoll, socket)
                _ = curl_multi_assign(driven.multi, socket, nil)
                if driven !== primary { owners[socket] = nil }
                return
            }
            _ = ccurl_epoll_watch(epoll, socket, what, known ? 1 : 0)
            if driven !== primary { owners[socket] = driven }
            // Only whether it is set matters: any non-nil pointer.
            if !known { _ = curl_multi_assign(driven.multi, socket, UnsafeMutableRawPointer(bitPattern: 1)) }
        }

        /// Makes the next `runDueTimers` run libcurl's timers on `multi` (the first when `nil`): after an unpause,
        /// which in libcurl 7.x schedules the transfer without always telling the timer callback, or a new handle.
        func expireNow(_ multi: UnsafeMutableRawPointer? = nil) {
            let driven = multi.flatMap { multi in others.first { $0.multi == multi } } ?? primary!
            driven.timerDeadline = .now
        }

        /// Runs libcurl's timeout action on each multi handle whose timer is due; `collect` reads the completions.
        func runDueTimers(collect: () -> Void) {
            let now = ContinuousClock.now
            runTimer(primary, now: now, collect: collect)
            for driven in others { runTimer(driven, now: now, collect: collect) }
        }

        private func runTimer(_ driven: Driven, now: ContinuousClock.Instant, collect: () -> Void) {
            guard let deadline = driven.timerDeadline, deadline <= now else { return }
            driven.timerDeadline = nil
            var running: Int32 = 0
            _ = curl_multi_socket_action(driven.multi, ccurl_socket_timeout(), 0, &running)
            collect()
        }

        /// Waits until a socket is ready, libcurl's timer or `limit` is due, or another thread signals new
        /// work; hands libcurl each ready socket, and `collect` reads the completions after each.
        /// - Returns: Whether the descriptor watched besides libcurl's (`watchAlso`) was ready.
        @discardableResult
        func wait(until limit: ContinuousClock.Instant?, collect: () -> Void) -> Bool {
            var timeout: Int32 = 1000
            if let deadline = [timerDeadline, limit].compactMap(\.self).min() {
                let left = deadline - .now
                timeout = left <= .zero ? 0 : Int32(clamping: min(Int(timeout), left.curlMilliseconds))
            }
            let count = ccurl_epoll_wait(epoll, ready, Self.readyCapacity, timeout)
            guard count > 0 else { return false }
            var alsoReady = false
            for index in 0..<Int(count) {
                let socket = ready[index].fd
                if socket == alsoWatched {
                    alsoReady = true
                    continue
                }
                if let wakeup, socket == wakeup.readDescriptor {
                    // Drained before the inbox is read: a later signal belongs to work the next
                    // `takeWork` may not see yet, and it ends the next wait.
                    wakeup.drain()
                    continue
                }
                act(on: socket, mask: ready[index].mask)
                collect()
            }
            return alsoReady
        }
    }
#endif
