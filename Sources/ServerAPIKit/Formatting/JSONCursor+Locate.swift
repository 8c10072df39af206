/// A key path step as the cursor compares it: keys carry their UTF-8 bytes.
enum JSONStep {
    case key(String, [UInt8])
    case index(Int)

    init(_ component: JSONKeyPath.Component) {
        switch component {
        case .key(let key): self = .key(key, Array(key.utf8))
        case .index(let index): self = .index(index)
        }
    }
}

/// Why a key path found nothing; `step` is the index of the step that failed.
enum JSONMiss: Equatable {
    /// The object at the step has no such key; `objectStart` is the offset of its `{`.
    case noKey(step: Int, objectStart: Int)
    /// The array at the step is too short.
    case outOfRange(step: Int, count: Int)
    /// The value at the step is not an object (key step) or not an array (index step).
    case mismatch(step: Int, found: JSONKind)
}

/// Where a key path leads: the byte range of the value, or why there is none.
enum JSONLocation: Equatable {
    case found(Range<Int>)
    case missing(JSONMiss)
}

extension JSONCursor {
    /// Scans the whole value at the current position (validating all of it) and returns the byte
    /// range of the value at `steps` inside it.
    ///
    /// Only the containers on the path are looked into; everything else is skipped without being built.
    mutating func locate(_ steps: ArraySlice<JSONStep>, depth: Int = 0) throws(JSONSyntaxError) -> JSONLocation {
        guard let step = steps.first else {
            let start = position
            try skipValue(depth: depth)
            return .found(start..<position)
        }
        guard position < end else { throw unexpected("a value") }
        let kind = JSONKind(firstByte: base[position])
        let rest = steps.dropFirst()
        switch step {
        case .key(_, let wanted):
            guard kind == .object else {
                try skipValue(depth: depth)
                return .missing(.mismatch(step: steps.startIndex, found: kind))
            }
            let objectStart = position
            try enterContainer(depth: depth)
            var result: JSONLocation?
            if try !isEmptyContainer(closing: UInt8(ascii: "}")) {
                while true {
                    let (range, escaped) = try readKey()
                    if result == nil && key(at: range, escaped: escaped, equals: wanted) {
                        result = try locate(rest, depth: depth + 1)
                    } else {
                        try skipValue(depth: depth + 1)
                    }
                    if try endOfMember(closing: UInt8(ascii: "}")) { break }
                }
            }
            return result ?? .missing(.noKey(step: steps.startIndex, objectStart: objectStart))
        case .index(let wanted):
            guard kind == .array else {
                try skipValue(depth: depth)
                return .missing(.mismatch(step: steps.startIndex, found: kind))
            }
            try enterContainer(depth: depth)
            var result: JSONLocation?
            var count = 0
            if try !isEmptyContainer(closing: UInt8(ascii: "]")) {
                while true {
                    if count == wanted {
                        result = try locate(rest, depth: depth + 1)
                    } else {
                        try skipValue(depth: depth + 1)
                    }
                    count += 1
                    if try endOfMember(closing: UInt8(ascii: "]")) { break }
                }
            }
            return result ?? .missing(.outOfRange(step: steps.startIndex, count: count))
        }
    }

    /// The keys of the (already validated) object whose `{` is at `offset`, in order, at most `limit`.
    mutating func keys(ofObjectAt offset: Int, limit: Int) -> (keys: [String], more: Bool) {
        position = offset
        var keys: [String] = []
        do {
            try enterContainer(depth: 0)
            if try isEmptyContainer(closing: UInt8(ascii: "}")) { return ([], false) }
            while true {
                let (range, escaped) = try readKey()
                if keys.count == limit { return (keys, true) }
                keys.append(decodeString(range, escaped: escaped))
                try skipValue(depth: 1)
                if try endOfMember(closing: UInt8(ascii: "}")) { return (keys, false) }
            }
        } catch {
            // The object was validated before; stop at whatever was read.
            return (keys, false)
        }
    }
}
