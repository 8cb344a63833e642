// A traffic draft as an OpenAPI 3.1 document (YAML).
import KagamiFlow
import KagamiJSON
import OrderedCollections

public enum OpenAPIDraftWriter {
    /// The document as YAML text.
    public static func yaml(_ draft: TrafficDraft) -> String {
        YAMLText.document(document(draft))
    }

    /// The document as a JSON value (OpenAPI 3.1, schemas in JSON Schema 2020-12).
    public static func document(_ draft: TrafficDraft) -> JSONValue {
        var root: JSONObject = [
            "openapi": "3.1.0",
            "info": [
                "title": .string(draft.title),
                "version": "0.1.0",
                "description": .string("Drafted by `kagami infer` from \(draft.exchangeCount) recorded exchange\(draft.exchangeCount == 1 ? "" : "s"). Check the path templates, required fields and enums before relying on it."),
            ],
        ]
        if !draft.servers.isEmpty {
            root["servers"] = .array(draft.servers.map { ["url": .string($0)] })
        }
        var tags: OrderedDictionary<String, String> = [:]
        var paths = JSONObject()
        var schemes: Set<AuthenticationKind> = []
        var schemeNames: [AuthenticationKind: String] = [:]
        for operation in draft.operations {
            let tag = groupName(operation)
            tags[tag] = tags[tag] ?? "\(operation.server)"
            let pathKey = operation.template.description
            var item = paths[pathKey]?.objectValue ?? JSONObject()
            if !operation.pathParameters.isEmpty, item["parameters"] == nil {
                // Path variables are shared by every method at the path: merged over all of them.
                let merged = draft.operations.filter { $0.server == operation.server && $0.template == operation.template }
                item["parameters"] = .array(operation.pathParameters.indices.map { index in
                    var values = ValueSketch()
                    var example: String?
                    for other in merged where index < other.pathParameters.count {
                        values.merge(other.pathParameters[index].values)
                        example = example ?? other.pathParameters[index].example
                    }
                    var parameter: JSONObject = ["name": .string(operation.pathParameters[index].name), "in": "path", "required": true, "schema": values.schema()]
                    if let example { parameter["example"] = typedExample(example, values.schema()) }
                    return .object(parameter)
                })
            }
            var object: JSONObject = [:]
            object["tags"] = [.string(tag)]
            object["summary"] = .string("\(operation.method) \(pathKey)")
            object["operationId"] = .string(operation.name)
            var parameters: [JSONValue] = []
            for parameter in operation.query.values {
                parameters.append(parameterObject(parameter, in: "query", required: operation.isRequired(parameter)))
            }
            for parameter in operation.headers.values {
                parameters.append(parameterObject(parameter, in: "header", required: operation.isRequired(parameter)))
            }
            if !parameters.isEmpty { object["parameters"] = .array(parameters) }
            if !operation.requestBodies.isEmpty {
                object["requestBody"] = [
                    "required": .bool(operation.requestsWithBody == operation.count),
                    "content": .object(content(operation.requestBodies)),
                ]
            }
            var responses = JSONObject()
            for response in operation.sortedResponses {
                var entry: JSONObject = ["description": .string("\(reason(response.status)) (seen \(response.count) time\(response.count == 1 ? "" : "s"))")]
                if !response.headers.isEmpty {
                    var headers = JSONObject()
                    for header in response.headers.values {
                        var described: JSONObject = ["schema": header.values.schema()]
                        if header.presence == response.count { described["required"] = true }
                        if let example = header.example { described["example"] = .string(example) }
                        headers[header.name] = .object(described)
                    }
                    entry["headers"] = .object(headers)
                }
                if response.bodyIsOptional {
                    entry["description"] = .string("\(reason(response.status)) (seen \(response.count) times, \(response.emptyCount) without a body: the body is not described)")
                    entry["content"] = .object(JSONObject(uniqueKeysWithValues: response.bodies.keys.map { ($0, JSONValue.object([:])) }))
                } else if !response.bodies.isEmpty {
                    entry["content"] = .object(content(response.bodies))
                }
                responses[String(response.status)] = .object(entry)
            }
            if responses.isEmpty { responses["default"] = ["description": "No response was recorded"] }
            object["responses"] = .object(responses)
            if !operation.authentication.isEmpty {
                object["security"] = .array(operation.authentication.keys.sorted().map { kind in
                    schemes.insert(kind)
                    schemeNames[kind] = operation.authentication[kind]
                    return [.init(stringLiteral: securitySchemeName(kind)): []]
                })
            }
            item[operation.method.lowercased()] = .object(object)
            paths[pathKey] = .object(item)
        }
        root["tags"] = .array(tags.map { name, server in ["name": .string(name), "description": .string("Exchanges with \(server)")] })
        root["paths"] = .object(paths)
        if !schemes.isEmpty {
            var described = JSONObject()
            for kind in schemes.sorted() {
                switch kind {
                case .bearer: described[securitySchemeName(kind)] = ["type": "http", "scheme": "bearer"]
                case .basic: described[securitySchemeName(kind)] = ["type": "http", "scheme": "basic"]
                case .apiKeyHeader: described[securitySchemeName(kind)] = ["type": "apiKey", "in": "header", "name": .string(schemeNames[kind] ?? "X-API-Key")]
                case .apiKeyQuery: described[securitySchemeName(kind)] = ["type": "apiKey", "in": "query", "name": .string(schemeNames[kind] ?? "api_key")]
                }
            }
            root["components"] = ["securitySchemes": .object(described)]
        }
        return .object(root)
    }

