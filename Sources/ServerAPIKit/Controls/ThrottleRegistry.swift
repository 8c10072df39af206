/// When each throttled call was last sent, and its last result for `returnPrevious`.
final class ThrottleRegistry: Sendable {
    /// Whether a call may be sent now.
    enum Admission {
        /// Send it; record its result under this generation.
        case send(generation: UInt64)
        /// Too soon: the same call was sent `elapsed` ago; `previous` is its result, if it has one.
        case throttled(elapsed: Duration, previous: SharedResponse?)
    }

    private struct Entry {
        var sentAt: ClockInstant
        var interval: Duration
        var generation: UInt64
        var previous: SharedResponse?
    }

    private struct State {
        var entries: [ControlKey: Entry] = [:]
        var generation: UInt64 = 0
    }

    private let state = Locked(State())

    /// Admits a call, recording it as sent now, or says why not. Checking and recording happen
    /// in one step, so of two identical calls racing, exactly one is sent.
    func admit(_ key: ControlKey, interval: Duration, now: ClockInstant) -> Admission {
        state.withLock { state in
            if let entry = state.entries[key], let elapsed = entry.sentAt.duration(to: now), elapsed < interval {
                return .throttled(elapsed: elapsed, previous: entry.previous)
            }
            // Entries past their interval can never throttle again: drop them once the table grows.
            if state.entries.count >= 256 {
                state.entries = state.entries.filter { _, entry in
                    entry.sentAt.duration(to: now).map { $0 < entry.interval } ?? false
                }
            }
            state.generation += 1
            state.entries[key] = Entry(sentAt: now, interval: interval, generation: state.generation)
            return .send(generation: state.generation)
        }
    }

    /// Keeps a call's successful result for calls throttled after it, unless a newer send replaced it.
    func record(_ key: ControlKey, generation: UInt64, _ response: SharedResponse) {
        state.withLock { state in
            guard state.entries[key]?.generation == generation else { return }
            state.entries[key]?.previous = response
        }
    }
}
