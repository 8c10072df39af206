import ServerAPIKit

extension Transfer {
    /// How many samples make one window: the stall is noticed between `duration` and 1.25 × `duration`
    /// after the transfer slowed down.
    static let stallSamplesPerWindow = 4

    /// The watchdog: every quarter of `stall.duration` it samples the bytes moved so far, and fails the
    /// transfer once the last full window moved fewer than `bytesPerSecond × duration` bytes.
    ///
    /// A sleeping task per transfer, not a thread: it ends when the transfer completes (which cancels
    /// it) or fails it. Bytes are counted in the task callbacks, both directions together, so an
    /// upload that stops counts the same as a download that stops.
    func watch(_ stall: StallTimeout) async {
        let tick = stall.duration / Self.stallSamplesPerWindow
        let least = Double(stall.bytesPerSecond) * stall.duration.seconds
        var samples: [Int64] = [0]
        while (try? await Task.sleep(for: tick)) != nil {
            let moved = bytesMoved
            samples.append(moved)
            if samples.count > Self.stallSamplesPerWindow + 1 { samples.removeFirst() }
            if samples.count == Self.stallSamplesPerWindow + 1, Double(moved - samples[0]) < least {
                fail(stall.error())
                return
            }
        }
    }
}
