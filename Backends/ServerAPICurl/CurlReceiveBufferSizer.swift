/// Sizes libcurl's receive buffer for a loop's ordinary calls (neither downloads nor streams) from the
/// responses the loop received lately.
///
/// libcurl allocates its receive buffer (16 KB unless told otherwise) for every transfer in flight, and reads
/// a response into it a buffer at a time. A loop whose responses are small, like a service's many JSON calls,
/// needs far less: at a thousand calls at once, the default buffers hold 16 MB. The size is twice the largest
/// response (head and body, as received) of the last 256 to 512 calls, rounded up to a power of two, between
/// 4 KB and libcurl's 16 KB. A loop starts at 16 KB; a large response after small ones costs a few more
/// reads, and the calls after it are back at 16 KB.
///
/// - Important: Loop thread only, like the rest of the loop's state.
struct CurlReceiveBufferSizer {
    /// The smallest buffer given.
    static let smallest = 4 << 10
    /// libcurl's default, and the largest given (a larger response is read in several pieces, as before).
    static let largest = 16 << 10
    /// How many responses make a window; the size follows the current and the previous window.
    static let window = 256

    private var largestNow = 0
    private var largestBefore = Int.max
    private var counted = 0
    /// The buffer for the next ordinary call.
    private(set) var size = largest

    /// Counts a response that arrived whole: `bytes` is its head and body as received.
    mutating func record(responseBytes bytes: Int) {
        largestNow = max(largestNow, bytes)
        counted += 1
        if counted == Self.window {
            largestBefore = largestNow
            largestNow = 0
            counted = 0
        }
        size = Self.size(for: max(largestNow, largestBefore))
    }

    /// Twice `bytes`, rounded up to a power of two, within `smallest`...`largest`.
    static func size(for bytes: Int) -> Int {
        guard bytes < largest / 2 else { return largest }
        var size = smallest
        while size < bytes * 2 { size *= 2 }
        return size
    }
}
