import Dispatch

/// Standard input's lines, as they are typed or piped: each read blocks a thread of its own (never one of the
/// concurrency pool's), and the next line is read only when it is asked for, so a large file is not read ahead.
struct StandardInputLines: Sendable {
    private let queue = DispatchQueue(label: "sapi.stdin")

    /// The next line, without its line ending; `nil` at the end of standard input.
    func next() async -> String? {
        await withCheckedContinuation { (reader: CheckedContinuation<String?, Never>) in
            queue.async { reader.resume(returning: readLine(strippingNewline: true)) }
        }
    }
}
