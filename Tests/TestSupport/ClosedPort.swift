import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port that was free a moment ago and has no listener now: connecting to
/// `127.0.0.1:closedPort()` is refused.
/// - Throws: A `POSIXError` when no socket can be made or bound.
/// - Important: Another process may take the port between this call and the test's connection;
///   on a loopback-only test machine that is rare, and the test then fails rather than passes.
public func closedPort() throws -> Int {
    let descriptor = socket(AF_INET, streamSocketType, 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `SOCK_STREAM` as `socket(2)` takes it: Glibc imports it as an enum case, Darwin as an `Int32`.
let streamSocketType: Int32 = {
    #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
    #else
        SOCK_STREAM
    #endif
}()
