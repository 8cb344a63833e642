import Foundation

/// Encodes `Encodable` values straight to compact JSON text, without building a tree first.
/// The session store writes every flow's metadata with it: at 30,000 flows a second
/// Foundation's `JSONEncoder` took a sixth of the proxy's CPU.
///
/// The output reads back with a default `JSONDecoder` whose `dateDecodingStrategy` is
/// `.deferredToDate`: dates are seconds since 2001, `Data` is base64, `URL` its absolute string.
/// It handles what synthesized `encode(to:)` implementations do (one container per value,
/// filled in order); a value that asks for nested or super encoders, or for two different
/// containers, is refused with `EncodingError.invalidValue`, so callers can fall back to
/// `JSONEncoder` for it.
public struct StreamingJSONEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let output = Output()
        output.bytes.reserveCapacity(2048)
        try output.write(value, parent: nil, key: nil)
        return Data(output.bytes)
    }
}

/// The text being written, shared by every container of one `encode` call.
private final class Output {
    var bytes: [UInt8] = []

    /// Writes one value; `parent` and `key` say where it sits, for error messages (a coding
    /// path built eagerly for every value cost more than the writing).
    func write<T: Encodable>(_ value: T, parent: ValueEncoder?, key: (any CodingKey)?) throws {
        // Metatype comparisons first: far cheaper than trying casts one by one on every value.
        if T.self == String.self, let string = value as? String { writeString(string); return }
        if T.self == Int.self, let int = value as? Int { writeInteger(int); return }
        if T.self == Bool.self, let bool = value as? Bool { append(bool ? "true" : "false"); return }
        if T.self == Double.self, let double = value as? Double { try checkedNumber(double, parent: parent, key: key); return }
        if T.self == Date.self, let date = value as? Date { try checkedNumber(date.timeIntervalSinceReferenceDate, parent: parent, key: key); return }
        if T.self == UUID.self, let uuid = value as? UUID { writeString(uuid.uuidString); return }
        if T.self == Data.self, let data = value as? Data { writeString(data.base64EncodedString()); return }
        if T.self == URL.self, let url = value as? URL { writeString(url.absoluteString); return }
        switch value {
        // The other primitives: their `encode(to:)` asks a single-value container to encode
        // them, which lands here again, so they must be written, not handed back.
        case let float as Float: try checkedNumber(Double(float), parent: parent, key: key)
        case let value as Int8: writeInteger(value)
        case let value as Int16: writeInteger(value)
        case let value as Int32: writeInteger(value)
        case let value as Int64: writeInteger(value)
        case let value as UInt: writeInteger(value)
        case let value as UInt8: writeInteger(value)
        case let value as UInt16: writeInteger(value)
        case let value as UInt32: writeInteger(value)
        case let value as UInt64: writeInteger(value)
        default:
            let encoder = ValueEncoder(output: self, parent: parent, key: key)
            try value.encode(to: encoder)
            try encoder.finish()
        }
    }

    func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    func checkedNumber(_ value: Double, parent: ValueEncoder?, key: (any CodingKey)?) throws {
        guard value.isFinite else {
            let codingPath = (parent?.codingPath ?? []) + (key.map { [$0] } ?? [])
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) has no JSON form"))
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    func writeInteger<I: BinaryInteger>(_ value: I) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A JSON string: runs that need no escaping are copied whole.
    func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): append("\\\"")
                case UInt8(ascii: "\\"): append("\\\\")
                case UInt8(ascii: "\n"): append("\\n")
                case UInt8(ascii: "\r"): append("\\r")
                case UInt8(ascii: "\t"): append("\\t")
                case 0x08: append("\\b")
                case 0x0C: append("\\f")
                default:
                    let hex = String(byte, radix: 16)
                    bytes.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// The encoder one value's `encode(to:)` sees; it opens at most one container.
private final class ValueEncoder: Encoder {
    enum Container { case none, keyed, unkeyed, single }

    let output: Output
    let parent: ValueEncoder?
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] {
        (parent?.codingPath ?? []) + (key.map { [$0] } ?? [])
    }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var container = Container.none
    /// Members or elements written so far, for the commas.
    var count = 0
    /// Why this value can't be streamed, found while its containers were in use.
    var refusal: String?

