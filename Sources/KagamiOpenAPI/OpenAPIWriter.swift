// The contract model written as an OpenAPI 3.1 document: what `kagami convert --to openapi`
// prints, shaped so code generators (swift-openapi-generator) accept it.
import KagamiContract
import KagamiFlow
import KagamiJSON
import enum KagamiJSONSchema.JSONPointer

public enum OpenAPIWriter {
    /// The document for `contract`. `serverURL` becomes the only `servers` entry (the mock's
    /// address); the description's own base path is appended to it. `notes` collects what the
    /// document could not say (kept under `x-kagami-…` extensions where it can be), and any
    /// reference the written document holds that points nowhere in it.
    public static func document(for contract: APIContract, serverURL: String, notes: inout [ConversionNote]) -> JSONValue {
        var info: JSONObject = [
            "title": .string(contract.name.isEmpty ? "API" : contract.name),
            "version": .string(contract.metadata.first { $0.name.lowercased() == "version" }?.value ?? "1.0.0"),
        ]
        if !contract.description.isEmpty { info["description"] = .string(contract.description) }
        var server = serverURL
        while server.hasSuffix("/") { server.removeLast() }
        server += basePath(of: contract.servers.first?.url ?? "")
        var paths = JSONObject()
        var operationIds: Set<String> = []
        // A group is a tag (its description the tag's), a resource's name and description its
        // path item's summary and description, so the texts of a Blueprint all have a place.
        var tags: [JSONValue] = []
        for group in contract.groups where !group.name.isEmpty {
            var tag: JSONObject = ["name": .string(group.name)]
            if !group.description.isEmpty { tag["description"] = .string(group.description) }
            if !tags.contains(where: { $0["name"] == tag["name"] }) { tags.append(.object(tag)) }
        }
        for group in contract.groups {
            for resource in group.resources {
                let path = PathTemplate(resource.uriTemplate).path
                var item = paths[path]?.objectValue ?? JSONObject()
                if resource.name != resource.uriTemplate { Self.append(resource.name, to: "summary", of: &item) }
                Self.append(resource.description, to: "description", of: &item)
                if !item.isEmpty { paths[path] = .object(item) }
            }
        }
        let groupOfAction = Dictionary(contract.groups.flatMap { group in
            group.resources.flatMap(\.actions).map { ("\($0.method) \($0.uriTemplate)", group.name) }
        }, uniquingKeysWith: { first, _ in first })
        for action in contract.actions {
            let template = PathTemplate(action.uriTemplate)
            let method = action.method.lowercased()
            var item = paths[template.path]?.objectValue ?? JSONObject()
            var written = operation(action, template: template, operationIds: &operationIds)
            if let group = groupOfAction["\(action.method) \(action.uriTemplate)"], !group.isEmpty { written["tags"] = [.string(group)] }
            guard ["get", "put", "post", "delete", "options", "head", "patch", "trace"].contains(method), item[method] == nil else {
                // Kept beside the operations OpenAPI has, as an extension tools pass over.
                var kept = item[Self.keptActions]?.arrayValue ?? []
                kept.append(["method": .string(action.method), "operation": .object(written)])
                item[Self.keptActions] = .array(kept)
                paths[template.path] = .object(item)
                let why = item[method] == nil
                    ? "OpenAPI has no \(action.method) operations"
                    : "a second \(action.method) on \(template.path) (OpenAPI has one per path)"
                notes.append(ConversionNote(
                    "\(action.method) \(action.uriTemplate): \(why); kept under \(Self.keptActions) of the path \(template.path)",
                    at: action.sourceLocation))
                continue
            }
            item[method] = .object(written)
            paths[template.path] = .object(item)
            if let relation = action.relation {
                notes.append(ConversionNote(
                    "\(action.method) \(action.uriTemplate): OpenAPI has no link relation of an operation; '\(relation)' kept as \(Self.relation)",
                    at: action.sourceLocation))
            }
        }
        var document: JSONObject = [
            "openapi": "3.1.0",
            "info": .object(info),
            "servers": [["url": .string(server)]],
            "paths": .object(paths),
        ]
        if !tags.isEmpty { document["tags"] = .array(tags) }
        var schemas = JSONObject()
        for structure in contract.dataStructures {
            guard let schema = structure.schema else { continue }
            var written = schema2020(schema)
            if !structure.description.isEmpty, case .object(var members) = written, members["description"] == nil {
                members["description"] = .string(structure.description)
                written = .object(members)
            }
            schemas[componentName(structure.name)] = written
        }
        var definitions = LocalDefinitions(components: schemas)
        for (name, schema) in schemas { definitions.components[name] = definitions.hoisted(schema) }
        document["paths"] = definitions.hoistingSchemas(in: .object(paths))
        if !definitions.components.isEmpty { document["components"] = ["schemas": .object(definitions.components)] }
        let written = JSONValue.object(document)
        for (path, reference) in OpenAPIReader.unresolvedReferences(in: written) {
            notes.append(ConversionNote("the written document refers to '\(reference)' at #\(JSONPointer.string(path)), which it does not hold"))
        }
        return written
    }

