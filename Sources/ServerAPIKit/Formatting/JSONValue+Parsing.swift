#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONValue {
    /// Parses UTF-8 JSON text.
    ///
    /// Integers that fit in 64 bits stay exact (`.int`); larger integers, fractions and exponents
    /// become `.double`. When an object repeats a key, the first value counts (as with `JSONDecoder`).
    /// A leading UTF-8 byte order mark is ignored.
    /// - Parameter data: The JSON text.
    /// - Throws: `ServerAPIError` of kind `decoding` saying what is wrong and at which byte offset.
    public init(parsing data: Data) throws(ServerAPIError) {
        self = try JSONScanner.parse(data)
    }

    /// The value at a key path inside this value (anchors mean this value itself).
    /// - Parameter keyPath: Where the value is, such as `items[0].name`.
    /// - Returns: The value found.
    /// - Throws: `ServerAPIError` of kind `decoding` with `keyPath` set, naming what was found instead.
    public func value(at keyPath: JSONKeyPath) throws(ServerAPIError) -> JSONValue {
        var current = self
        let components = keyPath.components
        for (step, component) in components.enumerated() {
            let place = step == 0 ? "the root" : "\"\(JSONKeyPath.describe(components[..<step]))\""
            let full = JSONKeyPath.describe(components)
            switch (component, current) {
            case (.key(let key), .object(let object)):
                guard let next = object[key] else {
                    let keys = object.keys.sorted().prefix(20).map { "\"\($0)\"" }.joined(separator: ", ")
                    throw ServerAPIError(
                        .decoding,
                        "key path \"\(full)\": no key \"\(key)\" in the object at \(place), "
                            + (object.isEmpty ? "which is empty" : "which has keys [\(keys)]"),
                        keyPath: full)
                }
                current = next
            case (.index(let index), .array(let array)):
                guard array.indices.contains(index) else {
                    throw ServerAPIError(
                        .decoding,
                        "key path \"\(full)\": index \(index) is out of range: the array at \(place) has "
                            + (array.count == 1 ? "1 element" : "\(array.count) elements"),
                        keyPath: full)
                }
                current = array[index]
            case (.key, _), (.index, _):
                let expected = if case .key = component { "an object" } else { "an array" }
                throw ServerAPIError(
                    .decoding, "key path \"\(full)\": expected \(expected) at \(place) but found \(current.typeName)",
                    keyPath: full)
            }
        }
        return current
    }
}
