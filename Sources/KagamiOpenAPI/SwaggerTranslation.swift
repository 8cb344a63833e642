// A Swagger 2.0 document as the OpenAPI 3.0 document it describes, each part keeping where the
// 2.0 text writes it, so the reader's errors name lines of the file the user has.
import Foundation
import KagamiContract
import KagamiJSON

/// A value of a parsed document and where each of its parts is written.
struct PositionedValue {
    var value: JSONValue
    var positions: JSONSourcePositions

    init(_ value: JSONValue, _ positions: JSONSourcePositions) {
        self.value = value
        self.positions = positions
    }

    /// A value made by the translation, placed where the source part it stands for is written.
    init(_ value: JSONValue, at offset: Int) {
        self.init(value, JSONSourcePositions(offset: offset))
    }

    var offset: Int { positions.offset }
    var string: String? { value.stringValue }

    subscript(key: String) -> PositionedValue? {
        guard case .object(let members) = value, let index = members.index(forKey: key) else { return nil }
        return PositionedValue(members.values[index], child(index))
    }

    /// An object's members in document order (none for other values).
    var members: [(key: String, value: PositionedValue)] {
        guard case .object(let members) = value else { return [] }
        return members.keys.enumerated().map { index, key in (key, PositionedValue(members.values[index], child(index))) }
    }

    /// An array's elements (none for other values).
    var elements: [PositionedValue] {
        guard case .array(let items) = value else { return [] }
        return items.enumerated().map { index, item in PositionedValue(item, child(index)) }
    }

    private func child(_ index: Int) -> JSONSourcePositions {
        positions.children.indices.contains(index) ? positions.children[index] : JSONSourcePositions(offset: offset)
    }

    static func array(_ elements: [PositionedValue], at offset: Int) -> PositionedValue {
        PositionedValue(.array(elements.map(\.value)), JSONSourcePositions(offset: offset, children: elements.map(\.positions)))
    }
}

/// An object being written by the translation, with its members' positions.
struct PositionedObject {
    private var members = JSONObject()
    private var children: [JSONSourcePositions] = []
    let offset: Int

    init(at offset: Int) { self.offset = offset }

    var isEmpty: Bool { members.isEmpty }

    subscript(key: String) -> PositionedValue? {
        get {
            members.index(forKey: key).map { PositionedValue(members.values[$0], children[$0]) }
        }
        set {
            guard let newValue else {
                if let index = members.index(forKey: key) {
                    members.remove(at: index)
                    children.remove(at: index)
                }
                return
            }
            if let index = members.index(forKey: key) {
                members.values[index] = newValue.value
                children[index] = newValue.positions
            } else {
                members[key] = newValue.value
                children.append(newValue.positions)
            }
        }
    }

    /// A member made by the translation, placed at `offset`.
    mutating func set(_ key: String, _ value: JSONValue, at offset: Int) {
        self[key] = PositionedValue(value, at: offset)
    }

    /// Copies the members named from `source` as they are written.
    mutating func copy(_ keys: [String], from source: PositionedValue) {
        for key in keys { if let value = source[key] { self[key] = value } }
    }

    /// Copies the specification extensions (`x-…`) of `source`.
    mutating func copyExtensions(from source: PositionedValue) {
        for (key, value) in source.members where key.hasPrefix("x-") { self[key] = value }
    }

    var positioned: PositionedValue {
        PositionedValue(.object(members), JSONSourcePositions(offset: offset, children: children))
    }
}

/// Swagger 2.0 (the OpenAPI Specification 2.0) read as OpenAPI 3.0.3: `host`, `basePath` and
/// `schemes` become `servers`; `consumes`/`produces` a `content` entry per media type; `body`
/// and `formData` parameters a `requestBody` (form fields as an object schema of an
/// urlencoded or multipart form); `definitions`, `parameters`, `responses` and
/// `securityDefinitions` components, with their `$ref`s rewritten; `type: file` a binary
/// string; `collectionFormat` a `style` and `explode`. What 3.0 has no form for is a note;
/// what 2.0 itself forbids, an error.
struct SwaggerTranslation {
    private let source: PositionedValue
    private let lines: SourceLines
    private(set) var notes: [ConversionNote] = []
    private(set) var problems: [Annotation] = []

