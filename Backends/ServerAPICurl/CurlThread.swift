#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The loop's thread: a detached POSIX thread, because Foundation's `Thread` is not part of
/// FoundationEssentials and the transport should not bring in all of Foundation for it.
enum CurlThread {
    /// Runs `body` on a new detached thread named `name` (at most 15 bytes: the kernel's limit).
    /// - Returns: Whether the thread was created.
    static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
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
            return false
        }
        #if canImport(Darwin)
            if let thread { pthread_detach(thread) }
        #else
            pthread_detach(thread)
        #endif
        return true
    }

    private final class Context: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }

        func run() {
            // Named from the thread itself, so that profilers and `top -H` show it.
            #if canImport(Darwin)
                pthread_setname_np(name)
            #else
                // The C library module leaves pthread_setname_np out (a GNU extension); the kernel takes the
                // calling thread's name from this file too.
                let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
                if file >= 0 {
                    _ = name.utf8CString.withUnsafeBufferPointer { write(file, $0.baseAddress, $0.count - 1) }
                    close(file)
                }
            #endif
            body()
        }
    }
}