    /// The path item extension holding the actions OpenAPI has no operation for: a method it
    /// doesn't have (`LINK`), a second action with the same method and path.
    public static let keptActions = "x-kagami-actions"

    /// The operation extension holding a Blueprint action's `+ Relation`.
    public static let relation = "x-kagami-relation"

    /// `/v1` of `https://api.example.com/v1/`; empty for none.
    static func basePath(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            guard let slash = rest.firstIndex(of: "/") else { return "" }
            rest = rest[slash...]
        }
        guard rest.hasPrefix("/"), !rest.contains("{") else { return "" }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        return String(rest)
    }

    /// Component names allow `A-Z a-z 0-9 . - _` only.
    static func componentName(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }

    private static func operation(_ action: Action, template: PathTemplate, operationIds: inout Set<String>) -> JSONObject {
        var operation = JSONObject()
        let id = uniqueIdentifier(for: action, template: template, taken: &operationIds)
        operation["operationId"] = .string(id)
        if !action.name.isEmpty { operation["summary"] = .string(action.name) }
        if !action.description.isEmpty { operation["description"] = .string(action.description) }
        if let relation = action.relation { operation[Self.relation] = .string(relation) }
        var parameters: [JSONValue] = []
        var declared: Set<String> = []
        for parameter in action.parameters {
            var location = parameter.location
            // A path parameter the path doesn't hold would make the document invalid.
            if location == .path, !template.pathVariables.contains(parameter.name) { location = .query }
            if location == .query, template.pathVariables.contains(parameter.name) { location = .path }
            guard declared.insert("\(location.rawValue):\(parameter.name)").inserted else { continue }
            parameters.append(.object(Self.parameter(parameter, in: location)))
        }
        for name in template.pathVariables where !declared.contains("path:\(name)") {
            declared.insert("path:\(name)")
            parameters.append(["name": .string(name), "in": "path", "required": true, "schema": ["type": "string"]])
        }
        for name in template.queryVariables where !declared.contains("query:\(name)") {
            declared.insert("query:\(name)")
            parameters.append(["name": .string(name), "in": "query", "schema": ["type": "string"]])
        }
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
        if let body = requestBody(action) { operation["requestBody"] = .object(body) }
        operation["responses"] = .object(responses(action))
        return operation
    }

    private static func parameter(_ parameter: Parameter, in location: ParameterLocation) -> JSONObject {
        var result: JSONObject = ["name": .string(parameter.name), "in": .string(location.rawValue)]
        if !parameter.description.isEmpty { result["description"] = .string(parameter.description) }
        if location == .path || parameter.required { result["required"] = true }
        var schema: JSONObject
        if let given = parameter.schema?.objectValue {
            schema = given
        } else {
            let type: String
            switch parameter.type?.lowercased() {
            case "number"?: type = "number"
            case "integer"?: type = "integer"
            case "boolean"?: type = "boolean"
            case "array"?: type = "array"
            default: type = "string"
            }
            schema = ["type": .string(type)]
            if type == "array" { schema["items"] = ["type": "string"] }
            if !parameter.members.isEmpty { schema["enum"] = .array(parameter.members.map { typed($0, as: type) }) }
            if let value = parameter.defaultValue { schema["default"] = typed(value, as: type) }
            if let example = parameter.example, !example.isEmpty { result["example"] = typed(example, as: type) }
        }
        result["schema"] = schema2020(.object(schema))
        return result
    }

    /// A parameter's text as the JSON value its type says it is.
    private static func typed(_ text: String, as type: String) -> JSONValue {
        switch type {
        case "number", "integer": (try? JSONValue(parsing: text)).flatMap { $0.doubleValue != nil ? $0 : nil } ?? .string(text)
        case "boolean": text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        default: .string(text)
        }
    }

    private static func requestBody(_ action: Action) -> JSONObject? {
        var content = JSONObject()
        for request in action.examples.flatMap(\.requests) {
            let payload = request.payload
            guard payload.body != nil || payload.schema != nil else { continue }
            let mediaType = payload.mediaType.map(essence) ?? "application/octet-stream"
            content[mediaType] = .object(media(payload, name: request.name, merging: content[mediaType]?.objectValue))
        }
        guard !content.isEmpty else { return nil }
        var body: JSONObject = ["content": .object(content), "required": .bool(action.requestBodyRequired ?? true)]
        for request in action.examples.flatMap(\.requests) { append(request.payload.description, to: "description", of: &body) }
        return body
    }

    /// `text` added to the member `key` of `object` (a paragraph after what is there, once).
    private static func append(_ text: String, to key: String, of object: inout JSONObject) {
        let text = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !text.isEmpty else { return }
        guard let present = object[key]?.stringValue, !present.isEmpty else {
            object[key] = .string(text)
            return
        }
        if !present.components(separatedBy: "\n\n").contains(text) { object[key] = .string(present + "\n\n" + text) }
    }

    private static func responses(_ action: Action) -> JSONObject {
        var responses = JSONObject()
        for response in action.examples.flatMap(\.responses) {
            let key = response.status == 0 ? "default" : response.isStatusClass ? "\(response.status / 100)XX" : String(response.status)
            var entry = responses[key]?.objectValue ?? [
                "description": .string(response.payload.description.isEmpty ? reason(response.status) : response.payload.description)
            ]
            // Another example of the status: its description too.
            if responses[key] != nil { append(response.payload.description, to: "description", of: &entry) }
            var headers = entry["headers"]?.objectValue ?? JSONObject()
            for header in response.payload.headers where !["content-type", "content-length"].contains(header.name.lowercased()) {
                let declared = response.declaredHeaders.first { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }
                headers[header.name] = .object(Self.header(header, declared: declared))
            }
            if !headers.isEmpty { entry["headers"] = .object(headers) }
            let payload = response.payload
            if payload.body != nil || payload.schema != nil {
                var content = entry["content"]?.objectValue ?? JSONObject()
                let mediaType = payload.mediaType.map(essence) ?? "text/plain"
                content[mediaType] = .object(media(payload, name: response.name, merging: content[mediaType]?.objectValue))
                entry["content"] = .object(content)
            }
            responses[key] = .object(entry)
        }
        if responses.isEmpty { responses["default"] = ["description": "No response documented"] }
        return responses
    }

    /// A response header with its example: as the description declares it (schema, `required`,
    /// description, `content`), else a string.
    private static func header(_ line: Header, declared: ResponseHeader?) -> JSONObject {
        guard let declared, let schema = declared.schema else { return ["schema": ["type": "string"], "example": .string(line.value)] }
        var object = JSONObject()
        if !declared.description.isEmpty { object["description"] = .string(declared.description) }
        if declared.required { object["required"] = true }
        if declared.deprecated { object["deprecated"] = true }
        let example = declared.value(of: line.value) ?? .string(line.value)
        if let mediaType = declared.mediaType {
            object["content"] = .object([mediaType: ["schema": schema2020(schema), "example": example]])
        } else {
            object["schema"] = schema2020(schema)
            object["example"] = example
        }
        return object
    }

    /// A media type object: the schema, and the body as its example (several become `examples`).
    private static func media(_ payload: MessagePayload, name: String, merging existing: JSONObject?) -> JSONObject {
        var media = existing ?? JSONObject()
        let isJSON = payload.mediaType.map { essence($0).hasSuffix("json") } ?? false
        if media["schema"] == nil {
            if let schema = payload.schema {
                media["schema"] = schema2020(schema)
            } else if !isJSON {
                media["schema"] = ["type": "string"]
            }
        }
        guard let body = payload.exampleBody else { return media }
        let example: JSONValue = isJSON ? ((try? JSONValue(parsing: body)) ?? .string(body)) : .string(body)
        if let first = media["example"] {
            media.removeValue(forKey: "example")
            media["examples"] = ["example1": ["value": first]]
        }
        if var examples = media["examples"]?.objectValue {
            let key = name.isEmpty || examples[name] != nil ? "example\(examples.count + 1)" : name
            examples[key] = ["value": example]
            media["examples"] = .object(examples)
        } else {
            media["example"] = example
        }
        return media
    }

    private static func essence(_ mediaType: String) -> String {
        (mediaType.split(separator: ";").first.map(String.init) ?? mediaType).trimmingBlanks.lowercased()
    }

    private static func reason(_ status: Int) -> String {
        status == 0 ? "Any other status" : HTTPStatusPhrase.phrase(for: status) ?? "Status \(status)"
    }

    /// `camelCase` of the action's name (or method and path), made unique.
    private static func uniqueIdentifier(for action: Action, template: PathTemplate, taken: inout Set<String>) -> String {
        let source = action.name.isEmpty ? "\(action.method) \(template.path)" : action.name
        var words: [String] = []
        var current = ""
        for character in source {
            if character.isASCII, character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        var identifier = words.enumerated().map { index, word in
            // A first word in capitals (a method, `GET /`) is lower case whole: `get`, not `gET`.
            guard index == 0 else { return word.prefix(1).uppercased() + word.dropFirst() }
            return word.allSatisfy { !$0.isLowercase } ? word.lowercased() : word.prefix(1).lowercased() + word.dropFirst()
        }.joined()
        if identifier.isEmpty { identifier = action.method.lowercased() }
        if let first = identifier.first, first.isNumber { identifier = "operation" + identifier }
        var unique = identifier
        var counter = 2
        while taken.contains(unique) {
            unique = "\(identifier)\(counter)"
            counter += 1
        }
        taken.insert(unique)
        return unique
    }

    // MARK: Schemas

    /// A draft 4 schema (what Blueprints carry) in JSON Schema 2020-12, OpenAPI 3.1's dialect:
    /// tuple `items` become `prefixItems` (with `additionalItems: false` as `maxItems`),
    /// `definitions` become `$defs`, boolean exclusive
    /// bounds become numbers, `id` becomes `$id`; `$schema` goes (the document sets it).
    public static func schema2020(_ schema: JSONValue) -> JSONValue {
        convert(schema, depth: 0)
    }

    private static let schemaMaps: Set<String> = ["properties", "patternProperties", "definitions", "$defs", "dependentSchemas"]
    private static let schemaLists: Set<String> = ["allOf", "anyOf", "oneOf", "prefixItems"]
    private static let schemaValues: Set<String> = [
        "items", "additionalItems", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties",
    ]

    private static func convert(_ schema: JSONValue, depth: Int) -> JSONValue {
        guard depth < 128, case .object(let members) = schema else { return schema }
        var result = JSONObject()
        for (key, value) in members {
            switch key {
            case "$schema":
                continue
            case "id" where value.stringValue != nil:
                result["$id"] = value
            case "definitions":
                result["$defs"] = convertMap(value, depth: depth)
            case "$ref":
                result["$ref"] = .string((value.stringValue ?? "").replacingOccurrences(of: "#/definitions/", with: "#/$defs/"))
            case "exclusiveMinimum", "exclusiveMaximum":
                if case .bool(let exclusive) = value {
                    let bound = key == "exclusiveMinimum" ? "minimum" : "maximum"
                    if exclusive, let limit = members[bound] { result[key] = limit }
                } else {
                    result[key] = value
                }
            case "minimum", "maximum":
                let exclusiveKey = key == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum"
                if members[exclusiveKey]?.boolValue != true { result[key] = value }
            case "items":
                if case .array(let tuple) = value {
                    result["prefixItems"] = .array(tuple.map { convert($0, depth: depth + 1) })
                    switch members["additionalItems"] {
                    case .bool(false)?:
                        // `items: false`, said as a count: OpenAPIKit (and so the generator)
                        // reads `items` as a schema object only.
                        if members["maxItems"] == nil { result["maxItems"] = .integer(tuple.count) }
                    case .object(let additional)?:
                        result["items"] = convert(.object(additional), depth: depth + 1)
                    default:
                        break
                    }
                } else {
                    result["items"] = convert(value, depth: depth + 1)
                }
            case "additionalItems":
                // Only meaningful beside tuple `items`, handled there.
                continue
            case "enum":
                result[key] = value
                // A typed enumeration becomes a Swift enum in generated clients.
                if members["type"] == nil, let values = value.arrayValue, !values.isEmpty {
                    if values.allSatisfy({ $0.stringValue != nil }) {
                        result["type"] = "string"
                    } else if values.allSatisfy({ $0.doubleValue != nil }) {
                        result["type"] = "number"
                    } else if values.allSatisfy({ $0.boolValue != nil }) {
                        result["type"] = "boolean"
                    }
                }
            default:
                if schemaMaps.contains(key) {
                    result[key] = convertMap(value, depth: depth)
                } else if schemaLists.contains(key), case .array(let list) = value {
                    result[key] = .array(list.map { convert($0, depth: depth + 1) })
                } else if schemaValues.contains(key) {
                    result[key] = convert(value, depth: depth + 1)
                } else {
                    result[key] = value
                }
            }
        }
        return .object(result)
    }

    private static func convertMap(_ value: JSONValue, depth: Int) -> JSONValue {
        guard case .object(let map) = value else { return value }
        var result = JSONObject()
        for (name, schema) in map { result[name] = convert(schema, depth: depth + 1) }
        return .object(result)
    }
}

