/// One open connection of a client under test, as the benchmark drives it: the same steps for both clients,
/// each done with its own library's public API.
protocol BenchSocket: Sendable {
    /// Sends one binary message of the run's size; returns when the library says it is sent.
    func sendMessage() async throws
    /// Sends a text message (`Wire`'s control messages).
    func sendText(_ text: String) async throws
    /// The next message that arrives.
    func receive() async throws -> Incoming
    /// Counts the binary messages that arrive (and those already waiting) until a text message comes.
    /// - Parameter size: The size every binary message should have; one that has not is counted in `wrongSize`.
    func countUntilText(size: Int) async throws -> Tally
    /// Closes the connection: a close frame, and the server's answer.
    func close() async throws
}

/// A message as the benchmark checks it.
enum Incoming: Sendable {
    /// A binary message: its size, and whether its first and last bytes are `Wire.fill`.
    case binary(count: Int, intact: Bool)
    case text(String)
}

/// What `countUntilText(size:)` counted.
struct Tally: Sendable {
    var messages = 0
    var bytes = 0
    /// Messages whose size was not the run's.
    var wrongSize = 0
    /// The text message that ended the count.
    var text = ""
}

/// A run that cannot be counted: a lost, extra or damaged message, or a connection that failed.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