    /// The 3.0 document and its positions (offsets into the 2.0 text), what could not be
    /// carried over, and what the 2.0 document gets wrong.
    static func translate(
        _ document: JSONValue, positions: JSONSourcePositions, lines: SourceLines
    ) -> (document: PositionedValue, notes: [ConversionNote], problems: [Annotation]) {
        var translation = SwaggerTranslation(source: PositionedValue(document, positions), lines: lines)
        let translated = translation.document()
        return (translated, translation.notes, translation.problems)
    }

    /// Whether a document's `swagger` field says 2.0 (YAML reads an unquoted `2.0` as a number).
    static func isVersion2(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): text == "2.0"
        case .number(let number): number == 2
        case .integer(let number): number == 2
        default: false
        }
    }

    private init(source: PositionedValue, lines: SourceLines) {
        self.source = source
        self.lines = lines
    }

    private mutating func note(_ message: String, at part: PositionedValue) {
        notes.append(ConversionNote(message, at: lines.location(ofOffset: part.offset)))
    }

    private mutating func problem(_ message: String, at part: PositionedValue) {
        problems.append(Annotation(.error, message, at: lines.location(ofOffset: part.offset)))
    }

    // MARK: Document

    private mutating func document() -> PositionedValue {
        var result = PositionedObject(at: source.offset)
        result.set("openapi", "3.0.3", at: source["swagger"]?.offset ?? source.offset)
        result.copy(["info"], from: source)
        if let servers = servers() { result["servers"] = servers }
        let produces = mediaTypes(source["produces"])
        let consumes = mediaTypes(source["consumes"])
        // Without `paths`, none: OpenAPIKit names what is missing.
        if let paths = source["paths"] { result["paths"] = self.paths(paths, consumes: consumes, produces: produces) }
        var components = PositionedObject(at: (source["definitions"] ?? source["parameters"] ?? source["responses"] ?? source["securityDefinitions"] ?? source).offset)
        if let definitions = source["definitions"] {
            var schemas = PositionedObject(at: definitions.offset)
            for (name, schema) in definitions.members { schemas[name] = self.schema(schema) }
            components["schemas"] = schemas.positioned
        }
        if let parameters = source["parameters"] {
            // Body and form parameters are a request body where an operation uses them.
            var written = PositionedObject(at: parameters.offset)
            for (name, parameter) in parameters.members where !Self.isBodyOrForm(parameter) {
                written[name] = self.parameter(parameter)
            }
            if !written.isEmpty { components["parameters"] = written.positioned }
        }
        if let responses = source["responses"] {
            var written = PositionedObject(at: responses.offset)
            for (name, response) in responses.members { written[name] = self.response(response, produces: produces) }
            components["responses"] = written.positioned
        }
        if let definitions = source["securityDefinitions"] {
            var schemes = PositionedObject(at: definitions.offset)
            for (name, scheme) in definitions.members { schemes[name] = securityScheme(name, scheme) }
            components["securitySchemes"] = schemes.positioned
        }
        if !components.isEmpty { result["components"] = components.positioned }
        result.copy(["security", "tags", "externalDocs"], from: source)
        result.copyExtensions(from: source)
        return result.positioned
    }

    /// One server per scheme: `scheme://host/basePath`; `https` when no scheme is named (the
    /// specification's default, the scheme the definition was fetched with, is unknown for a
    /// file); the base path alone without a host.
    private mutating func servers() -> PositionedValue? {
        let host = source["host"]
        let basePath = source["basePath"]
        guard host != nil || basePath != nil else { return nil }
        var base = basePath?.string ?? ""
        if base == "/" { base = "" }
        guard let host, let name = host.string else {
            let url = base.isEmpty ? "/" : base
            return .array([PositionedValue(["url": .string(url)], at: (basePath ?? source).offset)], at: (basePath ?? source).offset)
        }
        let schemes = source["schemes"]?.elements.compactMap { scheme -> PositionedValue? in
            guard let text = scheme.string else { return nil }
            if text == "ws" || text == "wss" {
                note("scheme '\(text)': a server of OpenAPI 3 is an HTTP URL; left out", at: scheme)
                return nil
            }
            return scheme
        } ?? []
        let named = schemes.isEmpty ? [PositionedValue("https", at: host.offset)] : schemes
        return .array(named.map { scheme in
            PositionedValue(["url": .string("\(scheme.string ?? "https")://\(name)\(base)")], at: host.offset)
        }, at: host.offset)
    }

    private func mediaTypes(_ list: PositionedValue?) -> [String] {
        list?.elements.compactMap(\.string) ?? []
    }

    // MARK: Paths and operations

    private static let methods = ["get", "put", "post", "delete", "options", "head", "patch"]

    private mutating func paths(_ paths: PositionedValue, consumes: [String], produces: [String]) -> PositionedValue {
        var result = PositionedObject(at: paths.offset)
        for (path, item) in paths.members {
            if path.hasPrefix("x-") {
                result[path] = item
                continue
            }
            var written = PositionedObject(at: item.offset)
            if let reference = item["$ref"] {
                note("a path item's $ref: its operations are not read from there", at: reference)
            }
            // A path's body and form parameters join each operation's own.
            let shared = item["parameters"]?.elements.compactMap { resolvedParameter($0) } ?? []
            let sharedSimple = shared.filter { !Self.isBodyOrForm($0.resolved) }
            if !sharedSimple.isEmpty, let list = item["parameters"] {
                written["parameters"] = .array(sharedSimple.map { parameter($0.written) }, at: list.offset)
            }
            let sharedBody = shared.filter { Self.isBodyOrForm($0.resolved) }
            for method in Self.methods {
                guard let operation = item[method] else { continue }
                written[method] = self.operation(
                    operation, sharedBody: sharedBody, consumes: operation["consumes"].map { mediaTypes($0) } ?? consumes,
                    produces: operation["produces"].map { mediaTypes($0) } ?? produces)
            }
            written.copyExtensions(from: item)
            result[path] = written.positioned
        }
        return result.positioned
    }

    /// A parameter as written (perhaps a `$ref`) and what it stands for; nil for a `$ref` to
    /// nothing (named by the reader's reference check).
    private func resolvedParameter(_ written: PositionedValue) -> (written: PositionedValue, resolved: PositionedValue)? {
        guard let reference = written["$ref"]?.string else { return (written, written) }
        guard reference.hasPrefix("#/parameters/") else { return (written, written) }
        let name = Self.unescaped(String(reference.dropFirst("#/parameters/".count)))
        return source["parameters"]?[name].map { (written, $0) }
    }

    private static func isBodyOrForm(_ parameter: PositionedValue) -> Bool {
        let location = parameter["in"]?.string
        return location == "body" || location == "formData"
    }

    private mutating func operation(
        _ operation: PositionedValue, sharedBody: [(written: PositionedValue, resolved: PositionedValue)],
        consumes: [String], produces: [String]
    ) -> PositionedValue {
        var result = PositionedObject(at: operation.offset)
        result.copy(["tags", "summary", "description", "externalDocs", "operationId"], from: operation)
        let own = operation["parameters"]?.elements.compactMap { resolvedParameter($0) } ?? []
        let simple = own.filter { !Self.isBodyOrForm($0.resolved) }
        if !simple.isEmpty, let list = operation["parameters"] {
            result["parameters"] = .array(simple.map { parameter($0.written) }, at: list.offset)
        }
        // The operation's own body or form parameter of a name replaces the path's.
        var bodyParameters = own.filter { Self.isBodyOrForm($0.resolved) }
        for inherited in sharedBody where !bodyParameters.contains(where: {
            $0.resolved["name"]?.string == inherited.resolved["name"]?.string && $0.resolved["in"]?.string == inherited.resolved["in"]?.string
        }) {
            bodyParameters.append(inherited)
        }
        if let body = requestBody(bodyParameters.map(\.resolved), consumes: consumes, at: operation["parameters"] ?? operation) {
            result["requestBody"] = body
        }
        if let responses = operation["responses"] {
            var written = PositionedObject(at: responses.offset)
            for (status, response) in responses.members {
                written[status] = status.hasPrefix("x-") ? response : self.response(response, produces: produces)
            }
            result["responses"] = written.positioned
        }
        if let schemes = operation["schemes"] {
            note("the operation's own schemes: it is served at the document's servers; left out", at: schemes)
        }
        result.copy(["deprecated", "security"], from: operation)
        result.copyExtensions(from: operation)
        return result.positioned
    }

    // MARK: Parameters

    /// A path, query, header or form parameter's keywords that describe its value: its schema.
    private static let valueKeywords = [
        "type", "format", "items", "default", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "enum", "multipleOf",
    ]

    /// A path, query or header parameter (a `$ref` to one rewritten).
    private mutating func parameter(_ parameter: PositionedValue) -> PositionedValue {
        if let reference = parameter["$ref"] {
            return PositionedValue(["$ref": .string(Self.rewritten(reference.string ?? ""))], JSONSourcePositions(offset: parameter.offset, children: [reference.positions]))
        }
        var result = PositionedObject(at: parameter.offset)
        result.copy(["name", "in", "description", "required", "allowEmptyValue"], from: parameter)
        let location = parameter["in"]?.string ?? ""
        if parameter["name"]?.string == nil {
            problem("a \(location.isEmpty ? "" : location + " ")parameter without a name", at: parameter)
        }
        if !["query", "header", "path"].contains(location) {
            problem("parameter '\(parameter["name"]?.string ?? "")': 'in' is \(location.isEmpty ? "missing" : "'\(location)'"); Swagger 2.0 has query, header, path, formData and body", at: parameter["in"] ?? parameter)
        }
        result["schema"] = valueSchema(parameter)
        if let example = parameter["x-example"] { result["example"] = example }
        if parameter["type"]?.string == "array" {
            let format = parameter["collectionFormat"]
            switch (format?.string ?? "csv", location) {
            case ("csv", "query"):
                result.set("style", "form", at: (format ?? parameter).offset)
                result.set("explode", false, at: (format ?? parameter).offset)
            case ("csv", _):
                break
            case ("multi", "query"):
                result.set("style", "form", at: format?.offset ?? parameter.offset)
                result.set("explode", true, at: format?.offset ?? parameter.offset)
            case ("ssv", "query"):
                result.set("style", "spaceDelimited", at: format?.offset ?? parameter.offset)
                result.set("explode", false, at: format?.offset ?? parameter.offset)
            case ("pipes", "query"):
                result.set("style", "pipeDelimited", at: format?.offset ?? parameter.offset)
                result.set("explode", false, at: format?.offset ?? parameter.offset)
            case (let other, _):
                if let format {
                    note("collectionFormat '\(other)' of a \(location) parameter: OpenAPI 3 has no such style; read as csv", at: format)
                }
            }
        }
        result.copyExtensions(from: parameter)
        return result.positioned
    }

    /// The schema of a non-body parameter, a form field or a response header: its type and
    /// value keywords (`type: file` a binary string), items the same way.
    private mutating func valueSchema(_ parameter: PositionedValue) -> PositionedValue {
        var schema = PositionedObject(at: parameter["type"]?.offset ?? parameter.offset)
        for key in Self.valueKeywords {
            guard let value = parameter[key] else { continue }
            if key == "items" {
                if let format = value["collectionFormat"], format.string != "csv" {
                    note("collectionFormat '\(format.string ?? "")' of nested array items: OpenAPI 3 has no form for it; read as csv", at: format)
                }
                schema["items"] = valueSchema(value)
            } else if key == "type", value.string == "file" {
                schema.set("type", "string", at: value.offset)
                schema.set("format", "binary", at: value.offset)
            } else if key == "format", schema["format"] != nil {
                continue
            } else {
                schema[key] = value
            }
        }
        return schema.positioned
    }

    // MARK: Request bodies

    private static let formMediaTypes = ["application/x-www-form-urlencoded", "multipart/form-data"]

    /// The `requestBody` the operation's body parameter, or its form parameters, describe.
    private mutating func requestBody(_ parameters: [PositionedValue], consumes: [String], at place: PositionedValue) -> PositionedValue? {
        let bodies = parameters.filter { $0["in"]?.string == "body" }
        let fields = parameters.filter { $0["in"]?.string == "formData" }
        if bodies.count > 1 {
            problem("more than one body parameter: an operation has at most one body", at: bodies[1])
        }
        if !bodies.isEmpty, let field = fields.first {
            problem("a body parameter beside formData parameters: an operation's body is one or the other", at: field)
        }
        if let body = bodies.first {
            var result = PositionedObject(at: body.offset)
            result.copy(["description", "required"], from: body)
            let schema = body["schema"].map { self.schema($0) } ?? PositionedValue([:], at: body.offset)
            var content = PositionedObject(at: body.offset)
            for mediaType in consumes.isEmpty ? ["application/json"] : consumes {
                var entry = PositionedObject(at: body.offset)
                entry["schema"] = schema
                if let example = body["x-examples"]?[mediaType] { entry["example"] = example }
                content[mediaType] = entry.positioned
            }
            result["content"] = content.positioned
            result.copyExtensions(from: body)
            return result.positioned
        }
        guard let first = fields.first else { return nil }
        var properties = PositionedObject(at: first.offset)
        var required: [PositionedValue] = []
        var styles: [(name: String, style: String, explode: Bool, at: PositionedValue)] = []
        for field in fields {
            guard let name = field["name"]?.string else {
                problem("a formData parameter without a name", at: field)
                continue
            }
            var schema = PositionedObject(at: field.offset)
            for (key, value) in valueSchema(field).members { schema[key] = value }
            schema.copy(["description"], from: field)
            properties[name] = schema.positioned
            if field["required"]?.value.boolValue == true { required.append(PositionedValue(.string(name), at: field.offset)) }
            if field["type"]?.string == "array" {
                let format = field["collectionFormat"]
                switch format?.string ?? "csv" {
                case "csv": styles.append((name, "form", false, format ?? field))
                case "multi": styles.append((name, "form", true, format ?? field))
                case "ssv": styles.append((name, "spaceDelimited", false, format ?? field))
                case "pipes": styles.append((name, "pipeDelimited", false, format ?? field))
                default:
                    if let format { note("collectionFormat '\(format.string ?? "")' of a form field: OpenAPI 3 has no such style; read as csv", at: format) }
                    styles.append((name, "form", false, format ?? field))
                }
            }
        }
        var schema = PositionedObject(at: first.offset)
        schema.set("type", "object", at: first.offset)
        schema["properties"] = properties.positioned
        if !required.isEmpty { schema["required"] = .array(required, at: required[0].offset) }
        let hasFile = fields.contains { $0["type"]?.string == "file" }
        var mediaTypes = consumes.filter { Self.formMediaTypes.contains($0) }
        if mediaTypes.isEmpty {
            mediaTypes = [hasFile ? "multipart/form-data" : "application/x-www-form-urlencoded"]
            if !consumes.isEmpty {
                note("formData parameters with consumes naming no form media type: read as \(mediaTypes[0])", at: first)
            }
        }
        var content = PositionedObject(at: first.offset)
        for mediaType in mediaTypes {
            var entry = PositionedObject(at: first.offset)
            entry["schema"] = schema.positioned
            // How arrays are written: a urlencoded form's only (multipart has a part per value).
            if mediaType == "application/x-www-form-urlencoded", !styles.isEmpty {
                var encoding = PositionedObject(at: styles[0].at.offset)
                for style in styles {
                    var written = PositionedObject(at: style.at.offset)
                    written.set("style", .string(style.style), at: style.at.offset)
                    written.set("explode", .bool(style.explode), at: style.at.offset)
                    encoding[style.name] = written.positioned
                }
                entry["encoding"] = encoding.positioned
            }
            content[mediaType] = entry.positioned
        }
        var result = PositionedObject(at: place.offset)
        if fields.contains(where: { $0["required"]?.value.boolValue == true }) { result.set("required", true, at: first.offset) }
        result["content"] = content.positioned
        return result.positioned
    }

    // MARK: Responses

    private mutating func response(_ response: PositionedValue, produces: [String]) -> PositionedValue {
        if let reference = response["$ref"] {
            return PositionedValue(["$ref": .string(Self.rewritten(reference.string ?? ""))], JSONSourcePositions(offset: response.offset, children: [reference.positions]))
        }
        var result = PositionedObject(at: response.offset)
        result.copy(["description"], from: response)
        if let headers = response["headers"] {
            var written = PositionedObject(at: headers.offset)
            for (name, header) in headers.members {
                var entry = PositionedObject(at: header.offset)
                entry.copy(["description"], from: header)
                entry["schema"] = valueSchema(header)
                if let format = header["collectionFormat"], format.string != "csv" {
                    note("collectionFormat '\(format.string ?? "")' of a response header: a header's style is simple (csv); read as csv", at: format)
                }
                if let example = header["x-example"] { entry["example"] = example }
                entry.copyExtensions(from: header)
                written[name] = entry.positioned
            }
            result["headers"] = written.positioned
        }
        let schema = response["schema"].map { self.schema($0) }
        let examples = response["examples"]?.members ?? []
        if schema != nil || !examples.isEmpty {
            var content = PositionedObject(at: (response["schema"] ?? response["examples"] ?? response).offset)
            var types = produces.isEmpty ? ["application/json"] : produces
            // An example of a media type the operation doesn't produce still shows a body.
            for (mediaType, _) in examples where !types.contains(mediaType) { types.append(mediaType) }
            for mediaType in types {
                var entry = PositionedObject(at: content.offset)
                if let schema { entry["schema"] = schema }
                if let example = examples.first(where: { $0.key == mediaType })?.value { entry["example"] = example }
                content[mediaType] = entry.positioned
            }
            result["content"] = content.positioned
        }
        result.copyExtensions(from: response)
        return result.positioned
    }

    // MARK: Security

    private mutating func securityScheme(_ name: String, _ scheme: PositionedValue) -> PositionedValue {
        var result = PositionedObject(at: scheme.offset)
        let type = scheme["type"]
        switch type?.string {
        case "basic":
            result.set("type", "http", at: type?.offset ?? scheme.offset)
            result.set("scheme", "basic", at: type?.offset ?? scheme.offset)
        case "apiKey":
            result.copy(["type", "name", "in"], from: scheme)
        case "oauth2":
            result.copy(["type"], from: scheme)
            let flow = scheme["flow"]
            let names = ["implicit": "implicit", "password": "password", "application": "clientCredentials", "accessCode": "authorizationCode"]
            if let flow, let flowName = flow.string.flatMap({ names[$0] }) {
                var written = PositionedObject(at: flow.offset)
                written.copy(["authorizationUrl", "tokenUrl"], from: scheme)
                written["scopes"] = scheme["scopes"] ?? PositionedValue([:], at: flow.offset)
                var flows = PositionedObject(at: flow.offset)
                flows[flowName] = written.positioned
                result["flows"] = flows.positioned
            } else {
                problem("security scheme '\(name)': 'flow' is \(flow?.string.map { "'\($0)'" } ?? "missing"); Swagger 2.0 has implicit, password, application and accessCode", at: flow ?? scheme)
            }
        default:
            problem("security scheme '\(name)': 'type' is \(type?.string.map { "'\($0)'" } ?? "missing"); Swagger 2.0 has basic, apiKey and oauth2", at: type ?? scheme)
        }
        result.copy(["description"], from: scheme)
        result.copyExtensions(from: scheme)
        return result.positioned
    }

    // MARK: Schemas

    /// A 2.0 schema in its 3.0 form: `$ref`s to the document's parts rewritten, a string
    /// `discriminator` as an object, `x-nullable` as `nullable`, `type: file` a binary string.
    /// Example values are sample data: left as they are.
    private mutating func schema(_ schema: PositionedValue) -> PositionedValue {
        guard case .object = schema.value else {
            guard case .array = schema.value else { return schema }
            return .array(schema.elements.map { self.schema($0) }, at: schema.offset)
        }
        var result = PositionedObject(at: schema.offset)
        for (key, value) in schema.members {
            switch key {
            case "$ref" where value.string != nil:
                result.set("$ref", .string(Self.rewritten(value.string ?? "")), at: value.offset)
            case "discriminator" where value.string != nil:
                result.set("discriminator", ["propertyName": value.value], at: value.offset)
            case "x-nullable" where value.value.boolValue != nil:
                result["nullable"] = value
            case "type" where value.string == "file":
                result.set("type", "string", at: value.offset)
                result.set("format", "binary", at: value.offset)
            case "format" where schema["type"]?.string == "file":
                continue
            case "example", "default", "enum", "xml", "externalDocs":
                result[key] = value
            case _ where key.hasPrefix("x-"):
                result[key] = value
            default:
                result[key] = self.schema(value)
            }
        }
        return result.positioned
    }

    /// A local reference to a 2.0 part as the reference to its 3.0 component.
    static func rewritten(_ reference: String) -> String {
        for (old, new) in [
            ("#/definitions/", "#/components/schemas/"), ("#/parameters/", "#/components/parameters/"),
            ("#/responses/", "#/components/responses/"),
        ] where reference.hasPrefix(old) {
            return new + reference.dropFirst(old.count)
        }
        return reference
    }

    /// The path in the 2.0 document of a part of its 3.0 form that has one of its own: the
    /// components under their 2.0 names (`securitySchemes` → `securityDefinitions`); a part
    /// the translation made (a request body, content) is named as far as the 2.0 text goes.
    static func swaggerPath(of path: [String]) -> [String] {
        guard path.count >= 2, path[0] == "components" else { return path.prefix { $0 != "requestBody" && $0 != "content" }.map { $0 } }
        let names = ["schemas": "definitions", "parameters": "parameters", "responses": "responses", "securitySchemes": "securityDefinitions"]
        guard let name = names[path[1]] else { return path }
        return [name] + path.dropFirst(2).prefix { $0 != "content" }
    }

    /// A JSON pointer token as the name it stands for.
    private static func unescaped(_ token: String) -> String {
        (token.removingPercentEncoding ?? token).replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}
