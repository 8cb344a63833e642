// Decoding conventions every rule type (and scenario file) follows: absent fields take their defaults, and a key
// the type doesn't know is an error (a typo such as `hots:` must not silently match everything).

struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Refuses a key `Key` doesn't list, naming it and the ones expected.
    public func rejectUnknownKeys<Key: CodingKey & CaseIterable>(_ keys: Key.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let known = Set(Key.allCases.map(\.stringValue))
        for key in container.allKeys where !known.contains(key.stringValue) {
            let expected = Key.allCases.map(\.stringValue).joined(separator: ", ")
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: codingPath + [key],
                debugDescription: "unknown field \"\(key.stringValue)\" (expected one of: \(expected))"))
        }
    }
}

extension KeyedDecodingContainer {
    func decode<T: Decodable>(_ key: Key, default value: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? value
    }
}
