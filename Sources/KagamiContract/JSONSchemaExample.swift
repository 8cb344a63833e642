// Example values from JSON Schemas and loose schemas from example bodies: the two ends of
// Apiary's precedence (a body from the schema when nothing else gives one, and a schema from
// the body when nothing else gives one). Generation only; validation lives elsewhere.
import KagamiJSON

public enum JSONSchemaExample {
    /// `$schema` noted on schemas derived from an example body.
    public static let derivedDialect = "http://json-schema.org/draft-04/schema#"

    /// Deeper schemas than this yield `null`: keeps self-referencing schemas finite.
    static let maximumDepth = 32

    /// A value that fits `schema`, preferring its `example`, `examples`, `default`, `const`
    /// and `enum` in that order, then building one from `type`.
    public static func example(for schema: JSONValue) -> JSONValue {
        example(for: schema, depth: 0)
    }

    private static func example(for schema: JSONValue, depth: Int) -> JSONValue {
        guard depth < maximumDepth, let object = schema.objectValue else { return .null }
        if let value = object["example"] { return value }
        if let first = object["examples"]?.arrayValue?.first { return first }
        if let value = object["default"] { return value }
        if let value = object["const"] { return value }
        if let first = object["enum"]?.arrayValue?.first { return first }
        for keyword in ["oneOf", "anyOf"] {
            if let first = object[keyword]?.arrayValue?.first(where: { $0["type"]?.stringValue != "null" }) {
                return example(for: first, depth: depth + 1)
            }
        }
        if let parts = object["allOf"]?.arrayValue {
            var merged = JSONObject()
            for part in parts {
                if case .object(let members) = example(for: part, depth: depth + 1) {
                    for (key, value) in members { merged[key] = value }
                }
            }
            if !merged.isEmpty { return .object(merged) }
        }
        var type = object["type"]?.stringValue
        if type == nil, let types = object["type"]?.arrayValue {
            type = types.compactMap(\.stringValue).first { $0 != "null" }
        }
        if type == nil {
            if object["properties"] != nil { type = "object" } else if object["items"] != nil { type = "array" }
        }
        switch type {
        case "object":
            var members = JSONObject()
            let required = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for (key, value) in object["properties"]?.objectValue ?? [:] {
                let member = example(for: value, depth: depth + 1)
                // A `null` the schema doesn't allow (a reference back into the schema, cut off)
                // is left out where the property may be absent.
                if member == .null, !required.contains(key), !allowsNull(value) { continue }
                members[key] = member
            }
            return .object(members)
        case "array":
            if let items = object["items"], items.objectValue != nil {
                let count = max(1, object["minItems"]?.intValue ?? 1)
                return .array(Array(repeating: example(for: items, depth: depth + 1), count: min(count, 3)))
            }
            if let tuple = object["items"]?.arrayValue ?? object["prefixItems"]?.arrayValue {
                return .array(tuple.map { example(for: $0, depth: depth + 1) })
            }
            return .array([])
        case "string":
            switch object["format"]?.stringValue {
            case "date-time": return "1970-01-01T00:00:00Z"
            case "date": return "1970-01-01"
            case "email": return "user@example.com"
            case "uuid": return "00000000-0000-0000-0000-000000000000"
            case "uri", "url": return "https://example.com/"
            default: return .string("")
            }
        // Zero when the bounds allow it (format ranges such as int32 are bounds too), else
        // the bound nearest to it.
        case "integer", "number":
            let minimum = object["minimum"]?.doubleValue ?? -.infinity
            let maximum = object["maximum"]?.doubleValue ?? .infinity
            if minimum > 0 { return object["minimum"] ?? .integer(0) }
            if maximum < 0 { return object["maximum"] ?? .integer(0) }
            return .integer(0)
        case "boolean": return .bool(false)
        case "null": return .null
        default: return .null
        }
    }

    /// Whether `schema` lets `null` through, as far as its type keywords say.
    private static func allowsNull(_ schema: JSONValue) -> Bool {
        guard let object = schema.objectValue else { return true }
        if object["type"]?.stringValue == "null" || object["nullable"]?.boolValue == true { return true }
        if object["type"]?.arrayValue?.contains(.string("null")) == true { return true }
        if object["enum"]?.arrayValue?.contains(.null) == true || object["const"] == .null { return true }
        for keyword in ["anyOf", "oneOf"] where object[keyword]?.arrayValue?.contains(where: allowsNull) == true {
            return true
        }
        return false
    }

    /// A loose schema an example body satisfies: types and property names, nothing required,
    /// arrays by their first item.
    public static func schema(describing value: JSONValue) -> JSONValue {
        var root = describe(value, depth: 0)
        if case .object(var members) = root {
            members.updateValue(.string(derivedDialect), forKey: "$schema", insertingAt: 0)
            root = .object(members)
        }
        return root
    }

    private static func describe(_ value: JSONValue, depth: Int) -> JSONValue {
        guard depth < maximumDepth else { return [:] }
        switch value {
        case .null: return ["type": "null"]
        case .bool: return ["type": "boolean"]
        case .integer, .number: return ["type": "number"]
        case .string: return ["type": "string"]
        case .array(let items):
            guard let first = items.first else { return ["type": "array"] }
            return ["type": "array", "items": describe(first, depth: depth + 1)]
        case .object(let members):
            var properties = JSONObject()
            for (key, member) in members { properties[key] = describe(member, depth: depth + 1) }
            return ["type": "object", "properties": .object(properties)]
        }
    }
}
