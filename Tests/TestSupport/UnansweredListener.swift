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

    /// Opens the listener and fills its backlog.
    /// - Throws: A `POSIXError` when a socket cannot be made, bound or connected.
    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
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
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { break }
            descriptors.append(filler)
            _ = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    connect(filler, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptors = descriptors
    }

    /// Opens the listener on the IPv6 loopback (`::1`) at `port` and fills its backlog: next to a server on
    /// 127.0.0.1 at the same port, a name with both addresses has one that never answers.
    /// - Throws: A `POSIXError` when a socket cannot be made, bound or connected.
    public init(ipv6Port port: Int) throws {
        let listener = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var only: Int32 = 1
        setsockopt(listener, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &only, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        address.sin6_port = UInt16(port).bigEndian
        let size = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, size) == 0 && listen(listener, 0) == 0
            }
        }
        guard listening else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var descriptors = [listener]
        for _ in 0..<3 {
            let filler = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { break }
            descriptors.append(filler)
            _ = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in connect(filler, raw, size) }
            }
        }
        self.port = port
        self.descriptors = descriptors
    }

    deinit { for descriptor in descriptors { close(descriptor) } }
}
