import KagamiJSON

/// The pieces tools' JSON Schemas are written from, so each tool reads as its fields.
enum ToolSchema {
    /// An object with these members (in this order) and no others.
    static func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = [], description: String? = nil) -> JSONValue {
        var members: JSONObject = [:]
        for (name, schema) in properties { members[name] = schema }
        var object: JSONObject = ["type": "object", "properties": .object(members), "additionalProperties": false]
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        if let description { object["description"] = .string(description) }
        return .object(object)
    }

    static func string(_ description: String, oneOf values: [String]? = nil) -> JSONValue {
        var object: JSONObject = ["type": "string", "description": .string(description)]
        if let values { object["enum"] = .array(values.map(JSONValue.string)) }
        return .object(object)
    }

    static func integer(_ description: String, minimum: Int? = nil, maximum: Int? = nil, default value: Int? = nil) -> JSONValue {
        var object: JSONObject = ["type": "integer", "description": .string(description)]
        if let minimum { object["minimum"] = .integer(minimum) }
        if let maximum { object["maximum"] = .integer(maximum) }
        if let value { object["default"] = .integer(value) }
        return .object(object)
    }

    static func boolean(_ description: String) -> JSONValue {
        ["type": "boolean", "description": .string(description)]
    }

    static func array(of items: JSONValue, _ description: String) -> JSONValue {
        ["type": "array", "items": items, "description": .string(description)]
    }

    /// An object whose members the answer describes in prose (an exchange as the admin API
    /// gives it, a diff report).
    static func anyObject(_ description: String) -> JSONValue {
        ["type": "object", "description": .string(description)]
    }

    /// The answer's schema: an object with these members, all of them present.
    static func answer(_ properties: KeyValuePairs<String, JSONValue>) -> JSONValue {
        var members: JSONObject = [:]
        for (name, schema) in properties { members[name] = schema }
        return ["type": "object", "properties": .object(members), "required": .array(members.keys.map(JSONValue.string))]
    }

    static let id = string("An exchange id (a UUID), as search_exchanges gives it.")
    static let cursor = string("Where to continue: the next of an earlier answer; absent starts at the newest exchange.")
    static let filter = string("Kagami's filter words, all of which must hold: host:, path: (wildcards * ? [a-z]), method:, status: (404, 4xx, none), has:error, a leading - negates, any other word is part of the URL.")
    static let next = ["type": ["string", "null"], "description": "The cursor of the next page; null at the end."] as JSONValue
}
