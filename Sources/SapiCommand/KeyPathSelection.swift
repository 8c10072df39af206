import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--key-path` over a sequence of JSON items printed as they arrive (the lines or events of `--stream`, the
/// messages of a WebSocket): the value it finds in each item, and the failure to report when it found nothing
/// in any.
///
/// An item that is not JSON is skipped with a warning; one where the key path finds nothing is skipped
/// quietly, and remembered for the end.
struct KeyPathSelection {
    var keyPath = JSONKeyPath()
    /// Values found so far.
    private(set) var values = 0
    /// Where the key path found nothing (the last such error), and items that were not JSON.
    private var missed: ServerAPIError?
    private var notJSON = 0

    /// The value at the key path in `data`; `nil` when `data` is not JSON (with a warning) or the key path
    /// finds nothing in it.
    /// - Parameters:
    ///   - data: The item, such as one line.
    ///   - item: The item as the warning names it: "line 3", "event 2 (id 7)", "message 4".
    ///   - warn: Writes a warning line.
    mutating func value(in data: Data, describing item: String, warn: (String) -> Void) -> JSONValue? {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            notJSON += 1
            let text = String(decoding: data.prefix(60), as: UTF8.self)
            warn("sapi: warning: \(item) is not JSON, skipped: \(JSONPrinter.quote(text))\(data.count > 60 ? "…" : "")")
            return nil
        }
        do {
            let value = try json.value(at: keyPath)
            values += 1
            return value
        } catch {
            missed = error
            return nil
        }
    }

    /// Counts a value found by the caller itself (a whole document read at the key path).
    mutating func found() { values += 1 }

    /// Why the key path found nothing in the whole sequence (exit 9); `nil` when it found a value, or when
    /// no item was read.
    /// - Parameters:
    ///   - items: What an item is called: "line", "event", "message".
    ///   - data: What was not JSON, for the error: "line", "event's data", "message".
    func failure(items: String, data: String) -> ServerAPIError? {
        guard values == 0 else { return nil }
        if var missed {
            missed.message = "the key path found nothing in any \(items); in the last one: \(missed.message)"
            return missed
        }
        guard notJSON > 0 else { return nil }
        return ServerAPIError(
            .decoding, "no \(data) was JSON for the key path \(keyPath)", keyPath: keyPath.description)
    }
}
