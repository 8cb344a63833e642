// Decodes OpenAPIKit's document straight from the JSON values the reader already holds, as
// Yams's YAMLDecoder decoded it from their JSON text. Each scalar is handed to Yams's own
// constructors as the node that text becomes (a string double-quoted and tagged str; a number,
// boolean or null plain), so values and errors come out as they did. What changes is the cost:
// members are found by hashing, where Yams scans a mapping's keys for each one (quadratic in
// a mapping of tens of thousands of paths), and neither the JSON text nor a second tree of
// nodes is made.
import Dispatch
import Foundation
import KagamiContract
import KagamiJSON
import OpenAPIKit
import Synchronization
import Yams

enum OpenAPIValueDecoder {
    /// `progress` hears how many of the paths and component schemas have been decoded.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, progress: ReadingProgress.Report? = nil) throws -> T {
        let count = progress.map { DecodedCount(of: value, report: $0) }
        return try ValueDecoder(value: value, codingPath: [], count: count).decode(type)
    }

    /// The document without its paths, and each path item decoded on its own, the items
    /// shared out among the processor's cores: what decoding the whole document decodes,
    /// path item by path item, in the document's order. Nil when any part fails to decode
    /// (decoding the whole document then gives the error as OpenAPIKit words it), when the
    /// document has no `paths` object, or when it has fewer than `minimumPaths`.
    static func decodeApart<Document: Decodable, PathItem: Decodable & Sendable>(
        _ document: Document.Type, paths pathItem: PathItem.Type, from value: JSONValue, minimumPaths: Int,
        progress: ReadingProgress.Report? = nil
    ) -> (document: Document, paths: [(key: String, item: PathItem)])? {
        guard case .object(var members) = value, case .object(let paths) = members["paths"], paths.count >= minimumPaths else { return nil }
        let count = progress.map { DecodedCount(of: value, report: $0) }
        members["paths"] = .object([:])
        guard let skeleton = try? ValueDecoder(value: .object(members), codingPath: [], count: count).decode(document) else { return nil }
        // As decoding the whole `paths` object does: the names Yams keeps for anchors and tags left out.
        let entries = paths.elements.filter { $0.key != "yamlAnchor" && $0.key != "yamlTag" }
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, 8, max(1, entries.count / 64))
        let decoded = Mutex<[[(key: String, item: PathItem)]?]>(Array(repeating: nil, count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var items: [(key: String, item: PathItem)] = []
            let range = (entries.count * part / parts)..<(entries.count * (part + 1) / parts)
            items.reserveCapacity(range.count)
            for (key, member) in entries[range] {
                let codingPath: [CodingKey] = [ValueCodingKey.paths, ValueCodingKey(member: key)]
                guard let item = try? ValueDecoder(value: member, codingPath: codingPath, count: nil).decode(pathItem) else { return }
                items.append((key, item))
                count?.advance()
            }
            decoded.withLock { $0[part] = items }
        }
        let items = decoded.withLock { $0 }
        guard items.allSatisfy({ $0 != nil }) else { return nil }
        return (skeleton, items.flatMap { $0 ?? [] })
    }
}

/// Decoding is most of reading a large description: its progress is counted in the members
/// of `paths` and `components.schemas` begun.
private final class DecodedCount: Sendable {
    let total: Int
    let report: ReadingProgress.Report
    private let done = Atomic(0)

    init(of document: JSONValue, report: @escaping ReadingProgress.Report) {
        total = (document["paths"]?.objectValue?.count ?? 0) + (document["components"]?["schemas"]?.objectValue?.count ?? 0)
        self.report = report
    }

    /// Called as a member is reached at `codingPath`.
    func reached(_ codingPath: [CodingKey]) {
        let counted = switch codingPath.count {
        case 1: codingPath[0].stringValue == "paths"
        case 2: codingPath[1].stringValue == "schemas" && codingPath[0].stringValue == "components"
        default: false
        }
        if counted { advance() }
    }

    /// One more path or component schema begun.
    func advance() {
        let done = done.add(1, ordering: .relaxed).newValue
        if done <= total, done % 500 == 0 { report(ReadingProgress(stage: "decoding", done: done, total: total)) }
    }
}

/// The coding keys Yams's decoder makes: array indices and `super`.
private struct ValueCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    static let `super` = ValueCodingKey(stringValue: "super") ?? ValueCodingKey(index: 0)
    static let paths = ValueCodingKey(member: "paths")

    init(member name: String) {
        stringValue = name
        intValue = nil
    }
}

/// A mismatch worded as Yams words it (`reality` is the name of the node's kind).
private func typeMismatch(_ codingPath: [CodingKey], expectation: Any.Type, reality: String) -> DecodingError {
    .typeMismatch(expectation, DecodingError.Context(
        codingPath: codingPath, debugDescription: "Expected to decode \(expectation) but found \(reality) instead."))
}

