/// The control messages between the benchmark's clients and its server: short text messages, each of which
/// comes after every data message sent before it on the same connection.
enum Wire {
    /// Client → sink: "tell me what arrived"; the answer is `count(_:_:)`.
    static let done = "done"
    /// Client → source: "send messages for this long"; after the last one comes `end(_:_:)`. The server times it,
    /// so that the client sends nothing while the messages stream in.
    static func start(milliseconds: Int) -> String { "start \(milliseconds)" }
    /// Every byte of a source's messages, and of the clients' (the echo checks what comes back).
    static let fill: UInt8 = 0x5A
    /// A JSON payload of `size` bytes, for the compressed rows: records like an API's list (ids, names, prices,
    /// flags, tags) between two `fill` bytes, which the clients' check looks at as in the other rows. Compresses
    /// about as an API's JSON does.
    static func json(size: Int) -> [UInt8] {
        guard size > 2 else { return [UInt8](repeating: fill, count: size) }
        var text = ""
        var id = 1000
        while text.utf8.count < size - 2 {
            text += #"{"id":\#(id),"name":"item \#(id)","price":\#(id % 97).5,"in_stock":\#(id % 3 != 0),"#
            text += #""tags":["blue","large"],"updated":"2026-11-30T04:\#(id % 60):00Z"},"#
            id += 7
        }
        return [fill] + Array(text.utf8.prefix(size - 2)) + [fill]
    }

    /// The largest frame either side takes: a 1 MiB message with room to spare.
    static let maxFrameSize = 16 << 20

    /// Sink → client: the messages and bytes that arrived since the last `done`.
    static func count(_ messages: Int, _ bytes: Int) -> String { "count \(messages) \(bytes)" }
    /// Source → client: the messages and bytes sent since `start(milliseconds:)`.
    static func end(_ messages: Int, _ bytes: Int) -> String { "end \(messages) \(bytes)" }

    /// The two numbers of a `count` or `end` answer, if `text` is one with `keyword`.
    static func numbers(_ text: String, keyword: String) -> (messages: Int, bytes: Int)? {
        let parts = text.split(separator: " ")
        guard parts.count == 3, parts[0] == keyword, let messages = Int(parts[1]), let bytes = Int(parts[2]) else {
            return nil
        }
        return (messages, bytes)
    }
}
