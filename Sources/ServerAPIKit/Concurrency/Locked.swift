import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// State behind a lock: `Synchronization.Mutex`, made visible to ThreadSanitizer.
///
/// Every shared mutable state in ServerAPIKit lives in one of these: change it under the lock,
/// collect what must be resumed or cancelled, act after unlocking.
///
/// Why not `Mutex` alone: on Linux, `Mutex` waits on a futex that ThreadSanitizer does not see,
/// so `swift test --sanitize=thread` reports every access under a `Mutex` as a race and real
/// races drown in the noise. When the ThreadSanitizer runtime is loaded, `Locked` tells it about
/// each lock and unlock (`__tsan_acquire` / `__tsan_release`); otherwise that costs one branch.
///
/// For this package's backends, not for users: public only to the `Backend` SPI (`@_spi(Backend) import
/// ServerAPIKit`), because Swift 6.3 specializes an `@inlinable` generic in another module only when it is
/// public (or SPI): as `package`, every backend's lock looked its state's type metadata up at run time, on
/// every call.
@_spi(Backend) public final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    /// Creates a lock around a value.
    @_spi(Backend) public init(_ value: consuming sending Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    /// - Important: Do not call back into code that takes the same lock: it is not recursive.
    @inlinable
    @_spi(Backend) public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try withLockAnnotated(body)
    }

    // Inlinable, so that every module specializes it for its own state: an unspecialized generic call
    // would look up type metadata at run time on every lock, in the transports' hot paths too.
    @inlinable
    @_spi(Backend) public func withLockAnnotated<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLockAnnotated(token: Unmanaged.passUnretained(self).toOpaque(), body)
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock`, telling ThreadSanitizer that `token` is acquired and released: it does not see the futex behind
    /// `Mutex`. `Locked` and the objects that keep a `Mutex` inline (`Call`) pass their own address.
    @inlinable
    func withLockAnnotated<Result, E: Error>(
        token: UnsafeMutableRawPointer, _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try withLock { (value: inout sending Value) throws(E) -> sending Result in
            ThreadSanitizerHooks.acquire?(token)
            defer { ThreadSanitizerHooks.release?(token) }
            return try body(&value)
        }
    }
}

/// The ThreadSanitizer runtime's annotation functions, when the runtime is loaded.
@usableFromInline
package enum ThreadSanitizerHooks {
    @usableFromInline
    package typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    package typealias Annotation = @convention(c) (UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Void

    /// A lock's: `scripts/bench-transports.sh --locks` counts the package's lock acquisitions by defining these two.
    @usableFromInline
    package static let acquire: Hook? = lookup("__tsan_acquire")
    @usableFromInline
    package static let release: Hook? = lookup("__tsan_release")
    /// A hand-over that is not a lock (a continuation resumed on another thread): what one thread did before
    /// `happensBefore` on an address, another sees after `happensAfter` on it.
    package static let happensBefore: Annotation? = lookup("AnnotateHappensBefore")
    package static let happensAfter: Annotation? = lookup("AnnotateHappensAfter")

    private static func lookup<Function>(_ name: String) -> Function? {
        // RTLD_DEFAULT: search every loaded image; the symbol exists only under -sanitize=thread.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }
}
