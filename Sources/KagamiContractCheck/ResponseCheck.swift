// Checks a response against its operation: a documented status, its media type, its body
// schema, the headers it declares (OpenAPI: present when required, values by their schemas),
// and (for API Blueprint) the headers the description shows.
import Foundation
import KagamiContract
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema

public enum ResponseCheck {
    /// What checking one response found.
    struct Outcome {
        var violations: [ContractViolation] = []
        /// The documented responses the response was matched to (same status, and media type
        /// when one matched); empty when its status is undocumented.
        var documented: [(response: Response, schema: JSONSchema?)] = []
        /// The body as JSON when it was read.
        var body: JSONValue?
    }

    /// Headers a proxy, gateway or the server's stack adds, drops or rewrites on the way:
    /// their absence never says the server disagrees with the description.
    static let transportHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "via", "date", "server", "age", "content-length", "content-type",
        "content-encoding", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "forwarded", "alt-svc",
    ]

    /// The documented responses for `status`: exact codes first, then a class (`2XX`), then `default`.
    static func documented(status: Int, in route: OperationRoute) -> [(response: Response, schema: JSONSchema?)] {
        let all = route.responses
        let exact = all.filter { !$0.response.isStatusClass && $0.response.status == status }
        if !exact.isEmpty { return exact }
        let inClass = all.filter { $0.response.isStatusClass && $0.response.documents(status: status) }
        if !inClass.isEmpty { return inClass }
        return all.filter { $0.response.status == 0 }
    }

    static func check(_ response: FlowResponse, method: String, route: OperationRoute, format: ContractFormat) -> Outcome {
        let operation = route.operation
        var outcome = Outcome()
        // 304 answers a conditional request from the client's own copy: part of HTTP, not of
        // the API, so it needs no documenting when the operation documents a success.
        if response.status == 304, route.responses.contains(where: { !$0.response.isStatusClass && $0.response.status == 304 }) == false,
           route.responses.contains(where: { (200..<300).contains($0.response.status) }) {
            return outcome
        }
        let candidates = documented(status: response.status, in: route)
        guard !candidates.isEmpty else {
            // An operation with no responses at all documents nothing to hold the server to.
            guard !route.responses.isEmpty else { return outcome }
            let statuses = Set(route.responses.map { $0.response.statusText }).sorted().joined(separator: ", ")
            outcome.violations.append(ContractViolation(
                kind: .undocumentedStatus, severity: .warning, operation: operation, side: .response, location: .status,
                expected: Shortened.text(statuses), actual: String(response.status),
                message: "\(response.status) is not a documented response of \(operation.method) \(operation.template) (documented: \(statuses))"))
            return outcome
        }
        outcome.documented = candidates
        // No body to check: HEAD, 1xx, 204, 304 (its body is the one the client already has).
        let hasNoBody = method == "HEAD" || response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        if format == .apiBlueprint, response.status != 304, let first = candidates.first {
            outcome.violations += missingHeaders(response, documented: first.response, operation: operation)
        }
        // Every media type and example of one status declares the same headers.
        if let first = candidates.first {
            outcome.violations += declaredHeaderViolations(response, documented: first.response, route: route)
        }
        if hasNoBody { return outcome }

        let typed = candidates.filter { $0.response.payload.mediaType != nil }
        var matching = candidates
        if !typed.isEmpty {
            let sent = response.headers["Content-Type"].map(MediaType.essence)
            let sameType = typed.filter { candidate in sent.map { MediaType.matches($0, documented: candidate.response.payload.mediaType ?? "") } ?? false }
            if sameType.isEmpty {
                let documentsBody = typed.contains { $0.response.payload.schema != nil || !($0.response.payload.body ?? "").isEmpty }
                // An empty body with no type against a documented body is one "missing body".
                if sent == nil && response.body.size == 0 {
                    if documentsBody {
                        outcome.violations.append(ContractViolation(
                            kind: .missing, operation: operation, side: .response, location: .body, keyword: "required",
                            expected: "a body", actual: "none", message: "the documented response has a body; this one has none"))
                    }
                    return outcome
                }
                let expected = Set(typed.compactMap(\.response.payload.mediaType).map(MediaType.essence)).sorted().joined(separator: " or ")
                outcome.violations.append(ContractViolation(
                    kind: .contentType, operation: operation, side: .response, location: .header, name: "Content-Type",
                    expected: Shortened.text(expected), actual: Shortened.text(sent ?? "none"),
                    message: "expected \(expected) for \(response.status), got \(sent ?? "no Content-Type")"))
                return outcome
            }
            matching = sameType
        }
        outcome.documented = matching
        let schemas = matching.compactMap { candidate in candidate.schema.map { (schema: $0, payload: candidate.response.payload) } }
        guard !schemas.isEmpty else { return outcome }
        if let sent = response.headers["Content-Type"], !MediaType.isJSON(sent) {
            // A JSON Schema describes JSON; another type was already compared by name.
            return outcome
        }
        if response.body.isTruncated {
            outcome.violations.append(.notChecked(operation: operation, side: .response, size: response.body.size))
            return outcome
        }
        switch MessageBody.read(response.body, headers: response.headers) {
        case .undecodable(let reason):
            outcome.violations.append(.notChecked(operation: operation, side: .response, reason: reason))
        case .notJSON(let data):
            outcome.violations.append(.notJSON(data, contentEncoding: nil, operation: operation, side: .response))
        case .json(let body):
            outcome.body = body
            outcome.violations += SchemaFinding.bestOf(schemas, body: body, operation: operation, side: .response)
        }
        return outcome
    }

    /// The headers the documented response declares (OpenAPI `headers`): a required one
    /// absent, a deprecated one sent (a warning: clients should stop relying on it), and a
    /// value its schema refuses, read as the schema describes it
    /// (`ResponseHeader.value(of:)`). Several lines of a field whose schema is an array are one
    /// list (RFC 9110 section 5.3); of another field, each line is checked.
    static func declaredHeaderViolations(_ response: FlowResponse, documented: Response, route: OperationRoute) -> [ContractViolation] {
        let operation = route.operation
        var violations: [ContractViolation] = []
        for header in documented.declaredHeaders {
            let lines = response.headers.values(for: header.name)
            if lines.isEmpty {
                if header.required {
                    violations.append(ContractViolation(
                        kind: .missing, operation: operation, side: .response, location: .header, name: header.name,
                        schemaPointer: header.requiredPointer,
                        keyword: "required", expected: "present", actual: "absent",
                        message: "the required header \(header.name) is missing"))
                }
                continue
            }
            if header.deprecated {
                violations.append(ContractViolation(
                    kind: .deprecated, severity: .warning, operation: operation, side: .response, location: .header, name: header.name,
                    schemaPointer: header.deprecatedPointer, keyword: "deprecated", expected: "absent", actual: Shortened.text(lines.joined(separator: ", ")),
                    message: "the header \(header.name) is deprecated in the description"))
            }
            guard let schema = route.headerSchema(header) else { continue }
            let texts = header.mediaType == nil && SimpleStyle.types(of: header.schema).contains("array") ? [lines.joined(separator: ",")] : lines
            for text in texts {
                guard let instance = header.value(of: text) else {
                    violations.append(ContractViolation(
                        kind: .notJSON, operation: operation, side: .response, location: .header, name: header.name,
                        expected: "JSON (\(header.mediaType ?? ""))", actual: Shortened.text(text),
                        message: "the value of \(header.name) is not JSON, as its \(header.mediaType ?? "") content says"))
                    continue
                }
                for error in schema.validate(instance).errors {
                    var violation = SchemaFinding.violation(
                        error, schema: header.schema, schemaPointer: header.schemaPointer, instance: instance, kind: .schema,
                        operation: operation, side: .response, location: .header)
                    violation.name = header.name
                    if violation.instancePointer == "" { violation.instancePointer = nil }
                    violations.append(violation)
                }
            }
        }
        return violations
    }

    /// Headers an API Blueprint response shows that this response lacks (names compared
    /// without case; values are examples, so they are not compared).
    private static func missingHeaders(_ response: FlowResponse, documented: Response, operation: ContractViolation.Operation) -> [ContractViolation] {
        var violations: [ContractViolation] = []
        for header in documented.payload.headers where !transportHeaders.contains(header.name.lowercased()) {
            guard response.headers[header.name] == nil else { continue }
            violations.append(ContractViolation(
                kind: .missing, severity: .warning, operation: operation, side: .response, location: .header, name: header.name,
                keyword: "required", expected: Shortened.text(header.value), actual: "absent",
                message: "the documented header \(header.name) is missing"))
        }
        return violations
    }
}

extension ResponseHeader {
    /// Where the header's `required` is, beside its `schema` (nil for a header declared with `content`).
    var requiredPointer: String? { pointer(beside: "required") }

    /// Where the header's `deprecated` is, beside its `schema` (nil for a header declared with `content`).
    var deprecatedPointer: String? { pointer(beside: "deprecated") }

    private func pointer(beside keyword: String) -> String? {
        guard mediaType == nil, let schemaPointer, schemaPointer.hasSuffix("/schema") else { return nil }
        return String(schemaPointer.dropLast("schema".count)) + keyword
    }
}

extension Response {
    /// `200`, `2XX`, or `default`, as the description writes it.
    public var statusText: String {
        if status == 0 { return "default" }
        return isStatusClass ? "\(status / 100)XX" : String(status)
    }
}
