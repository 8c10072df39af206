#if os(Linux)
    internal import CCurl
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An eventfd (a pipe where there is none) other threads make readable to end the loop thread's wait (`epoll_wait`, or `curl_multi_poll`: what
/// `curl_multi_wakeup` does inside libcurl, but ours, so its lifetime is ours to decide). It is
/// non-blocking, so a signal never blocks the caller, and signals that pile up before the loop
/// drains them cost nothing more than one.
final class CurlWakeup: Sendable {
    /// The descriptor the loop polls.
    let readDescriptor: Int32
    private let writeDescriptor: Int32

    /// Opens the pipe; `nil` when the process is out of descriptors.
    init?() {
        #if os(Linux)
            // An eventfd: one descriptor, read and written by the same end.
            let descriptor = ccurl_eventfd()
            guard descriptor >= 0 else { return nil }
            readDescriptor = descriptor
            writeDescriptor = descriptor
        #else
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
            readDescriptor = ends[0]
            writeDescriptor = ends[1]
        #endif
    }

    deinit {
        close(readDescriptor)
        if writeDescriptor != readDescriptor { close(writeDescriptor) }
    }

    /// Makes the descriptor readable (any thread). A full pipe is already readable.
    func signal() {
        // An eventfd takes an 8-byte count; a pipe, any byte.
        var count: UInt64 = 1
        _ = write(writeDescriptor, &count, MemoryLayout<UInt64>.size)
    }

    /// Reads every pending signal (loop thread), so the next poll sleeps again.
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
