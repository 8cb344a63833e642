// Checks a request against its operation: parameters (path, query, header, cookie), content
// type and body schema (JSON bodies, and form bodies field by field). The mock server refuses what this finds; the contract check reports it.
import Foundation
import KagamiContract
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema
import KagamiURITemplate

public enum RequestCheck {
    /// `body` is the request body parsed as JSON (decoded first when it was compressed), or nil.
    public static func violations(
        of request: FlowRequest, route: OperationRoute, match: URITemplate.Match, target: URITemplate.Target, body: JSONValue?
    ) -> [ContractViolation] {
        let operation = route.operation
        var violations: [ContractViolation] = []
        for parameter in route.action.parameters {
            let location: ContractViolation.Location
            // Every value the parameter arrived with: a query parameter may be repeated
            // (`?id=1&id=x`), and each value is checked; an array takes them all at once.
            let values: [String]
            switch parameter.location {
            case .path:
                location = .path
                values = match.variables[URITemplate.variableName(parameter.name)].map { [text(of: $0)] } ?? []
            case .query:
                location = .query
                let sent = target.queryParameters.filter { $0.name == parameter.name }.map { $0.value ?? "" }
                if sent.isEmpty {
                    values = match.variables[URITemplate.variableName(parameter.name)].map { [text(of: $0)] } ?? []
                } else if isArray(parameter.schema) || (parameter.type?.hasPrefix("array") ?? false) {
                    // Items however the style delimits them, as the one list `SimpleStyle` reads.
                    let items = parameter.arrayDelimiter.map { delimiter in sent.flatMap { $0.components(separatedBy: delimiter) } } ?? sent
                    values = [items.joined(separator: ",")]
                } else {
                    values = sent
                }
            case .header:
                location = .header
                values = request.headers[parameter.name].map { [$0] } ?? []
            case .cookie:
                location = .cookie
                values = request.headers.cookies.filter { $0.name == parameter.name }.map(\.value)
            }
            // A deepObject parameter arrives as `name[key]=value` pairs: present, and not one
            // value the schema could be checked against.
            if values.isEmpty, parameter.location == .query,
               target.queryParameters.contains(where: { $0.name.hasPrefix(parameter.name + "[") }) {
                continue
            }
            if values.isEmpty {
                if parameter.required && parameter.location != .path {
                    violations.append(ContractViolation(
                        kind: .missing, operation: operation, side: .request, location: location, name: parameter.name,
                        keyword: "required", expected: "present", actual: "absent",
                        message: "required \(parameter.location.rawValue) parameter is missing"))
                }
                continue
            }
            for value in values {
                if let schema = route.parameterSchema(parameter.name) {
                    let instance = SimpleStyle.value(of: value, schema: parameter.schema)
                    for error in schema.validate(instance).errors {
                        var violation = SchemaFinding.violation(
                            error, schema: parameter.schema, schemaPointer: nil, instance: instance, kind: .parameter,
                            operation: operation, side: .request, location: location)
                        violation.name = parameter.name
                        violation.instancePointer = nil
                        violations.append(violation)
                    }
                } else if let mismatch = typeMismatch(value, parameter: parameter) {
                    violations.append(ContractViolation(
                        kind: .parameter, operation: operation, side: .request, location: location, name: parameter.name,
                        keyword: mismatch.keyword, expected: mismatch.expected, actual: Shortened.text(value),
                        message: mismatch.message))
                }
            }
        }
        violations += bodyViolations(of: request, route: route, body: body)
        return violations
    }

