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
}