/// A schema's own `$defs` (where the contract puts a schema that refers back to itself, and
/// where a Blueprint's `definitions` go) moved to `components.schemas`: inside an OpenAPI
/// document `#/$defs/Name` is resolved against the document, where nothing is. A definition
/// equal to a component (less its own `$defs`) is that component; another becomes one.
struct LocalDefinitions {
    var components: JSONObject
    /// The components as given, without their `$defs`, to recognise a definition.
    private let given: [JSONValue: String]

    init(components: JSONObject) {
        self.components = components
        var given: [JSONValue: String] = [:]
        for (name, schema) in components {
            guard case .object(var members) = schema else { continue }
            members.removeValue(forKey: "$defs")
            if given[.object(members)] == nil { given[.object(members)] = name }
        }
        self.given = given
    }

    /// Every `schema` member in the paths (parameters, media types, headers) hoisted.
    mutating func hoistingSchemas(in value: JSONValue) -> JSONValue {
        switch value {
        case .object(var members):
            for (key, member) in members where key != "example" && key != "examples" {
                members[key] = key == "schema" ? hoisted(member) : hoistingSchemas(in: member)
            }
            return .object(members)
        case .array(let items):
            return .array(items.map { hoistingSchemas(in: $0) })
        default:
            return value
        }
    }

