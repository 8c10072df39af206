import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Prints the messages of a WebSocket, one a line on standard output: text as it came (its control characters visible
/// on a terminal), JSON coloured on a terminal (as `--stream` prints JSON), the value at `--key-path` in each JSON
/// message; a binary message is not printed, a line on standard error gives its size.
struct MessagePrinter {
    var style: OutputStyle
    /// `--print` has `b`.
    var printsMessages: Bool
    var selection = KeyPathSelection()
    /// `--key-path` was given: each message is read as JSON and the value found printed.
    var hasKeyPath = false
    /// Writes to standard output.
    var write: (Data) throws -> Void = { try StandardOutput.write($0) }
    /// Writes a line to standard error.
    var warn: (String) -> Void = { StandardError.write($0 + "\n") }
    /// Messages received.
    private(set) var received = 0

    init(style: OutputStyle, printsMessages: Bool) {
        self.style = style
        self.printsMessages = printsMessages
    }

    /// Prints one message.
    /// - Throws: `StandardOutput.Failure`.
    mutating func print(_ message: WebSocketMessage) throws {
        received += 1
        guard printsMessages else { return }
        switch message {
        case .text(let text):
            let data = Data(text.utf8)
            if hasKeyPath {
                guard let value = selection.value(in: data, describing: "message \(received)", warn: warn) else {
                    return
                }
                try write(Data((JSONPrinter(style: style).render(value, pretty: false) + "\n").utf8))
            } else {
                try write((JSONPrinter.coloured(data, style: style) ?? style.shown(data)) + Data("\n".utf8))
            }
        case .binary(let data):
            warn("sapi: message \(received) is binary, \(data.count) byte\(data.count == 1 ? "" : "s"): not printed")
        }
    }
}