    /// `127.0.0.1:3000 /users`: the host and the first segment of the path.
    static func groupName(_ operation: DraftOperation) -> String {
        let host = operation.server.split(separator: "/").last.map(String.init) ?? operation.server
        let base: String
        switch operation.template.segments.first {
        case .literal(let text)?: base = "/" + text
        case .variable?: base = "/{\(operation.template.variableNames.first ?? "id")}"
        case nil: base = "/"
        }
        return "\(host) \(base)"
    }

    static func securitySchemeName(_ kind: AuthenticationKind) -> String {
        switch kind {
        case .bearer: "bearerAuth"
        case .basic: "basicAuth"
        case .apiKeyHeader: "apiKeyHeader"
        case .apiKeyQuery: "apiKeyQuery"
        }
    }

    private static func parameterObject(_ parameter: ParameterSketch, in location: String, required: Bool) -> JSONValue {
        var object: JSONObject = ["name": .string(parameter.name), "in": .string(location)]
        if required { object["required"] = true }
        var schema = parameter.values.schema()
        if parameter.values.count > parameter.presence, case .object = schema {
            // Repeated in one request (`tag=a&tag=b`): an array of them. Array items arrive as
            // text to a contract check, so items other than strings are described in words.
            if let type = schema["type"]?.stringValue, type != "string" {
                object["description"] = .string("Repeated; each value \(type == "integer" ? "an integer" : "a \(type)").")
                schema = ["type": "string"]
            }
            schema = ["type": "array", "items": schema]
            object["explode"] = true
        }
        object["schema"] = schema
        if let example = parameter.example { object["example"] = typedExample(example, schema["items"] ?? schema) }
        return .object(object)
    }

    /// A parameter's text as the JSON value its schema says (`42` for an integer, not `"42"`).
    static func typedExample(_ text: String, _ schema: JSONValue) -> JSONValue {
        switch schema["type"]?.stringValue {
        case "integer": Int(text).map(JSONValue.integer) ?? .string(text)
        case "number": Double(text).map(JSONValue.number) ?? .string(text)
        case "boolean": text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        default: .string(text)
        }
    }

    private static func content(_ bodies: OrderedDictionary<String, BodySketch>) -> JSONObject {
        var content = JSONObject()
        for body in bodies.values {
            var media = JSONObject()
            if let sketch = body.sketch {
                media["schema"] = sketch.schema()
            } else if body.isJSON {
                // No sample parsed (they are listed as skipped): the media type alone, so the
                // draft doesn't claim a shape nobody saw.
            } else if MediaTypeText.isText(body.mediaType) {
                media["schema"] = ["type": "string"]
            } else {
                media["schema"] = ["type": "string", "contentMediaType": .string(body.mediaType)]
            }
            if let example = body.example { media["example"] = example }
            content[body.mediaType] = .object(media)
        }
        return content
    }

    static func reason(_ status: Int) -> String {
        HTTPStatusPhrase.phrase(for: status) ?? "Status \(status)"
    }
}
