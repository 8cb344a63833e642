import OrderedCollections

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON document as plain values. Objects keep their members in source order (API
/// descriptions and rendered examples are read by people), integers stay exact.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int)
    /// Any other number (fractions, exponents, integers too large for `Int`).
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

public typealias JSONObject = OrderedDictionary<String, JSONValue>

extension JSONValue {
    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }

    /// The numeric value of `.integer` or `.number`.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// The value as an `Int` when it is a whole number in range (`2.0` counts).
    public var intValue: Int? {
        switch self {
        case .integer(let i): return i
        case .number(let d):
            guard d.rounded() == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int(d)
        default: return nil
        }
    }

    public var isNumber: Bool {
        switch self {
        case .integer, .number: true
        default: false
        }
    }

    /// The JSON type name as JSON Schema spells it ("integer" only for exact integers).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    public subscript(index: Int) -> JSONValue? {
        guard let a = arrayValue, a.indices.contains(index) else { return nil }
        return a[index]
    }

    /// Equality as JSON means it: numbers compare by value (`1 == 1.0`), object member
    /// order does not matter, strings compare by code points.
    public func isJSONEqual(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        // Code point by code point: Swift's == treats "é" and "e\u{301}" as equal, JSON does not.
        // The same code points are the same UTF-8 bytes.
        case (.string(var a), .string(var b)):
            return a.withUTF8 { x in
                b.withUTF8 { y in
                    guard x.count == y.count else { return false }
                    guard let xBytes = x.baseAddress, let yBytes = y.baseAddress else { return true }
                    return memcmp(xBytes, yBytes, x.count) == 0
                }
            }
        case (.integer(let a), .integer(let b)): return a == b
        case (.integer, .number), (.number, .integer), (.number, .number):
            return doubleValue == other.doubleValue
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isJSONEqual(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                guard let theirs = b[key], value.isJSONEqual(to: theirs) else { return false }
            }
            return true
        default: return false
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements, uniquingKeysWith: { _, last in last }))
    }
}
