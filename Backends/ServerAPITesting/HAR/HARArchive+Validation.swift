import Foundation
import ServerAPIKit

extension HARArchive {
    /// The longest duration a HAR file may give, in milliseconds: a day (an entry's `time`, each of its `timings`,
    /// a streamed chunk's `time`).
    // A day is far past any exchange a test replays, and far below what a `Duration` holds, so that no file can make
    // the conversion trap (1e300 ms did). HAR 1.2 sets no bound: this is ours (the Testing article says it).
    static let maximumMilliseconds: Double = 86_400_000

    /// The latest time a WebSocket message or close may carry, in seconds since 1970: the last second of the year
    /// 9999, the last that ISO 8601's four-digit years can write.
    static let latestTimestamp: Double = 253_402_300_799

    /// Checks every number and every encoding of the archive, so that a replay never meets one it cannot use.
    ///
    /// Durations (`time`, `timings`, a chunk's `time`) are milliseconds from 0 to a day; a timing may also be -1, HAR
    /// 1.2's "does not apply". A chunk's size is bytes, and a streamed body's chunks add up to at most `Int64.max`. A
    /// status is 100–599, or 0 for an entry that got no response (it replays as the failure it records). A WebSocket
    /// message's `time` and its close's are seconds since 1970 up to the year 9999, an opcode is 0–15, a close code
    /// fits its two bytes. Text whose encoding is base64 (a response body, a request body, a binary message, a
    /// browser's close row) is base64, line breaks allowed. The other sizes (`headersSize`, `bodySize`,
    /// `content.size`, `content.compression`) are integers (decoding checks that), any of them: Chrome writes a
    /// `bodySize` of its transfer size less the head's (-129 for a WebSocket's handshake), and a negative size is read
    /// as "unknown".
    /// - Parameter name: What to call the archive in errors ("users.har").
    /// - Throws: `decoding`, naming the entry (counted from 1), the field and the value.
    func validate(name: String) throws(ServerAPIError) {
        for (index, entry) in entries.enumerated() {
            let check = EntryCheck(entry: "entry \(index + 1) of \(entries.count) in \(name)")
            try check.entry(entry)
        }
    }

    /// The bytes of base64 text, with line breaks and spaces allowed (some tools wrap it); `nil` when it is not base64.
    static func base64Bytes(_ text: String) -> Data? {
        if let bytes = Data(base64Encoded: text) { return bytes }
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        guard text.utf8.contains(where: whitespace.contains) else { return nil }
        return Data(base64Encoded: Data(text.utf8.filter { !whitespace.contains($0) }))
    }
}

/// The checks of one entry, whose errors all start with what to call it ("entry 3 of 5 in users.har").
private struct EntryCheck {
    /// What to call the entry: "entry 3 of 5 in users.har".
    let entry: String

    /// Checks the entry: its time and timings, its request, its response, and its WebSocket's messages and end.
    func entry(_ entry: HARArchive.Entry) throws(ServerAPIError) {
        try duration(entry.time, "time")
        let timings = entry.timings
        for (value, field) in [
            (timings.blocked, "blocked"), (timings.dns, "dns"), (timings.connect, "connect"), (timings.ssl, "ssl"),
            (timings.send, "send"), (timings.wait, "wait"), (timings.receive, "receive"),
        ] {
            if let value { try duration(value, "timings." + field, notApplicable: true) }
        }
        try request(entry.request)
        try response(entry.response)
        for (index, message) in (entry.webSocketMessages ?? []).enumerated() {
            try webSocketMessage(message, "message \(index + 1) in _webSocketMessages")
        }
        if let close = entry.webSocketClose {
            try timestamp(close.time, "_webSocketClose.time")
            try closeCode(close.code, "_webSocketClose.code")
            try closeCode(close.answer?.code, "_webSocketClose.answer.code")
            try status(close.error?.status, "_webSocketClose.error.status")
        }
    }

    /// The request's body, when it says it is base64.
    private func request(_ request: HARArchive.Request) throws(ServerAPIError) {
        if let postData = request.postData, postData.encoding?.lowercased() == "base64" {
            try base64(postData.text ?? "", "request.postData.text", encoding: "request.postData._encoding")
        }
    }

