import Foundation
@_spi(Backend) import ServerAPIKit

/// An `InputStream` over a `BodyReader`: URLSession pulls the request body from it a chunk
/// at a time, so files (and multipart bodies with file parts) are sent from disk without ever
/// being read whole.
///
/// A subclass, not a bound stream pair: FoundationNetworking reads `httpBodyStream` on its own
/// queue with plain `read(_:maxLength:)` calls, so a pull-based stream needs no extra thread and
/// no copy, and its memory use is one chunk whatever the body's size.
///
/// - Important: Untested on Apple platforms, where CFNetwork schedules a body stream on a run loop through
///   private methods that an `InputStream` subclass is reported not to implement; a file body may need a
///   bound stream pair there (`Stream.getBoundStreams(withBufferSize:inputStream:outputStream:)`).
final class BodyInputStream: InputStream {
    private let reader: BodyReader
    private var status: Stream.Status = .notOpen
    private var failure: ServerAPIError?
    private let failureBox: FailureBox

    /// Where a read failure is kept so the transfer can report it instead of the URLError it causes.
    final class FailureBox: Sendable {
        let error = Locked<ServerAPIError?>(nil)
    }

    /// Creates a stream over a body.
    /// - Parameters:
    ///   - reader: The body's reader.
    ///   - failureBox: Receives the error if reading the body fails.
    init(reader: BodyReader, failureBox: FailureBox) {
        self.reader = reader
        self.failureBox = failureBox
        super.init(data: Data())
    }

    override func open() {
        if status == .notOpen { status = .open }
    }

    override func close() { status = .closed }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure }

    // FoundationNetworking ends the body when this turns false, so it stays true until the end.
    override var hasBytesAvailable: Bool { status == .open || status == .notOpen }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard hasBytesAvailable, length > 0 else { return status == .error ? -1 : 0 }
        status = .open
        do {
            let count = try reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
            if count == 0 { status = .atEnd }
            return count
        } catch {
            failure = error
            failureBox.error.withLock { $0 = error }
            status = .error
            return -1
        }
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    // swift-corelibs-foundation declares these with `AnyObject?`, Apple's Foundation with `Any?`.
    #if canImport(FoundationNetworking)
        override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }

        override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    #else
        override func property(forKey key: Stream.PropertyKey) -> Any? { nil }

        override func setProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool { false }
    #endif
}
