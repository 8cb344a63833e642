// Every sample of a value merged into one JSON Schema: what was seen, how often, in which shapes.
import Foundation
import KagamiJSON
import OrderedCollections

/// What the samples of one value (a body, a property, an array item, a parameter) had in common.
/// Add samples with `add(_:)`, then read `schema()`.
public struct SchemaSketch: Sendable, Hashable {
    /// Samples of this value (including nulls).
    public private(set) var samples = 0
    var nulls = 0
    var booleans = 0
    var integers = 0
    var numbers = 0
    var strings = 0
    var arrays = 0
    var objects = 0
    /// How many strings matched each format (a format is kept only when every string did).
    var formatHits: [StringFormat: Int] = [:]
    /// Distinct string values and how often each came, while there are few of them.
    var stringValues: OrderedDictionary<String, Int> = [:]
    var tooManyStringValues = false
    /// Merged array items (zero or one element: a struct can't hold itself directly).
    var items: [SchemaSketch] = []
    var properties: OrderedDictionary<String, SchemaSketch> = [:]
    /// Objects in which each property was present.
    var propertyPresence: [String: Int] = [:]
    /// Set when an object had more members than `Limits.properties`: the rest were not described.
    var tooManyProperties = false

    /// Bounds that keep a sketch small whatever the traffic holds.
    public enum Limits {
        public static let depth = 32
        public static let properties = 300
        public static let distinctStrings = 32
    }

    public init() {}

    public init(merging values: some Sequence<JSONValue>) {
        for value in values { add(value) }
    }

    public mutating func add(_ value: JSONValue) {
        add(value, depth: 0)
    }

    private mutating func add(_ value: JSONValue, depth: Int) {
        samples += 1
        guard depth < Limits.depth else { return }
        switch value {
        case .null: nulls += 1
        case .bool: booleans += 1
        case .integer: integers += 1
        case .number(let number):
            // 2.0 written with a fraction is still a number in the traffic: keep it a number.
            _ = number
            numbers += 1
        case .string(let text):
            strings += 1
            for format in StringFormat.allCases where format.matches(text) { formatHits[format, default: 0] += 1 }
            if !tooManyStringValues {
                stringValues[text, default: 0] += 1
                if stringValues.count > Limits.distinctStrings {
                    tooManyStringValues = true
                    stringValues = [:]
                }
            }
        case .array(let elements):
            arrays += 1
            if items.isEmpty, !elements.isEmpty { items = [SchemaSketch()] }
            for element in elements { items[0].add(element, depth: depth + 1) }
        case .object(let members):
            objects += 1
            for (key, member) in members {
                if properties[key] == nil {
                    guard properties.count < Limits.properties else {
                        tooManyProperties = true
                        continue
                    }
                    properties[key] = SchemaSketch()
                }
                properties[key]?.add(member, depth: depth + 1)
                propertyPresence[key, default: 0] += 1
            }
        }
    }

    /// Adds everything `other` saw, as if its samples had been added here.
    public mutating func merge(_ other: SchemaSketch) {
        merge(other, depth: 0)
    }

    private mutating func merge(_ other: SchemaSketch, depth: Int) {
        guard depth < Limits.depth else { return }
        samples += other.samples
        nulls += other.nulls
        booleans += other.booleans
        integers += other.integers
        numbers += other.numbers
        strings += other.strings
        arrays += other.arrays
        objects += other.objects
        formatHits.merge(other.formatHits, uniquingKeysWith: +)
        if other.tooManyStringValues { tooManyStringValues = true }
        if !tooManyStringValues {
            stringValues.merge(other.stringValues, uniquingKeysWith: +)
            if stringValues.count > Limits.distinctStrings {
                tooManyStringValues = true
                stringValues = [:]
            }
        }
        if let theirs = other.items.first {
            if items.isEmpty { items = [theirs] } else { items[0].merge(theirs, depth: depth + 1) }
        }
        for (key, property) in other.properties {
            if properties[key] != nil {
                properties[key]?.merge(property, depth: depth + 1)
            } else if properties.count < Limits.properties {
                properties[key] = property
            } else {
                tooManyProperties = true
                continue
            }
            propertyPresence[key, default: 0] += other.propertyPresence[key] ?? 0
        }
        if other.tooManyProperties { tooManyProperties = true }
    }

    /// Types seen, other than null, as JSON Schema names them (integer and number seen together are number).
    var types: [String] {
        var result: [String] = []
        if objects > 0 { result.append("object") }
        if arrays > 0 { result.append("array") }
        if strings > 0 { result.append("string") }
        if numbers > 0 { result.append("number") } else if integers > 0 { result.append("integer") }
        if booleans > 0 { result.append("boolean") }
        return result
    }

    /// The format every string sample had, the most specific first.
    public var format: StringFormat? {
        guard strings > 0 else { return nil }
        return StringFormat.allCases.first { formatHits[$0] == strings }
    }

