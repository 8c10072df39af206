import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C as an event `sapi` reads, whichever thread the kernel hands the signal to.
///
/// A handler writes one byte to a pipe and a dispatch source reads the pipe, so that no signal is lost. A dispatch
/// signal source would lose some on Linux: it reads a signalfd, and the main thread, which `dispatch_main` parks in
/// `sigsuspend` with every signal unblocked, takes the signal first now and then and drops it.
enum Interrupt {
    /// The pipe's write end, for the handler; set once, before the handler is installed.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    /// The pipe's read end.
    nonisolated(unsafe) private static var readEnd: Int32 = -1

    /// Installs the handler. A Ctrl-C from here on is held until `onInterrupt` reads it: one pressed while the
    /// request is built cancels it as soon as it starts.
    static func install() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        let handler: @convention(c) (Int32) -> Void = { _ in
            let saved = errno
            var byte: UInt8 = 1
            // A full pipe already holds an interrupt nobody has read: this one adds nothing.
            _ = write(Interrupt.writeEnd, &byte, 1)
            errno = saved
        }
        var action = sigaction()
        #if os(Linux)
            action.__sigaction_handler.sa_handler = handler
        #else
            action.__sigaction_u.__sa_handler = handler
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, nil)
    }

    /// Calls `action` on each Ctrl-C, including one pressed since `install`, until the returned source is cancelled.
    /// Without a pipe (`install` could not make one) Ctrl-C keeps its default: it ends the process.
    static func onInterrupt(_ action: @escaping @Sendable () -> Void) -> (any DispatchSourceRead)? {
        guard readEnd >= 0 else { return nil }
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .global())
        let readEnd = readEnd
        source.setEventHandler {
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = read(readEnd, &bytes, bytes.count)
            for _ in 0..<max(count, 0) { action() }
        }
        source.resume()
        return source
    }
}