    init(output: Output, parent: ValueEncoder?, key: (any CodingKey)?) {
        self.output = output
        self.parent = parent
        self.key = key
    }

    private func open(_ kind: Container) -> Bool {
        if container == kind { return true }
        guard container == .none else {
            refusal = "asks for a second, different container"
            return false
        }
        container = kind
        switch kind {
        case .keyed: output.append("{")
        case .unkeyed: output.append("[")
        case .single, .none: break
        }
        return true
    }

    func finish() throws {
        if let refusal {
            throw EncodingError.invalidValue(refusal, .init(codingPath: codingPath, debugDescription: "can't be streamed: \(refusal)"))
        }
        switch container {
        case .none: output.append("{}")
        case .keyed: output.append("}")
        case .unkeyed: output.append("]")
        case .single: if count == 0 { output.append("null") }
        }
    }

    /// Writes the separator before the next member or element.
    func beginItem() {
        if count > 0 { output.append(",") }
        count += 1
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        _ = open(.keyed)
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        _ = open(.unkeyed)
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        _ = open(.single)
        return SingleContainer(encoder: self)
    }

    func refuse(_ reason: String) {
        if refusal == nil { refusal = reason }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func key(_ key: Key) {
        encoder.beginItem()
        encoder.output.writeString(key.stringValue)
        encoder.output.append(":")
    }

    mutating func encodeNil(forKey key: Key) throws {
        self.key(key)
        encoder.output.append("null")
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        self.key(key)
        encoder.output.append(value ? "true" : "false")
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        self.key(key)
        encoder.output.writeString(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        self.key(key)
        try encoder.output.checkedNumber(value, parent: encoder, key: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        self.key(key)
        try encoder.output.checkedNumber(Double(value), parent: encoder, key: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { self.key(key); encoder.output.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        self.key(key)
        try encoder.output.write(value, parent: encoder, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.refuse("nested keyed container for \(key.stringValue)")
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.refuse("nested unkeyed container for \(key.stringValue)")
        return UnkeyedContainer(encoder: encoder)
    }
    mutating func superEncoder() -> any Encoder {
        encoder.refuse("super encoder")
        return encoder
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.refuse("super encoder for \(key.stringValue)")
        return encoder
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.count }

    mutating func encodeNil() throws {
        encoder.beginItem()
        encoder.output.append("null")
    }
    mutating func encode(_ value: Bool) throws {
        encoder.beginItem()
        encoder.output.append(value ? "true" : "false")
    }
    mutating func encode(_ value: String) throws {
        encoder.beginItem()
        encoder.output.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        encoder.beginItem()
        try encoder.output.checkedNumber(value, parent: encoder, key: nil)
    }
    mutating func encode(_ value: Int) throws {
        encoder.beginItem()
        encoder.output.writeInteger(value)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.beginItem()
        try encoder.output.write(value, parent: encoder, key: nil)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        encoder.refuse("nested keyed container in an array")
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        encoder.refuse("nested unkeyed container in an array")
        return self
    }
    mutating func superEncoder() -> any Encoder {
        encoder.refuse("super encoder in an array")
        return encoder
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func begin() -> Bool {
        guard encoder.count == 0 else {
            encoder.refuse("two values in one single-value container")
            return false
        }
        encoder.count = 1
        return true
    }

    mutating func encodeNil() throws {
        if begin() { encoder.output.append("null") }
    }
    mutating func encode(_ value: Bool) throws {
        if begin() { encoder.output.append(value ? "true" : "false") }
    }
    mutating func encode(_ value: String) throws {
        if begin() { encoder.output.writeString(value) }
    }
    mutating func encode(_ value: Double) throws {
        if begin() { try encoder.output.checkedNumber(value, parent: encoder, key: nil) }
    }
    mutating func encode(_ value: Int) throws {
        if begin() { encoder.output.writeInteger(value) }
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if begin() { try encoder.output.write(value, parent: encoder, key: nil) }
    }
}
