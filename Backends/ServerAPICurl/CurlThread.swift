@_spi(Backend) import ServerAPIKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The threads of a transport, its loops', each a POSIX thread (Foundation's `Thread` is not
/// part of FoundationEssentials, and the transport should not bring in all of Foundation for it).
///
/// A thread is made joinable and detaches itself when its body returns, unless the transport's shutdown has
/// claimed it (`claimAll`): then it is kept until `joinAll` joins it, so that when the shutdown returns the thread
/// has left the process (`/proc/self/task`), not merely returned from its body. The group's lock is held while a
/// thread is created, so that the thread's end always finds its entry.
final class CurlThreads: Sendable {
    private struct Entry {
        var thread: pthread_t?
        var ended = false
        /// The kernel's id of the thread, once it runs (for tests that look at `/proc/self/task`).
        var taskID: Int?
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        /// No thread starts any more.
        var refusing = false
        /// Threads that end are kept to be joined, not detached.
        var claimed = false
        var endWaiters: [CheckedContinuation<Void, Never>] = []

        var allEnded: Bool { entries.values.allSatisfy(\.ended) }

        mutating func takeReadyWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !endWaiters.isEmpty, allEnded else { return [] }
            defer { endWaiters = [] }
            return endWaiters
        }
    }

    private let state = Locked(State())

    /// Why a thread was not started.
    enum Refusal: Error {
        /// The transport is shutting down.
        case shuttingDown
        /// The process is out of threads.
        case noThread
    }

    /// Runs `body` on a new thread named `name` (at most 15 bytes: the kernel's limit).
    /// - Returns: `nil` once the thread runs, or why it does not.
    func start(named name: String, body: @escaping @Sendable () -> Void) -> Refusal? {
        state.withLock { state in
            guard !state.refusing else { return .shuttingDown }
            state.nextID += 1
            let id = state.nextID
            let context = Unmanaged.passRetained(Context(name: name, id: id, threads: self, body: body)).toOpaque()
            #if canImport(Darwin)
                var thread: pthread_t?
            #else
                var thread = pthread_t()
            #endif
            let created = pthread_create(
                &thread, nil,
                { raw in
                    #if canImport(Darwin)
                        Unmanaged<Context>.fromOpaque(raw).takeRetainedValue().run()
                    #else
                        Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue().run()
                    #endif
                    return nil
                }, context)
            guard created == 0 else {
                Unmanaged<Context>.fromOpaque(context).release()
                return .noThread
            }
            state.entries[id] = Entry(thread: thread)
            return nil
        }
    }

    /// Starts no thread from now on.
    func refuseNew() {
        state.withLock { $0.refusing = true }
    }

    /// Keeps every thread that ends from now on to be joined by `joinAll`.
    func claimAll() {
        state.withLock { $0.claimed = true }
    }

    /// Returns once every thread has returned from its body.
    func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.allEnded { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Joins every claimed thread that has ended: when it returns, they have left the process. Blocks only for
    /// the exit of threads whose bodies have returned already.
    func joinAll() {
        let threads = state.withLock { state -> [pthread_t] in
            var threads: [pthread_t] = []
            for (id, entry) in state.entries where entry.ended {
                if let thread = entry.thread { threads.append(thread) }
                state.entries[id] = nil
            }
            return threads
        }
        for thread in threads { pthread_join(thread, nil) }
    }

    /// The kernel's ids of the threads that run now or are yet to be joined (tests).
    var taskIDs: [Int] { state.withLock { $0.entries.values.compactMap(\.taskID) } }

    /// A thread runs, with this kernel id.
    fileprivate func running(_ id: UInt64, taskID: Int?) {
        state.withLock { $0.entries[id]?.taskID = taskID }
    }

    /// A thread's body returned: it detaches itself, unless the shutdown claimed it to join it.
    fileprivate func ended(_ id: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.claimed {
                state.entries[id]?.ended = true
            } else {
                state.entries[id] = nil
                pthread_detach(pthread_self())
            }
            return state.takeReadyWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    private final class Context: Sendable {
        let name: String
        let id: UInt64
        let threads: CurlThreads
        let body: @Sendable () -> Void

        init(name: String, id: UInt64, threads: CurlThreads, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.id = id
            self.threads = threads
            self.body = body
        }

        func run() {
            // Named from the thread itself, so that profilers and `top -H` show it.
            #if canImport(Darwin)
                pthread_setname_np(name)
                threads.running(id, taskID: nil)
            #else
                // The C library module leaves pthread_setname_np out (a GNU extension); the kernel takes the
                // calling thread's name from this file too.
                let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
                if file >= 0 {
                    _ = name.utf8CString.withUnsafeBufferPointer { write(file, $0.baseAddress, $0.count - 1) }
                    close(file)
                }
                threads.running(id, taskID: Self.taskID())
            #endif
            body()
            threads.ended(id)
        }

        #if !canImport(Darwin)
            /// The calling thread's kernel id, from `/proc/thread-self` ("PID/task/TID"): `gettid` is not in the C
            /// library module.
            private static func taskID() -> Int? {
                var buffer = [CChar](repeating: 0, count: 64)
                let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
                guard count > 0 else { return nil }
                let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return link.split(separator: "/").last.flatMap { Int($0) }
            }
        #endif
    }
}