    /// The schema with its root `$defs` gone to the components and references to them
    /// pointing there.
    mutating func hoisted(_ schema: JSONValue) -> JSONValue {
        guard case .object(var members) = schema, let defs = members.removeValue(forKey: "$defs")?.objectValue else { return schema }
        var targets: [String: String] = [:]
        for (name, definition) in defs {
            if let known = given[definition] {
                targets[name] = known
                continue
            }
            var unique = OpenAPIWriter.componentName(name)
            var counter = 2
            while components[unique] != nil, components[unique] != definition {
                unique = OpenAPIWriter.componentName(name) + "_\(counter)"
                counter += 1
            }
            targets[name] = unique
        }
        for (name, definition) in defs where given[definition] == nil {
            if let target = targets[name], components[target] == nil { components[target] = Self.pointing(definition, to: targets) }
        }
        return Self.pointing(.object(members), to: targets)
    }

    /// `#/$defs/Name` references made `#/components/schemas/Target`.
    private static func pointing(_ value: JSONValue, to targets: [String: String]) -> JSONValue {
        switch value {
        case .object(var members):
            if let reference = members["$ref"]?.stringValue, reference.hasPrefix("#/$defs/"),
               let target = targets[JSONPointer.unescape(String(reference.dropFirst("#/$defs/".count)))] {
                members["$ref"] = .string("#/components/schemas/" + JSONPointer.escape(target))
            }
            for (key, member) in members where key != "$ref" && key != "example" && key != "examples" && key != "default" && key != "enum" && key != "const" {
                members[key] = pointing(member, to: targets)
            }
            return .object(members)
        case .array(let items):
            return .array(items.map { pointing($0, to: targets) })
        default:
            return value
        }
    }
}

