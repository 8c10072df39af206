/// What one pass over a business envelope found.
struct EnvelopeScan {
    /// What the code key holds.
    enum Field: Equatable {
        /// The key is absent.
        case missing
        /// A string, number (normalized) or boolean, as text.
        case text(String)
        /// null, an object or an array.
        case other(JSONKind)
    }

    /// The kind of the root value; the rest is meaningful only for an object.
    var root: JSONKind
    var code = Field.missing
    var message = Field.missing
    /// Where the key path (from the root) leads.
    var location = JSONLocation.missing(.noKey(step: 0, objectStart: 0))
}

extension JSONCursor {
    /// Reads a business envelope in one pass over the whole document: its code and message, and
    /// the byte range of the value at `steps` (from the root), validating everything.
    mutating func scanEnvelope(codeKey: [UInt8], messageKey: [UInt8], steps: [JSONStep]) throws(JSONSyntaxError)
        -> EnvelopeScan
    {
        skipByteOrderMark()
        skipWhitespace()
        guard position < end else { throw unexpected("a value") }
        let rootStart = position
        var scan = EnvelopeScan(root: JSONKind(firstByte: base[position]))
        guard scan.root == .object else {
            try skipValue()
            try expectEnd()
            return scan
        }
        var located = false
        let firstKey: [UInt8]? = if case .key(_, let bytes) = steps.first { bytes } else { nil }
        try enterContainer(depth: 0)
        if try !isEmptyContainer(closing: UInt8(ascii: "}")) {
            while true {
                let (range, escaped) = try readKey()
                let valueStart = position
                if !located, let firstKey, key(at: range, escaped: escaped, equals: firstKey) {
                    located = true
                    scan.location = try locate(steps[1...], depth: 1)
                } else {
                    try skipValue(depth: 1)
                }
                if scan.code == .missing, key(at: range, escaped: escaped, equals: codeKey) {
                    scan.code = try field(at: valueStart)
                }
                if scan.message == .missing, key(at: range, escaped: escaped, equals: messageKey) {
                    scan.message = try field(at: valueStart)
                }
                if try endOfMember(closing: UInt8(ascii: "}")) { break }
            }
        }
        let rootEnd = position
        try expectEnd()
        switch steps.first {
        case nil: scan.location = .found(rootStart..<rootEnd)
        case .index: scan.location = .missing(.mismatch(step: 0, found: .object))
        case .key: if !located { scan.location = .missing(.noKey(step: 0, objectStart: rootStart)) }
        }
        return scan
    }

    /// The scalar at `offset` (already validated) as text.
    private func field(at offset: Int) throws(JSONSyntaxError) -> EnvelopeScan.Field {
        var reader = self
        reader.position = offset
        if let text = try reader.readScalarText() { return .text(text) }
        return .other(JSONKind(firstByte: base[offset]))
    }
}
