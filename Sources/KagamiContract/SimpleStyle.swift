// Parameter and header values as text, in OpenAPI's `simple` style (RFC 6570's `{name}`): the
// one reading of such text as the value its schema describes, for the mock and the contract
// check, and the one writing of a value as such text, for the examples the readers give.
import KagamiJSON

public enum SimpleStyle {
    /// `text` read as the schema's `type` says: `42` for an integer, `true` for a boolean,
    /// `a,b` as an array (each item read along `items`), `role,admin,id,7` as an object (its
    /// properties read along `properties`). Text that doesn't read as the type stays a string,
    /// for the schema to refuse with its `type`.
    public static func value(of text: String, schema: JSONValue?) -> JSONValue {
        let types = self.types(of: schema)
        if types.contains("integer"), let integer = Int(text) { return .integer(integer) }
        // An integer beyond `Int` is still an integer: as the JSON parser reads it, a double.
        if types.contains("integer") || types.contains("number"), isIntegerLiteral(text), let number = Double(text) {
            return .number(number)
        }
        if types.contains("number"), let number = Double(text), number.isFinite { return Int(text).map(JSONValue.integer) ?? .number(number) }
        if types.contains("boolean"), text == "true" || text == "false" { return .bool(text == "true") }
        if types.contains("array") {
            let items = schema?["items"]
            if text.isEmpty { return .array([]) }
            return .array(text.split(separator: ",", omittingEmptySubsequences: false).map { value(of: String($0), schema: items) })
        }
        if types.contains("object") {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if parts.count % 2 == 0 {
                var object = JSONObject()
                for index in stride(from: 0, to: parts.count, by: 2) {
                    object[parts[index]] = value(of: parts[index + 1], schema: schema?["properties"]?[parts[index]])
                }
                return .object(object)
            }
        }
        return .string(text)
    }

    /// A value as a header line or a URI writes it: a string as it is, an array's items and an
    /// object's names and values joined by commas, null as nothing.
    public static func text(of value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .null: return ""
        case .array(let items): return items.map(text(of:)).joined(separator: ",")
        case .object(let members): return members.map { "\($0.key),\(text(of: $0.value))" }.joined(separator: ",")
        default: return value.serialized()
        }
    }

    /// The schema's `type`, one name or a list of them.
    public static func types(of schema: JSONValue?) -> [String] {
        switch schema?["type"] {
        case .string(let type)?: return [type]
        case .array(let list)?: return list.compactMap(\.stringValue)
        default: return []
        }
    }

    /// Digits with an optional leading minus.
    public static func isIntegerLiteral(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