/// A URI template read for OpenAPI: the path with `{name}` variables only, and the variables
/// of the query expressions (`{?a,b}`, `{&c}`), which become query parameters.
struct PathTemplate {
    var path = ""
    var pathVariables: [String] = []
    var queryVariables: [String] = []

    init(_ template: String) {
        var rest = Substring(template)
        // An absolute URI keeps only its path.
        if let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            rest = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        }
        while let open = rest.firstIndex(of: "{") {
            path += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                rest = rest[rest.index(after: open)...]
                continue
            }
            var expression = rest[rest.index(after: open)..<close]
            var prefix = ""
            var isQuery = false
            if let first = expression.first, "+#./;?&".contains(first) {
                expression = expression.dropFirst()
                switch first {
                case "?", "&": isQuery = true
                case "/": prefix = "/"
                case ".": prefix = "."
                default: break
                }
            }
            let names = expression.split(separator: ",").map { variable -> String in
                var name = variable.trimmingBlanks
                if name.hasSuffix("*") { name.removeLast() }
                if let colon = name.firstIndex(of: ":") { name = String(name[..<colon]) }
                // `{item%2Did}` is the parameter `item-id` (OpenAPI names need no encoding).
                return name.removingPercentEncoding ?? name
            }.filter { !$0.isEmpty }
            if isQuery {
                queryVariables += names.filter { !queryVariables.contains($0) }
            } else {
                for name in names {
                    path += prefix + "{\(name)}"
                    if !pathVariables.contains(name) { pathVariables.append(name) }
                    if prefix.isEmpty { prefix = "," }
                }
            }
            rest = rest[rest.index(after: close)...]
        }
        // A literal query string (`/notes?sort=asc`) is not part of an OpenAPI path.
        path += rest.prefix { $0 != "?" && $0 != "#" }
        if path.isEmpty || !path.hasPrefix("/") { path = "/" + path }
    }
}

extension StringProtocol {
    fileprivate var trimmingBlanks: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
