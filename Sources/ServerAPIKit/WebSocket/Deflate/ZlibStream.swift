internal import CZlib

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// zlib's z_stream holds pointers into itself: it lives at a fixed address (allocated once), is used by one
// thread at a time (its owner's lock or task), and is ended once, in deinit. Output goes through a bounded
// scratch buffer on the stack, so that what a stream produces is checked against a limit before it is kept.

/// The scratch buffer each step of zlib writes into: what is produced is copied out and counted, step by step.
private let scratchSize = 16 * 1024

/// A raw DEFLATE decompressor (RFC 1951, no zlib or gzip wrapper), for permessage-deflate.
final class ZlibInflater {
    /// How a call to `inflate` ended.
    enum Outcome: Equatable {
        /// All the input was consumed.
        case consumed
        /// The stream's final block ended; the input after it was not read.
        case ended
        /// The output would pass the limit: the stream is no longer usable.
        case overLimit
        /// The input is not DEFLATE data (zlib's message).
        case invalid(String)
    }

    private let stream: UnsafeMutablePointer<z_stream>

    /// Creates a decompressor whose window is 2^`windowBits` bytes (8–15).
    /// - Throws: `ServerAPIError` (`network`) when zlib cannot make one (out of memory).
    init(windowBits: Int) throws(ServerAPIError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_inflate_init_raw(stream, Int32(windowBits))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ServerAPIError(.network, "zlib could not make an inflater (error \(status))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts a new stream (a new message without context takeover, or after a final block).
    func reset() { inflateReset(stream) }

    /// Inflates `input`, appending what it makes to `output`, in steps of at most 16 KiB.
    /// - Parameters:
    ///   - input: Compressed bytes.
    ///   - output: Where the inflated bytes go.
    ///   - limit: The most bytes `output` may hold: the step that would pass it stops, and nothing of it is kept.
    func inflate(_ input: UnsafeRawBufferPointer, into output: inout Data, limit: Int) -> Outcome {
        guard let base = input.baseAddress, !input.isEmpty else { return .consumed }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: scratchSize) { scratch in
            while true {
                stream.pointee.next_out = scratch.baseAddress
                stream.pointee.avail_out = uInt(scratch.count)
                let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                let produced = scratch.count - Int(stream.pointee.avail_out)
                switch status {
                case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                    guard produced <= limit - output.count else { return .overLimit }
                    output.append(scratch.baseAddress!, count: produced)
                    if status == Z_STREAM_END { return .ended }
                    // Z_BUF_ERROR: no progress possible, all input taken and all output given.
                    if status == Z_BUF_ERROR || (stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0) {
                        return .consumed
                    }
                default:
                    // What the step made before the bad data counts first: a message past its limit fails as such,
                    // wherever its frames were cut.
                    guard produced <= limit - output.count else { return .overLimit }
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    return .invalid(message)
                }
            }
        }
    }
}

/// A raw DEFLATE compressor (RFC 1951, no zlib or gzip wrapper), for permessage-deflate.
final class ZlibDeflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// Creates a compressor.
    /// - Parameters:
    ///   - level: 1–9.
    ///   - windowBits: The window, 2^`windowBits` bytes (9–15).
    ///   - memoryLevel: zlib's memLevel, 1–9: the size of its hash tables (8, zlib's default, is 128 KiB).
    /// - Throws: `ServerAPIError` (`network`) when zlib cannot make one.
    init(level: Int, windowBits: Int, memoryLevel: Int = 8) throws(ServerAPIError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_deflate_init_raw(stream, Int32(level), Int32(windowBits), Int32(memoryLevel))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ServerAPIError(.network, "zlib could not make a deflater (error \(status))")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts a new stream: the next message refers to nothing before it.
    func reset() { deflateReset(stream) }

    /// Compresses `input` and flushes to a byte boundary (`Z_SYNC_FLUSH`): the output ends with the empty stored
    /// block 0x00 0x00 0xFF 0xFF, which permessage-deflate removes (RFC 7692 §7.2.1).
    func compress(_ input: Data) throws(ServerAPIError) -> Data {
        var output = Data()
        // Enough for incompressible input in one step, mostly: stored blocks add 5 bytes per 16 KiB or so.
        output.reserveCapacity(input.count + input.count / 1000 + 64)
        var failure: Int32?
        input.withUnsafeBytes { raw in
            stream.pointee.next_in = raw.baseAddress.map {
                UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
            }
            stream.pointee.avail_in = uInt(raw.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: scratchSize) { scratch in
                while true {
                    stream.pointee.next_out = scratch.baseAddress
                    stream.pointee.avail_out = uInt(scratch.count)
                    let status = CZlib.deflate(stream, Z_SYNC_FLUSH)
                    guard status == Z_OK || status == Z_BUF_ERROR else {
                        failure = status
                        return
                    }
                    output.append(scratch.baseAddress!, count: scratch.count - Int(stream.pointee.avail_out))
                    // Output left over fills the whole scratch buffer; a step that leaves room has flushed everything.
                    if stream.pointee.avail_out > 0 || status == Z_BUF_ERROR { return }
                }
            }
        }
        if let failure { throw ServerAPIError(.network, "zlib could not compress a message (error \(failure))") }
        return output
    }
}
