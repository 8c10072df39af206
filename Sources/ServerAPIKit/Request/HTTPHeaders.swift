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

    /// The fields in the order they were added.
    public private(set) var fields: [Field]

    /// Creates headers from fields, keeping their order.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates headers from name/value pairs, keeping their order.
    public init(_ pairs: [(String, String)]) { self.fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The first value for a name, compared case-insensitively.
    public subscript(name: String) -> String? {
        get { first(name) }
        set {
            if let newValue { replaceOrAdd(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// The first value for a name, compared case-insensitively.
    public func first(_ name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value for a name, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool { fields.contains { Self.sameName($0.name, name) } }

    /// Adds a field, keeping any field of the same name (repeated headers).
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Makes room for `minimumCapacity` fields, so that adding a head's fields one by one allocates once.
    public mutating func reserveCapacity(_ minimumCapacity: Int) { fields.reserveCapacity(minimumCapacity) }

    /// Replaces every field of this name by one field, or adds it.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let index = fields.firstIndex(where: { Self.sameName($0.name, name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard Self.sameName(field.name, name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) { fields.removeAll { Self.sameName($0.name, name) } }

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
