import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port whose connections are never completed: it listens with a backlog of zero and its
/// backlog is already full, so the kernel drops new connection attempts and a client's connect waits
/// until its connect timeout. What a test of connect timeouts needs without a network to time out on.
public final class UnansweredListener: Sendable {
    /// The port.
    public let port: Int
    private let descriptors: [Int32]

    /// Opens the listener on 127.0.0.1 at a port the kernel picks, and fills its backlog.
    /// - Throws: A `POSIXError` when a socket cannot be made or bound.
    public init() throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        (port, descriptors) = try Self.open(AF_INET, &address) { Int(UInt16(bigEndian: $0.sin_port)) }
    }

    /// Opens the listener on the IPv6 loopback (`::1`) at `port` and fills its backlog: next to a server on
    /// 127.0.0.1 at the same port, a name with both addresses has one that never answers.
    /// - Throws: A `POSIXError` when a socket cannot be made or bound.
    public init(ipv6Port port: Int) throws {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        address.sin6_port = UInt16(port).bigEndian
        (self.port, descriptors) = try Self.open(AF_INET6, &address) { Int(UInt16(bigEndian: $0.sin6_port)) }
    }

    deinit { for descriptor in descriptors { close(descriptor) } }

    /// Binds and listens with a backlog of zero at `address` (port 0: the kernel picks one, written back),
    /// then fills the backlog with connections that are never accepted.
    /// - Returns: The bound port and every descriptor opened (the listener first).
    private static func open<Address>(
        _ family: Int32, _ address: inout Address, port: (Address) -> Int
    ) throws -> (Int, [Int32]) {
        let listener = socket(family, streamSocketType, 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        if family == AF_INET6 {
            var only: Int32 = 1
            setsockopt(listener, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &only, socklen_t(MemoryLayout<Int32>.size))
        }
        var length = socklen_t(MemoryLayout<Address>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard listening else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var descriptors = [listener]
        // Connections the listener never accepts fill its backlog; a few more than its size, so the
        // kernel's leeway of one is used up too.
        for _ in 0..<3 {
            #if canImport(Glibc)
                let filler = socket(family, streamSocketType | Int32(SOCK_NONBLOCK.rawValue), 0)
                guard filler >= 0 else { break }
            #else
                // Darwin has no SOCK_NONBLOCK: the flag is set on the open socket.
                let filler = socket(family, streamSocketType, 0)
                guard filler >= 0 else { break }
                _ = fcntl(filler, F_SETFL, O_NONBLOCK)
            #endif
            descriptors.append(filler)
            _ = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    connect(filler, raw, socklen_t(MemoryLayout<Address>.size))
                }
            }
        }
        return (port(address), descriptors)
    }
}
