// HAR files come from browsers and other tools that leave out fields the format calls required: the
// archive's decoders take a missing field as its default instead of failing the whole file.
extension KeyedDecodingContainer {
    /// The value for `key`, or `value` when the key is missing or null.
    func decode<T: Decodable>(_ key: Key, default value: @autoclosure () -> T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? value()
    }

    /// The value for `key`, or `nil` when the key is missing or null.
    func decodeIfPresent<T: Decodable>(_ key: Key) throws -> T? {
        try decodeIfPresent(T.self, forKey: key)
    }

    /// The integer for `key`, or `nil` when the key is missing or null.
    /// - Throws: `DecodingError.dataCorrupted` at `key`'s path, saying the number, for a number that is not an
    ///   integer or does not fit in an `Int` (1.5, 1e300).
    func decodeInteger(_ key: Key) throws -> Int? {
        do {
            return try decodeIfPresent(Int.self, forKey: key)
        } catch {
            // Foundation's decoder reports such a number as "not valid JSON" with no path at all; read as a
            // `Double`, it can be named with its field, and the entry that holds it.
            guard !(error is DecodingError), let number = try? decodeIfPresent(Double.self, forKey: key) else {
                throw error
            }
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "is \(number), not an integer that fits in 64 bits")
        }
    }

    /// The integer for `key`, or `value` when the key is missing or null.
    /// - Throws: As `decodeInteger(_:)`.
    func decodeInteger(_ key: Key, default value: Int) throws -> Int {
        try decodeInteger(key) ?? value
    }
}
