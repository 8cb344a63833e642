// The contract as JSON in a stable, ordered shape (documented in docs/CONTRACT.md); this is
// what `kagami contract FILE --json` prints.
import KagamiJSON

extension APIContract {
    public var jsonValue: JSONValue {
        [
            "format": .string(format.rawValue),
            "name": .string(name),
            "description": .string(description),
            "metadata": .array(metadata.map { ["name": .string($0.name), "value": .string($0.value)] }),
            "servers": .array(servers.map { ["url": .string($0.url), "description": .string($0.description)] }),
            "groups": .array(groups.map(\.jsonValue)),
            "dataStructures": .array(dataStructures.map(\.jsonValue)),
            "annotations": .array(annotations.map(\.jsonValue)),
        ]
    }
}

extension SourceLocation {
    public var jsonValue: JSONValue {
        ["line": .integer(line), "column": .integer(column), "offset": .integer(offset), "length": .integer(length)]
    }
}

extension Optional where Wrapped == SourceLocation {
    var jsonValue: JSONValue { map(\.jsonValue) ?? .null }
}

extension Annotation {
    public var jsonValue: JSONValue {
        ["severity": .string(severity.rawValue), "message": .string(message), "location": sourceLocation.jsonValue]
    }
}

extension ResourceGroup {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "description": .string(description),
            "resources": .array(resources.map(\.jsonValue)), "location": sourceLocation.jsonValue,
        ]
    }
}

extension Resource {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "description": .string(description), "uriTemplate": .string(uriTemplate),
            "parameters": .array(parameters.map(\.jsonValue)), "actions": .array(actions.map(\.jsonValue)),
            "location": sourceLocation.jsonValue,
        ]
    }
}

extension Parameter {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "in": .string(location.rawValue), "type": type.map(JSONValue.string) ?? .null,
            "required": .bool(required), "default": defaultValue.map(JSONValue.string) ?? .null,
            "example": example.map(JSONValue.string) ?? .null, "members": .array(members.map(JSONValue.string)),
            "description": .string(description), "schema": schema ?? .null, "location": sourceLocation.jsonValue,
        ]
    }
}

extension Action {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "method": .string(method), "uriTemplate": .string(uriTemplate),
            "description": .string(description), "relation": relation.map(JSONValue.string) ?? .null,
            "parameters": .array(parameters.map(\.jsonValue)), "examples": .array(examples.map(\.jsonValue)),
            "requestBodyRequired": requestBodyRequired.map(JSONValue.bool) ?? .null,
            "location": sourceLocation.jsonValue,
        ]
    }
}

extension TransactionExample {
    public var jsonValue: JSONValue {
        [
            "name": .string(name),
            "requests": .array(requests.map { request in
                var object: JSONObject = ["name": .string(request.name), "parameters": .array(request.parameters.map(\.jsonValue))]
                request.payload.write(into: &object)
                return .object(object)
            }),
            "responses": .array(responses.map { response in
                var object: JSONObject = ["status": .integer(response.status), "name": .string(response.name)]
                response.payload.write(into: &object)
                object["declaredHeaders"] = .array(response.declaredHeaders.map(\.jsonValue))
                return .object(object)
            }),
        ]
    }
}

extension MessagePayload {
    func write(into object: inout JSONObject) {
        object["description"] = .string(description)
        object["headers"] = .array(headers.map { ["name": .string($0.name), "value": .string($0.value)] })
        object["body"] = exampleBody.map(JSONValue.string) ?? .null
        object["bodySource"] = bodySource.map { .string($0.rawValue) } ?? .null
        object["schema"] = schema ?? .null
        object["schemaText"] = schemaText.map(JSONValue.string) ?? .null
        object["schemaSource"] = schemaSource.map { .string($0.rawValue) } ?? .null
        object["schemaDialect"] = schemaDialect.map(JSONValue.string) ?? .null
        object["location"] = sourceLocation.jsonValue
    }
}

extension ResponseHeader {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "required": .bool(required), "deprecated": .bool(deprecated),
            "description": .string(description), "schema": schema ?? .null,
            "mediaType": mediaType.map(JSONValue.string) ?? .null, "location": sourceLocation.jsonValue,
        ]
    }
}

extension DataStructure {
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "description": .string(description), "example": exampleValue ?? .null,
            "schema": schema ?? .null, "location": sourceLocation.jsonValue,
        ]
    }
}