    private static func bodyViolations(of request: FlowRequest, route: OperationRoute, body: JSONValue?) -> [ContractViolation] {
        let operation = route.operation
        let requests = route.action.examples.flatMap(\.requests)
        let declared = requests.filter { $0.payload.body != nil || $0.payload.schema != nil }
        guard !declared.isEmpty else { return [] }
        guard request.body.size > 0 else {
            // A body the description marks optional may be left out; without that notion, only
            // a method that carries a body is expected to send the one the description shows.
            return (route.action.requestBodyRequired ?? ["POST", "PUT", "PATCH"].contains(route.method))
                ? [ContractViolation(
                    kind: .missing, operation: operation, side: .request, location: .body, keyword: "required",
                    expected: "a body", actual: "none", message: "a request body is required")]
                : []
        }
        var violations: [ContractViolation] = []
        let mediaTypes = declared.compactMap(\.payload.mediaType)
        let sent = request.headers["Content-Type"].map(MediaType.essence)
        if !mediaTypes.isEmpty, !mediaTypes.contains(where: { documented in sent.map { MediaType.matches($0, documented: documented) } ?? false }) {
            let expected = Set(mediaTypes.map(MediaType.essence)).sorted().joined(separator: " or ")
            violations.append(ContractViolation(
                kind: .contentType, operation: operation, side: .request, location: .header, name: "Content-Type",
                expected: Shortened.text(expected), actual: Shortened.text(sent ?? "none"), message: "expected \(expected), got \(sent ?? "none")"))
        }
        var schemas: [(schema: JSONSchema, payload: MessagePayload)] = []
        for (exampleIndex, example) in route.action.examples.enumerated() {
            for (index, documented) in example.requests.enumerated() {
                if let schema = route.requestSchema(example: exampleIndex, index: index) { schemas.append((schema, documented.payload)) }
            }
        }
        guard !schemas.isEmpty else { return violations }
        if let sent, sent == "application/x-www-form-urlencoded" || sent == "multipart/form-data" {
            if request.body.isTruncated {
                return violations + [ContractViolation.notChecked(operation: operation, side: .request, size: request.body.size)]
            }
            // The schemas written for this media type; a form is read field by field along them.
            let forms = schemas.filter { $0.payload.mediaType.map(MediaType.essence) == sent }
            guard let first = forms.first else { return violations }
            guard let form = formObject(request, mediaType: sent, schema: first.payload.schema) else {
                return violations + [ContractViolation(
                    kind: .notJSON, operation: operation, side: .request, location: .body,
                    expected: "a multipart/form-data body with the Content-Type's boundary", actual: "no part",
                    message: "the body is not multipart/form-data with the boundary its Content-Type names")]
            }
            return violations + SchemaFinding.bestOf(forms, body: form, operation: operation, side: .request)
        }
        // Other schemas describe JSON bodies; a body sent as another media type (text/plain in a
        // description that also shows a JSON request) is checked by its Content-Type alone.
        if let sent, !sent.contains("json") { return violations }
        if request.body.isTruncated {
            return violations + [ContractViolation.notChecked(operation: operation, side: .request, size: request.body.size)]
        }
        guard let body else {
            return violations + [ContractViolation.notJSON(request.body.data, contentEncoding: request.headers["Content-Encoding"], operation: operation, side: .request)]
        }
        return violations + SchemaFinding.bestOf(schemas, body: body, operation: operation, side: .request)
    }

    /// A form body as the object its schema describes (OpenAPI 3.1 section 4.8.14.3): each
    /// field's text read as its property's type says, a repeated field or an array property
    /// as an array, a part sent as JSON (or for an object property) parsed as JSON, and a file
    /// part as its text. Nil for a multipart body without the boundary its Content-Type names.
    static func formObject(_ request: FlowRequest, mediaType: String, schema: JSONValue?) -> JSONValue? {
        let fields: [FormField]
        if mediaType == "multipart/form-data" {
            guard let parts = FormFields.multipart(request.body.data, contentType: request.headers["Content-Type"] ?? "") else { return nil }
            fields = parts
        } else {
            fields = FormFields.urlEncoded(String(decoding: request.body.data, as: UTF8.self))
        }
        let properties = schema?["properties"]?.objectValue ?? [:]
        var object = JSONObject()
        for field in fields {
            let property = properties[field.name]
            let text = field.text ?? ""
            var value: JSONValue
            let wantsJSON = field.contentType.map(MediaType.isJSON) ?? false
            if wantsJSON || SimpleStyle.types(of: property).contains("object"), let parsed = try? JSONValue(parsing: text) {
                value = parsed
            } else if isArray(property) {
                value = SimpleStyle.value(of: text, schema: property?["items"])
            } else {
                value = SimpleStyle.value(of: text, schema: property)
            }
            if isArray(property) {
                if case .array(let items)? = object[field.name] {
                    value = .array(items + [value])
                } else if case .array = value, wantsJSON {
                    // A JSON array sent whole.
                } else {
                    value = .array([value])
                }
            } else if let earlier = object[field.name] {
                value = .array((earlier.arrayValue ?? [earlier]) + [value])
            }
            object[field.name] = value
        }
        return .object(object)
    }

    public static func text(of value: URITemplate.Value) -> String {
        switch value {
        case .string(let string): string
        case .list(let items): items.joined(separator: ",")
        case .associative(let pairs): pairs.map { "\($0.key),\($0.value)" }.joined(separator: ",")
        }
    }

    static func isArray(_ schema: JSONValue?) -> Bool {
        guard case .object(let object)? = schema else { return false }
        switch object["type"] {
        case .string(let type)?: return type == "array"
        case .array(let list)?: return list.contains(.string("array"))
        default: return false
        }
    }

    /// Blueprint parameter types: `number`, `boolean`, `enum[string]` with members.
    static func typeMismatch(_ value: String, parameter: Parameter) -> (keyword: String, expected: String, message: String)? {
        if !parameter.members.isEmpty, !parameter.members.contains(value) {
            let members = parameter.members.joined(separator: ", ")
            return ("enum", Shortened.text(members), "\"\(value)\" is not one of \(members)")
        }
        switch parameter.type?.lowercased() {
        case "number"?: return Double(value) == nil ? ("type", "number", "\"\(value)\" is not a number") : nil
        case "integer"?: return Int(value) == nil ? ("type", "integer", "\"\(value)\" is not an integer") : nil
        case "boolean"?: return value == "true" || value == "false" ? nil : ("type", "boolean", "\"\(value)\" is not a boolean")
        default: return nil
        }
    }
}
