/// An ordered list of HTTP header fields with case-insensitive names; a name may repeat.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field as it is sent.
    public struct Field: Sendable, Hashable {
        /// The field name, with the case the caller gave.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a field; checked to be valid HTTP only when the request is prepared.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, unless `received` holds them.
    private var list: [Field]
    /// A received head's fields as the bytes that came: read into `Field`s only when all of them are asked for, or
    /// the headers are changed. Most responses are asked for a few fields by name, and a `String` per field
    /// costs more than the rest of reading a line.
    private var received: ReceivedFields?

    /// The fields in the order they were added.
    public var fields: [Field] { received?.fields ?? list }

    /// Creates headers from fields, keeping their order.
    public init(_ fields: [Field] = []) { list = fields }

    /// Creates headers from name/value pairs, keeping their order.
    public init(_ pairs: [(String, String)]) { list = pairs.map { Field(name: $0.0, value: $0.1) } }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// Empty headers for a head about to be received line by line (`addReceived`), with room for a typical one.
    package init(receiving fieldCount: Int) {
        list = []
        received = ReceivedFields(capacity: fieldCount)
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { received.map { $0.spans.isEmpty } ?? list.isEmpty }

    /// The number of fields.
    public var count: Int { received?.spans.count ?? list.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool { lhs.fields == rhs.fields }

    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// The first value for a name, compared case-insensitively.
    public subscript(name: String) -> String? {
        get { first(name) }
        set {
            if let newValue { replaceOrAdd(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// The first value for a name, compared case-insensitively.
    public func first(_ name: String) -> String? {
        if let received {
            return received.spans.first { received.hasName(name, $0) }.map { received.value($0) }
        }
        return list.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value for a name, in order.
    public func values(for name: String) -> [String] {
        if let received {
            return received.spans.filter { received.hasName(name, $0) }.map { received.value($0) }
        }
        return list.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether every value for a name satisfies `predicate` (true when there is none), in order, stopping at the
    /// first that does not: `values(for:)` without its array.
    package func everyValue(for name: String, satisfies predicate: (String) -> Bool) -> Bool {
        if let received {
            for span in received.spans where received.hasName(name, span) {
                guard predicate(received.value(span)) else { return false }
            }
            return true
        }
        for field in list where Self.sameName(field.name, name) {
            guard predicate(field.value) else { return false }
        }
        return true
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool {
        if let received { return received.spans.contains { received.hasName(name, $0) } }
        return list.contains { Self.sameName($0.name, name) }
    }

    /// Adds a field, keeping any field of the same name (repeated headers).
    public mutating func add(name: String, value: String) {
        readReceived()
        list.append(Field(name: name, value: value))
    }

    /// Makes room for `minimumCapacity` fields, so that adding a head's fields one by one allocates once.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        readReceived()
        list.reserveCapacity(minimumCapacity)
    }

    /// Adds a received field: its name and value as they came, the value trimmed. Kept as bytes when the headers
    /// were made for receiving (`init(receiving:)`).
    package mutating func addReceived(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard received != nil else {
            return add(
                name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        received!.add(name: name, value: value)
    }

    /// Folds an obsolete continuation line into the last field's value, after a space.
    /// - Returns: Whether there was a field to continue.
    @discardableResult
    package mutating func continueLastField(with text: UnsafeRawBufferPointer) -> Bool {
        if received != nil { return received!.continueLast(with: text) }
        guard !list.isEmpty else { return false }
        list[list.count - 1].value += " " + String(decoding: text, as: UTF8.self)
        return true
    }

    /// Replaces every field of this name by one field, or adds it.
    public mutating func replaceOrAdd(name: String, value: String) {
        readReceived()
        if let index = list.firstIndex(where: { Self.sameName($0.name, name) }) {
            list[index].value = value
            var seen = false
            list.removeAll { field in
                guard Self.sameName(field.name, name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) {
        readReceived()
        list.removeAll { Self.sameName($0.name, name) }
    }

    /// Adds every field of `other`, replacing fields of the same name.
    public mutating func merge(_ other: HTTPHeaders) {
        var replaced = Set<String>()
        for field in other.fields {
            let key = field.name.lowercased()
            if replaced.insert(key).inserted { remove(name: field.name) }
            add(name: field.name, value: field.value)
        }
    }

    /// The fields as "Name: value" lines, in order.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    /// Reads received bytes into fields, before a change.
    private mutating func readReceived() {
        guard let received else { return }
        list = received.fields
        self.received = nil
    }

    /// Compares names as HTTP does: ASCII case-insensitively.
    @inlinable
    static func sameName(_ a: String, _ b: String) -> Bool {
        // Header names are ASCII tokens: fold ASCII letters byte by byte instead of allocating two
        // lower-cased copies (this runs for every field of every lookup), over the strings' own bytes where
        // they have them contiguous (native strings always do) rather than through two generic iterators.
        let count = a.utf8.count
        guard count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                for index in 0..<count where x[index] != y[index] {
                    guard asciiFolded(x[index]) == asciiFolded(y[index]) else { return false }
                }
                return true
            }
        }
        if let contiguous, let same = contiguous { return same }
        return a.utf8.elementsEqual(b.utf8) { x, y in x == y || asciiFolded(x) == asciiFolded(y) }
    }

    @inlinable
    static func asciiFolded(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// Checks that every name is an RFC 9110 token and every value is visible ASCII, spaces and tabs;
    /// a `Cookie` value may also hold UTF-8.
    ///
    /// Non-ASCII values are rejected rather than encoded, the same way by every transport:
    /// servers read header bytes as Latin-1 or reject them, so the caller chooses an encoding
    /// (percent-encoding, or RFC 8187's `name*=UTF-8''…` for parameters). `Cookie` is the exception:
    /// it carries cookies back to the server that set them, as the UTF-8 bytes that server sent
    /// (`SetCookie.isCookieText`), and refusing it would fail every later call to a site that sets one.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` naming the bad field.
    package func validate() throws(ServerAPIError) {
        for field in fields {
            if field.name.isEmpty || !field.name.utf8.allSatisfy(Self.isTokenByte) {
                throw ServerAPIError(.invalidRequest, "header name \"\(field.name)\" is not a valid HTTP token")
            }
            if field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
                throw ServerAPIError(
                    .invalidRequest, "header \"\(field.name)\" has a line break or NUL in its value")
            }
            if field.value.utf8.contains(where: { $0 >= 0x80 }), !Self.sameName(field.name, "Cookie") {
                throw ServerAPIError(
                    .invalidRequest,
                    "header \"\(field.name)\" has a non-ASCII character in its value; header values are ASCII: "
                        + "percent-encode the value or use RFC 8187 encoding")
            }
            if field.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                throw ServerAPIError(
                    .invalidRequest, "header \"\(field.name)\" has a control character in its value")
            }
        }
    }

    /// Whether `byte` may appear in an RFC 9110 token (a header name, a method).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// A received head's fields: each field's name then its value, one after the other in one buffer.
struct ReceivedFields: Sendable {
    /// Where one field is in `bytes`: its name from `nameStart` to `valueStart`, its value to `valueEnd`.
    struct Span: Sendable {
        var nameStart: Int
        var valueStart: Int
        var valueEnd: Int
    }

    var bytes: [UInt8] = []
    var spans: [Span] = []

    init(capacity fieldCount: Int) {
        // About 40 bytes a field: one allocation for most heads.
        bytes.reserveCapacity(fieldCount * 40)
        spans.reserveCapacity(fieldCount)
    }

    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let nameStart = bytes.count
        if name.contains(where: { $0 >= 0x80 }) {
            // Kept as the string it reads as (invalid UTF-8 repaired), so that a lookup compares what `fields` shows.
            bytes.append(contentsOf: String(decoding: name, as: UTF8.self).utf8)
        } else {
            bytes.append(contentsOf: name)
        }
        let valueStart = bytes.count
        bytes.append(contentsOf: value)
        spans.append(Span(nameStart: nameStart, valueStart: valueStart, valueEnd: bytes.count))
    }

    /// Appends a space and `text` to the last field's value, which ends the buffer.
    mutating func continueLast(with text: UnsafeRawBufferPointer) -> Bool {
        guard !spans.isEmpty else { return false }
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: text)
        spans[spans.count - 1].valueEnd = bytes.count
        return true
    }

    /// Whether the field at `span` is named `name`, ASCII case-insensitively.
    func hasName(_ name: String, _ span: Span) -> Bool {
        let count = span.valueStart - span.nameStart
        guard name.utf8.count == count else { return false }
        var index = span.nameStart
        for byte in name.utf8 {
            guard bytes[index] == byte || HTTPHeaders.asciiFolded(bytes[index]) == HTTPHeaders.asciiFolded(byte)
            else { return false }
            index += 1
        }
        return true
    }

    func value(_ span: Span) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: $0[span.valueStart..<span.valueEnd], as: UTF8.self) }
    }

    var fields: [HTTPHeaders.Field] {
        bytes.withUnsafeBufferPointer { buffer in
            spans.map { span in
                HTTPHeaders.Field(
                    name: String(decoding: buffer[span.nameStart..<span.valueStart], as: UTF8.self),
                    value: String(decoding: buffer[span.valueStart..<span.valueEnd], as: UTF8.self))
            }
        }
    }
}

// MARK: - The grammar of field values

/// Small pieces of HTTP's grammar (RFC 9110 §5.6), byte by byte, without Foundation.
enum HTTPSyntax {
    /// A field value without the optional whitespace (spaces and tabs) around it.
    static func trimmed<S: StringProtocol>(_ value: S) -> Substring {
        var text = Substring(value)
        while let first = text.utf8.first, isWhitespace(first) { text = text.dropFirst() }
        while let last = text.utf8.last, isWhitespace(last) { text = text.dropLast() }
        return text
    }

    /// A non-negative decimal number: digits only (no sign, no spaces inside), and it must fit an `Int64`.
    static func decimal(_ digits: Substring.UTF8View) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var number: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowed) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            number = sum
        }
        return number
    }

    /// Calls `body` with each element of a comma-separated field value, trimmed, until `body` returns `false`.
    /// - Returns: `false` when `body` stopped early.
    static func forEachElement(of value: String, _ body: (Substring) -> Bool) -> Bool {
        var rest = Substring(value)
        while true {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ","))
            guard body(trimmed(comma.map { rest[..<$0] } ?? rest)) else { return false }
            guard let comma else { return true }
            rest = rest[rest.utf8.index(after: comma)...]
        }
    }

    /// Whether a token equals a lower-case ASCII name, ignoring ASCII case.
    static func equals(_ token: Substring, lowercased name: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return token.utf8.elementsEqual(expected) { HTTPHeaders.asciiFolded($0) == $1 }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// `value` without the `character`s at either end (the quotes around a quoted directive argument).
    static func stripping<S: StringProtocol>(_ character: Character, from value: S) -> Substring {
        var text = Substring(value)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return text
    }

    /// `text` without the Unicode scalars around it that `trim` picks: FoundationEssentials has no
    /// `trimmingCharacters(in:)`. `\.properties.isWhitespace` is Foundation's `.whitespacesAndNewlines`,
    /// `isSpace` its `.whitespaces`.
    static func trimming<S: StringProtocol>(_ text: S, _ trim: (Unicode.Scalar) -> Bool) -> Substring {
        var text = Substring(text)
        while let first = text.unicodeScalars.first, trim(first) {
            text = text[text.unicodeScalars.index(after: text.unicodeScalars.startIndex)...]
        }
        while let last = text.unicodeScalars.last, trim(last) {
            text = text[..<text.unicodeScalars.index(before: text.unicodeScalars.endIndex)]
        }
        return text
    }

    /// Whether `scalar` is a space or a tab in Unicode's sense (Foundation's `CharacterSet.whitespaces`).
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
}
