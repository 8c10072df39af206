import Foundation
@_spi(Backend) import ServerAPIKit

/// Collects HAR entries and keeps a file up to date with them: what a `RecordingTransport` writes to.
///
/// Every entry is written as soon as its exchange ends, the whole archive at once and atomically
/// (`HARArchive.write(to:)`), so the file is complete after each call and never half written. Entries are
/// kept in the order their exchanges ended; a WebSocket's entry takes its place when its handshake ends and is
/// completed in place as its messages go, the file being written again when the connection ends.
public final class HARRecorder: Sendable {
    private struct State {
        var archive: HARArchive
    }

    private let state: Locked<State>
    // Writes happen one at a time and in order, outside the state's lock.
    private let writing = Locked(())

    /// The file kept up to date; `nil` to keep the archive in memory only.
    public let file: URL?
    /// Whether the file is readable by its owner only (mode 0600): for a recording that keeps credentials.
    public let ownerOnly: Bool

    /// Creates a recorder.
    /// - Parameters:
    ///   - file: The HAR file to keep up to date; `nil` to keep the entries in memory only.
    ///   - entries: Entries to start with (a `ReplayingTransport` recording what is missing keeps the old ones).
    ///   - creator: The application named in the file.
    ///   - ownerOnly: Whether the file is readable by its owner only (mode 0600); `RecordingTransport` asks
    ///     for it when its redaction keeps credentials.
    public init(
        file: URL?, entries: [HARArchive.Entry] = [], creator: HARArchive.Creator = .serverAPIKit,
        ownerOnly: Bool = false
    ) {
        self.file = file
        self.ownerOnly = ownerOnly
        self.state = Locked(State(archive: HARArchive(entries: entries, creator: creator)))
    }

    /// The archive so far.
    public var archive: HARArchive { state.withLock { $0.archive } }

    /// The entries so far.
    public var entries: [HARArchive.Entry] { state.withLock { $0.archive.entries } }

    /// Adds an entry and writes the file.
    /// - Parameter entry: The entry.
    /// - Throws: `fileSystem` when the file cannot be written (the entry is kept).
    public func append(_ entry: HARArchive.Entry) throws(ServerAPIError) {
        _ = try add(entry)
    }

    /// Adds an entry and writes the file; returns the entry's index, for `update(_:_:)` while its exchange goes on
    /// (a WebSocket's messages).
    /// - Throws: `fileSystem` when the file cannot be written (the entry is kept).
    func add(_ entry: HARArchive.Entry) throws(ServerAPIError) -> Int {
        let index = state.withLock { state in
            state.archive.log.entries.append(entry)
            return state.archive.log.entries.count - 1
        }
        try write()
        return index
    }

    /// Changes the entry at `index` in place, without writing the file: the next write has the change.
    func update(_ index: Int, _ change: (inout HARArchive.Entry) -> Void) {
        state.withLock { state in
            // Through `log.entries`, not the computed `entries`, so that the entry is changed in place.
            guard state.archive.log.entries.indices.contains(index) else { return }
            change(&state.archive.log.entries[index])
        }
    }

    /// Writes the archive as it is now to the file (nothing without one).
    /// - Throws: `fileSystem` when the file cannot be written.
    public func write() throws(ServerAPIError) {
        guard let file else { return }
        try writing.withLock { _ throws(ServerAPIError) in
            // Read under the write lock: the last writer writes the newest archive.
            try archive.write(to: file, ownerOnly: ownerOnly)
        }
    }
}
