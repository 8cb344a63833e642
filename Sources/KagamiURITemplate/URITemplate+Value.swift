import KagamiJSON

extension URITemplate {
    /// A variable's value: the three kinds RFC 6570 expands. A variable that is absent from
    /// the variables given to `expand` is undefined.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        case list([String])
        /// (key, value) pairs in the order they expand.
        case associative([Pair])

        public struct Pair: Sendable, Hashable {
            public var key: String
            public var value: String
            public init(_ key: String, _ value: String) {
                self.key = key
                self.value = value
            }
        }

        /// RFC 6570 section 2.3: an empty list or associative array counts as undefined.
        var isDefined: Bool {
            switch self {
            case .string: true
            case .list(let items): !items.isEmpty
            case .associative(let pairs): !pairs.isEmpty
            }
        }

        public var description: String { json.serialized() }
    }
}

extension URITemplate.Value {
    /// The value a JSON document gives a variable: strings as they are, numbers and booleans
    /// as their JSON text, arrays as lists, objects as associative arrays. `null` (and `null`
    /// items or members) is undefined, so this returns `nil` for it. Nested arrays and objects
    /// inside a list or object become their JSON text.
    public init?(json: JSONValue) {
        switch json {
        case .null: return nil
        case .array(let items):
            self = .list(items.compactMap(Self.scalarText))
        case .object(let members):
            self = .associative(members.compactMap { key, value in
                Self.scalarText(value).map { Pair(key, $0) }
            })
        default:
            guard let text = Self.scalarText(json) else { return nil }
            self = .string(text)
        }
    }

    private static func scalarText(_ json: JSONValue) -> String? {
        switch json {
        case .null: nil
        case .string(let s): s
        default: json.serialized()
        }
    }

    /// Strings stay strings, lists become arrays, associative arrays become objects.
    public var json: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .list(let items): .array(items.map(JSONValue.string))
        case .associative(let pairs):
            .object(JSONObject(pairs.map { ($0.key, JSONValue.string($0.value)) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}

extension URITemplate {
    /// The variables of a JSON object, for `expand`; `null` members are left undefined.
    public static func variables(fromJSON object: JSONObject) -> [String: Value] {
        var variables: [String: Value] = [:]
        for (name, json) in object {
            if let value = Value(json: json) { variables[name] = value }
        }
        return variables
    }
}