    /// Enumerated values, only on strong evidence: at least 10 samples, at most 10 distinct
    /// values, and each value seen three times on average; never for formatted strings.
    public var enumeration: [String]? {
        guard strings >= 10, !tooManyStringValues, format == nil,
              stringValues.count <= 10, stringValues.count * 3 <= strings else { return nil }
        return Array(stringValues.keys)
    }

    /// Properties present in every object sample.
    public var requiredProperties: [String] {
        guard objects > 0 else { return [] }
        return properties.keys.filter { propertyPresence[$0] == objects }
    }

    /// The JSON Schema (2020-12) the samples satisfy: types with `null` when seen, `required`
    /// for properties in every object, merged `items`, formats and strong enums.
    public func schema() -> JSONValue {
        schema(depth: 0)
    }

    private func schema(depth: Int) -> JSONValue {
        let types = types
        guard depth < Limits.depth, !types.isEmpty else {
            return nulls > 0 ? ["type": "null"] : [:]
        }
        if types.count == 1 {
            var object = members(for: types[0], depth: depth)
            if nulls > 0 { object["type"] = .array([.string(types[0]), "null"]) }
            return .object(object)
        }
        // Different kinds of values at one place: one branch per kind. Null is `enum: [null]`,
        // not `type: "null"`: OpenAPIKit reads a `type: "null"` branch as making the whole
        // `anyOf` null-only.
        var branches = types.map { JSONValue.object(members(for: $0, depth: depth)) }
        if nulls > 0 { branches.append(["enum": [.null]]) }
        return ["anyOf": .array(branches)]
    }

    private func members(for type: String, depth: Int) -> JSONObject {
        var object: JSONObject = ["type": .string(type)]
        switch type {
        case "object":
            var described = JSONObject()
            for (key, property) in properties { described[key] = property.schema(depth: depth + 1) }
            if !described.isEmpty { object["properties"] = .object(described) }
            let required = requiredProperties
            if !required.isEmpty { object["required"] = .array(required.map { .string($0) }) }
        case "array":
            if let item = items.first, item.samples > 0 { object["items"] = item.schema(depth: depth + 1) }
        case "string":
            if let format { object["format"] = .string(format.rawValue) }
            if let enumeration { object["enum"] = .array(enumeration.map { .string($0) }) }
        default:
            break
        }
        return object
    }
}

/// String formats recognised in samples, the most specific first.
public enum StringFormat: String, Sendable, Hashable, CaseIterable {
    case uuid
    case dateTime = "date-time"
    case date
    case email
    case ipv4
    case uri

    public func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        switch self {
        case .uuid: return PathSegmentShape.isUUID(scalars)
        case .date: return PathSegmentShape.isDate(scalars)
        case .dateTime: return Self.isDateTime(scalars)
        case .email: return PathSegmentShape.isEmail(text) && !text.contains("/") && !text.contains(":") && text.unicodeScalars.allSatisfy { $0.value > 32 && $0.value < 127 }
        case .ipv4: return Self.isIPv4(text)
        case .uri: return Self.isURI(text)
        }
    }

    /// RFC 3339: `2026-11-24T10:15:30Z`, fractions and offsets allowed.
    static func isDateTime(_ s: [Unicode.Scalar]) -> Bool {
        guard s.count >= 20, PathSegmentShape.isDate(Array(s[0..<10])), s[10] == "T" || s[10] == "t" else { return false }
        let d = PathSegmentShape.isDigit
        guard d(s[11]), d(s[12]), s[13] == ":", d(s[14]), d(s[15]), s[16] == ":", d(s[17]), d(s[18]) else { return false }
        var index = 19
        if s[index] == "." {
            index += 1
            let start = index
            while index < s.count, d(s[index]) { index += 1 }
            guard index > start else { return false }
        }
        guard index < s.count else { return false }
        if s[index] == "Z" || s[index] == "z" { return index == s.count - 1 }
        guard s[index] == "+" || s[index] == "-", s.count - index == 6 else { return false }
        return d(s[index + 1]) && d(s[index + 2]) && s[index + 3] == ":" && d(s[index + 4]) && d(s[index + 5])
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard !part.isEmpty, part.count <= 3, part.unicodeScalars.allSatisfy(PathSegmentShape.isDigit), let value = Int(part) else { return false }
            return value <= 255 && (part.count == 1 || part.first != "0")
        }
    }

    /// An absolute URI (`https://…`, `mailto:…`, `urn:…`).
    static func isURI(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), !text.contains(" ") else { return false }
        let scheme = text[..<colon]
        // Only schemes URIs in APIs really use: `key:value` text is not a URI.
        let lowered = scheme.lowercased()
        guard ["http", "https", "ftp", "ws", "wss", "file", "mailto", "urn", "tel", "data"].contains(lowered) else { return false }
        let rest = text[text.index(after: colon)...]
        guard !rest.isEmpty else { return false }
        if ["http", "https", "ftp", "ws", "wss"].contains(lowered) { return rest.hasPrefix("//") && rest.count > 2 }
        return true
    }
}
