// Checks a request against its action: parameters (path, query, header), content type and body schema.
import Foundation
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import KagamiURITemplate

enum RequestValidation {
    static func violations(
        of request: MockRequest, route: MockRoute, match: URITemplate.Match, target: URITemplate.Target, body: JSONValue?
    ) -> [RequestViolation] {
        var violations: [RequestViolation] = []
        for parameter in route.action.parameters {
            let location = "\(parameter.location.rawValue).\(parameter.name)"
            let value: String?
            switch parameter.location {
            case .path, .query:
                value = match.variables[parameter.name].map(text(of:))
                    ?? target.queryParameters.first { $0.name == parameter.name }.map { $0.value ?? "" }
            case .header:
                value = request.header(parameter.name)
            case .cookie:
                continue
            }
            guard let value else {
                if parameter.required && parameter.location != .path {
                    violations.append(RequestViolation(location: location, message: "required \(parameter.location.rawValue) parameter is missing"))
                }
                continue
            }
            if let schema = route.parameterSchemas[parameter.name] {
                let instance = coerce(value, for: parameter.schema)
                for error in schema.validate(instance).errors {
                    violations.append(RequestViolation(location: location, message: error.message))
                }
            } else if let message = typeMismatch(value, parameter: parameter) {
                violations.append(RequestViolation(location: location, message: message))
            }
        }
        violations += bodyViolations(of: request, route: route, body: body)
        return violations
    }

    private static func bodyViolations(of request: MockRequest, route: MockRoute, body: JSONValue?) -> [RequestViolation] {
        let requests = route.action.examples.flatMap(\.requests)
        let declared = requests.filter { $0.payload.body != nil || $0.payload.schema != nil }
        guard !declared.isEmpty else { return [] }
        guard !request.body.isEmpty else {
            // Only a method that carries a body is expected to send the one the description shows.
            return ["POST", "PUT", "PATCH"].contains(route.method)
                ? [RequestViolation(location: "body", message: "a request body is required")] : []
        }
        var violations: [RequestViolation] = []
        let mediaTypes = declared.compactMap(\.payload.mediaType)
        let sent = request.header("Content-Type").map(MediaType.essence)
        if !mediaTypes.isEmpty, !mediaTypes.contains(where: { MediaType.essence($0) == sent }) {
            violations.append(RequestViolation(
                location: "header.Content-Type",
                message: "expected \(Set(mediaTypes.map(MediaType.essence)).sorted().joined(separator: " or ")), got \(sent ?? "none")"))
        }
        let schemas = route.requestSchemas.joined().compactMap { $0 }
        guard !schemas.isEmpty else { return violations }
        // Schemas describe JSON bodies; a body sent as another media type (text/plain in a
        // description that also shows a JSON request) is checked by its Content-Type alone.
        if let sent, !sent.contains("json") { return violations }
        guard let body else {
            let reason: String
            do {
                _ = try JSONValue(parsing: request.body)
                reason = "the body is not JSON"
            } catch {
                reason = "the body is not valid JSON: \(error)"
            }
            return violations + [RequestViolation(location: "body", message: reason)]
        }
        var firstErrors: [JSONSchemaValidationError]?
        for schema in schemas {
            let result = schema.validate(body)
            if result.isValid { return violations }
            if firstErrors == nil { firstErrors = result.errors }
        }
        for error in firstErrors ?? [] {
            violations.append(RequestViolation(location: "body" + error.instanceLocation, message: error.message))
        }
        return violations
    }

    static func text(of value: URITemplate.Value) -> String {
        switch value {
        case .string(let string): string
        case .list(let items): items.joined(separator: ",")
        case .associative(let pairs): pairs.map { "\($0.key),\($0.value)" }.joined(separator: ",")
        }
    }

    /// Parameters arrive as text; the schema's `type` says what the text stands for.
    static func coerce(_ text: String, for schema: JSONValue?) -> JSONValue {
        var types: [String] = []
        if case .object(let object)? = schema {
            switch object["type"] {
            case .string(let type)?: types = [type]
            case .array(let list)?: types = list.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: break
            }
        }
        if types.contains("integer"), let integer = Int(text) { return .integer(integer) }
        if types.contains("number"), let number = Double(text) { return Int(text).map(JSONValue.integer) ?? .number(number) }
        if types.contains("boolean"), text == "true" || text == "false" { return .bool(text == "true") }
        if types.contains("array") { return .array(text.split(separator: ",").map { .string(String($0)) }) }
        return .string(text)
    }

    /// Blueprint parameter types: `number`, `boolean`, `enum[string]` with members.
    static func typeMismatch(_ value: String, parameter: Parameter) -> String? {
        if !parameter.members.isEmpty, !parameter.members.contains(value) {
            return "\"\(value)\" is not one of \(parameter.members.joined(separator: ", "))"
        }
        switch parameter.type?.lowercased() {
        case "number"?: return Double(value) == nil ? "\"\(value)\" is not a number" : nil
        case "integer"?: return Int(value) == nil ? "\"\(value)\" is not an integer" : nil
        case "boolean"?: return value == "true" || value == "false" ? nil : "\"\(value)\" is not a boolean"
        default: return nil
        }
    }
}

enum MediaType {
    /// `Application/JSON; charset=utf-8` → `application/json`.
    static func essence(_ value: String) -> String {
        (value.split(separator: ";").first.map(String.init) ?? value).trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func isJSON(_ value: String) -> Bool {
        let type = essence(value)
        return type.hasSuffix("/json") || type.hasSuffix("+json")
    }

    /// How much an `Accept` header wants `type`: its q value for the most specific matching range, 0 when refused.
    static func quality(of type: String, accept: String) -> Double {
        let type = essence(type)
        var best: (specificity: Int, q: Double) = (-1, 0)
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let rangeType = parts.first?.lowercased(), !rangeType.isEmpty else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 1
            }
            let specificity: Int
            if rangeType == type {
                specificity = 2
            } else if rangeType.hasSuffix("/*"), type.hasPrefix(rangeType.dropLast()) {
                specificity = 1
            } else if rangeType == "*/*" {
                specificity = 0
            } else {
                continue
            }
            if specificity > best.specificity { best = (specificity, q) }
        }
        return best.q
    }
}