private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [CodingKey]
    let count: DecodedCount?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw typeMismatch(codingPath, expectation: Node.Mapping.self, reality: "Node")
        }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(decoder: self, members: members))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw typeMismatch(codingPath, expectation: Node.Sequence.self, reality: "Node")
        }
        return UnkeyedValueContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer { self }

    func decoder(for value: JSONValue, as key: CodingKey) -> ValueDecoder {
        ValueDecoder(value: value, codingPath: codingPath + [key], count: count)
    }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // OpenAPIKit reads every object that may carry `x-` extensions whole as AnyCodable
        // (the document's root too), trying one type after another at each value: made
        // directly, with what those tries find in Yams's nodes.
        if type == AnyCodable.self, let made = AnyCodable(Self.anyValue(value)) as? T { return made }
        if type == [String: AnyCodable].self, let made = vendorExtensionCandidates() as? T { return made }
        guard let constructible = type as? ScalarConstructible.Type else { return try T(from: self) }
        let scalar = try self.scalar()
        guard let constructed = constructible.construct(from: scalar) else {
            throw typeMismatch(codingPath, expectation: type, reality: "Scalar")
        }
        guard let result = constructed as? T else {
            throw typeMismatch(codingPath, expectation: type, reality: "\(Swift.type(of: constructed))")
        }
        return result
    }

    /// An object read as `[String: AnyCodable]`, which only `AnyCodable(from:)` asks for: that
    /// is how OpenAPIKit finds an object's `x-` extensions (the document's root, each path
    /// item, operation, response, schema…). It keeps the values of `x-` keys and looks only at
    /// the names of the others (known keys are dropped, any other is an error naming it), so
    /// those values are left out rather than made: made, they were every object's whole
    /// subtree again at each level of nesting, the whole document at its root.
    private func vendorExtensionCandidates() -> [String: AnyCodable]? {
        guard case .object(let members) = value else { return nil }
        var candidates: [String: AnyCodable] = [:]
        candidates.reserveCapacity(members.count)
        for (key, member) in members where key != "yamlAnchor" && key != "yamlTag" {
            candidates[key] = key.lowercased().hasPrefix("x-") ? AnyCodable(Self.anyValue(member)) : AnyCodable(NSNull())
        }
        return candidates
    }

    /// What AnyCodable's decoding finds: null as NSNull, a Bool only from a boolean, an Int
    /// from an integer, a Double from any other number (a quoted string is neither), arrays
    /// and objects member by member (without the keys Yams keeps for anchors and tags).
    static func anyValue(_ value: JSONValue) -> any Sendable {
        switch value {
        case .null: return NSNull()
        case .bool(let bool): return bool
        case .integer(let integer): return integer
        case .number(let number): return number
        case .string(let text): return text
        case .array(let items): return items.map(anyValue)
        case .object(let members):
            var dictionary: [String: any Sendable] = [:]
            for (key, member) in members where key != "yamlAnchor" && key != "yamlTag" {
                dictionary[key] = anyValue(member)
            }
            return dictionary
        }
    }

    /// The node Yams read from this value's JSON text.
    private func scalar() throws -> Node.Scalar {
        switch value {
        case .object: throw typeMismatch(codingPath, expectation: Node.Scalar.self, reality: "Mapping")
        case .array: throw typeMismatch(codingPath, expectation: Node.Scalar.self, reality: "Sequence")
        // libyaml tags a quoted scalar str.
        case .string(let text): return Node.Scalar(text, Tag(.str), .doubleQuoted)
        default: return Node.Scalar(value.serialized(), Tag(.implicit), .plain)
        }
    }
}

private struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let members: JSONObject

    var codingPath: [CodingKey] { decoder.codingPath }

    /// Yams leaves out the names it uses for anchors and tags.
    var allKeys: [Key] {
        members.keys.compactMap { $0 == "yamlAnchor" || $0 == "yamlTag" ? nil : Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).decodeNil() }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try member(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try member(key).unkeyedContainer()
    }

    func superDecoder() throws -> Decoder { try member(ValueCodingKey.super) }

    func superDecoder(forKey key: Key) throws -> Decoder { try member(key) }

    private func member(_ key: CodingKey) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        decoder.count?.reached(codingPath)
        return decoder.decoder(for: value, as: key)
    }
}

private struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let items: [JSONValue]
    var currentIndex = 0

    init(decoder: ValueDecoder, items: [JSONValue]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    /// Moves on whether or not the element is null, as Yams does.
    mutating func decodeNil() throws -> Bool {
        try throwIfAtEnd(Any?.self)
        return try current { $0.decodeNil() }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try current { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try current { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        try current { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> Decoder { try current { $0 } }

    private func throwIfAtEnd<T>(_ type: T.Type) throws {
        if isAtEnd {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: codingPath + [ValueCodingKey(index: currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
    }

    private mutating func current<T>(_ body: (ValueDecoder) throws -> T) throws -> T {
        try throwIfAtEnd(T.self)
        let decoded = try body(decoder.decoder(for: items[currentIndex], as: ValueCodingKey(index: currentIndex)))
        currentIndex += 1
        return decoded
    }
}