    /// The response's status, body, recorded failure and chunks.
    private func response(_ response: HARArchive.Response) throws(ServerAPIError) {
        if response.status != 0 { try status(response.status, "response.status", noResponse: true) }
        if response.content.encoding?.lowercased() == "base64" {
            try base64(response.content.text ?? "", "response.content.text", encoding: "response.content.encoding")
        }
        try status(response.error?.status, "response._error.status")
        var total: Int64 = 0
        for (index, chunk) in (response.chunks ?? []).enumerated() {
            let field = "chunk \(index + 1) in response._chunks"
            guard chunk.size >= 0 else { throw fail("the size of \(field) is \(chunk.size), not a size in bytes") }
            try duration(chunk.time, "the time of \(field)")
            let (sum, overflow) = total.addingReportingOverflow(Int64(chunk.size))
            guard !overflow else {
                throw fail("the sizes of response._chunks add up past \(Int64.max) bytes at chunk \(index + 1)")
            }
            total = sum
        }
    }

    /// A WebSocket message's time; for a message a replay plays, its opcode, and its data when the opcode says it
    /// is base64.
    private func webSocketMessage(_ message: HARArchive.RecordedMessage, _ field: String) throws(ServerAPIError) {
        try timestamp(message.time, "the time of \(field)")
        // Chrome's "error" rows (opcode -1) are skipped by a replay (`WebSocketReplayScript`).
        guard message.type == .send || message.type == .receive else { return }
        guard (0...15).contains(message.opcode) else {
            throw fail("the opcode of \(field) is \(message.opcode), not a WebSocket opcode (0 to 15)")
        }
        // A binary message's data, and a browser's close row's, are base64 (`RecordedMessage.message`,
        // `WebSocketReplayScript`).
        if message.opcode == 2 || message.opcode == 8, HARArchive.base64Bytes(message.data) == nil {
            throw fail("the data of \(field) is not base64, as its opcode \(message.opcode) says it is")
        }
    }

    /// The error for `problem` in this entry.
    private func fail(_ problem: String) -> ServerAPIError {
        ServerAPIError(.decoding, "\(entry): \(problem)")
    }

    /// Milliseconds from 0 to a day; or -1, where HAR 1.2 lets a timing say it does not apply.
    private func duration(_ value: Double, _ field: String, notApplicable: Bool = false) throws(ServerAPIError) {
        guard !(value.isFinite && value >= 0 && value <= HARArchive.maximumMilliseconds) else { return }
        guard !(notApplicable && value == -1) else { return }
        let range = "milliseconds from 0 to \(Int(HARArchive.maximumMilliseconds)), a day"
        throw fail("\(field) is \(value), not a duration (\(range)\(notApplicable ? "; -1: not applicable" : ""))")
    }

    /// Seconds since 1970, up to the year 9999.
    private func timestamp(_ value: Double, _ field: String) throws(ServerAPIError) {
        guard !(value.isFinite && value >= 0 && value <= HARArchive.latestTimestamp) else { return }
        throw fail("\(field) is \(value), not a time (seconds since 1970, up to the year 9999)")
    }

    /// 100–599; 0 as well for a response, which then is the failure the entry records.
    private func status(_ value: Int?, _ field: String, noResponse: Bool = false) throws(ServerAPIError) {
        guard let value, !(100...599).contains(value) else { return }
        throw fail("\(field) is \(value), not an HTTP status (100 to 599\(noResponse ? "; 0: no response" : ""))")
    }

    /// A close frame's code: two bytes.
    private func closeCode(_ value: Int?, _ field: String) throws(ServerAPIError) {
        guard let value, UInt16(exactly: value) == nil else { return }
        throw fail("\(field) is \(value), not a WebSocket close code (0 to 65535)")
    }

    /// Base64, as the field named `encoding` says.
    private func base64(_ text: String, _ field: String, encoding: String) throws(ServerAPIError) {
        guard HARArchive.base64Bytes(text) == nil else { return }
        throw fail("\(field) is not base64, as \(encoding) says it is")
    }
}
