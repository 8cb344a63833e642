// Answers one request from the compiled routes: route, validate, select a response, render it.
import Foundation
import KagamiContract
import KagamiContractCheck
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema
import KagamiScenarios
import KagamiURITemplate

struct MockResponder: Sendable {
    let routes: OperationRoutes
    let validates: Bool

    /// The answer, and whether the request's path is one the description has (a path it
    /// lacks is what `--fallback` takes).
    func respond(to request: MockRequest) -> (response: MockResponse, routed: Bool) {
        let target = URITemplate.Target(request.target)
        switch routes.lookup(method: request.method.uppercased(), target: target) {
        case .notFound(let closest):
            return (.problem(
                status: 404, type: "urn:kagami:mock:no-route", title: "Not Found",
                detail: "No action of the description matches \(request.method) \(target.path).",
                extra: ["closestRoutes": .array(closest.map(JSONValue.string))]), false)
        case .methodNotAllowed(let allowed):
            var response = MockResponse.problem(
                status: 405, type: "urn:kagami:mock:method-not-allowed", title: "Method Not Allowed",
                detail: "\(target.path) answers \(allowed.joined(separator: ", ")), not \(request.method).",
                extra: ["allowed": .array(allowed.map(JSONValue.string))])
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
            return (response, true)
        case .matched(let route, let match):
            return (respond(to: request, route: route, match: match, target: target), true)
        }
    }

    /// The response the description documents for `status` on the request's operation (exact,
    /// a status class, or `default`, answered with `status`): a scenario's error state answers
    /// it. Nil when the operation isn't described or documents nothing for it.
    func documented(status: Int, for request: MockRequest) -> MockResponse? {
        guard case .matched(let route, _) = routes.lookup(method: request.method.uppercased(), target: URITemplate.Target(request.target)),
            let response = ResponseSelection.documented(status: status, in: route.action.examples, request: request)
        else { return nil }
        return render(response, route: route)
    }

    /// The empty state's answer to the request, made from `response` (a success) as its
    /// operation's description shapes it: the description's `204` when the operation documents
    /// one, else the JSON body emptied as the documented response's schema says
    /// (`SchemaEmptying`). Nil when the operation isn't described or documents no schema for
    /// the response.
    func emptied(_ response: FlowResponse, for request: MockRequest) -> FlowResponse? {
        guard (200..<300).contains(response.status),
              case .matched(let route, _) = routes.lookup(method: request.method.uppercased(), target: URITemplate.Target(request.target))
        else { return nil }
        let examples = route.action.examples
        if response.status != 204, let noContent = examples.lazy.flatMap(\.responses).first(where: { $0.status == 204 && !$0.isStatusClass }) {
            var answer = render(noContent, route: route).flowResponse
            answer.body = FlowBody(data: Data())
            answer.headers.remove("Content-Type")
            answer.headers.remove("Content-Length")
            return answer
        }
        guard let documented = ResponseSelection.documented(status: response.status, in: examples, request: request),
              let schema = documented.payload.schema else { return nil }
        let emptying = SchemaEmptying(root: schema)
        return ScenarioAnswers.emptied(response, emptying: emptying.emptied)
    }

    /// Whether the request carries the credential: a mock has none to compare a value with, so
    /// any value in its place does (in `Authorization`, with the scheme asked for).
    static func carries(_ credential: Credential, _ request: FlowRequest, target: URITemplate.Target) -> Bool {
        switch credential.place {
        case .header(let name):
            return !(request.headers[name] ?? "").isEmpty
        case .query(let name):
            return target.queryParameters.contains { $0.name == name && !($0.value ?? "").isEmpty }
        case .cookie(let name):
            return request.headers.cookies.contains { $0.name == name && !$0.value.isEmpty }
        case .authorization(let scheme):
            let parts = (request.headers["Authorization"] ?? "").split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let scheme else { return !parts.isEmpty }
            return parts.count == 2 && parts[0].caseInsensitiveCompare(scheme) == .orderedSame
                && !parts[1].trimmingCharacters(in: .whitespaces).isEmpty
        }
    }

    private func respond(to request: MockRequest, route: OperationRoute, match: URITemplate.Match, target: URITemplate.Target) -> MockResponse {
        let action = route.action
        let body = request.body.isEmpty ? nil : (try? JSONValue(parsing: request.body))
        // Credentials before the rest, as a server reads them first.
        if validates, let security = action.security {
            let flowRequest = request.flowRequest
            if !security.contains(where: { $0.allSatisfy { Self.carries($0, flowRequest, target: target) } }) {
                if let own = ResponseSelection.documented(status: 401, in: action.examples, request: request) {
                    return render(own, route: route)
                }
                let wanted = security.map { $0.map(\.placeDescription).joined(separator: " and ") }.joined(separator: ", or ")
                return .problem(
                    status: 401, type: "urn:kagami:mock:no-credentials", title: "Unauthorized",
                    detail: "\(action.method) \(action.uriTemplate) asks for credentials: \(wanted).")
            }
        }
        if validates {
            let violations = RequestCheck.violations(of: request.flowRequest, route: route, match: match, target: target, body: body)
            if !violations.isEmpty {
                // Malformed JSON is a bad request, a media type the operation doesn't take is
                // unsupported, and a body or parameter that doesn't match is unprocessable.
                let status: Int
                let title: String
                if violations.contains(where: { $0.kind == .notJSON }) {
                    (status, title) = (400, "Bad Request")
                } else if violations.contains(where: { $0.kind == .contentType }) {
                    (status, title) = (415, "Unsupported Media Type")
                } else {
                    (status, title) = (422, "Unprocessable Content")
                }
                // The description's own answer for that status (or its class, or `default`) first,
                // then the other client error it documents for invalid requests.
                if let own = ResponseSelection.documented(status: status, in: action.examples, request: request)
                    ?? action.examples.lazy.flatMap(\.responses).first(where: { $0.status == 422 || $0.status == 400 })
                {
                    return render(own, route: route)
                }
                let detail = violations.count == 1 ? "1 violation" : "\(violations.count) violations"
                return .problem(
                    status: status, type: "urn:kagami:mock:invalid-request", title: title,
                    detail: "The request does not match \(action.method) \(action.uriTemplate): \(detail).",
                    extra: ["violations": .array(violations.map { .object(["location": .string($0.place), "message": .string($0.message)]) })])
            }
        }
        let preference = ResponsePreference(request: request, target: target)
        guard let response = ResponseSelection.select(
            action: action, route: route, request: request, body: body, preference: preference)
        else {
            if let status = preference.status {
                return .problem(
                    status: 404, type: "urn:kagami:mock:no-such-response", title: "Not Found",
                    detail: "\(action.method) \(action.uriTemplate) documents no \(status) response.")
            }
            if let name = preference.example {
                return .problem(
                    status: 404, type: "urn:kagami:mock:no-such-response", title: "Not Found",
                    detail: "\(action.method) \(action.uriTemplate) has no example named \"\(name)\".")
            }
            // An action without responses still answers: an empty 204 says "nothing documented".
            return MockResponse(status: 204)
        }
        return render(response, route: route)
    }

    func render(_ response: Response, route: OperationRoute) -> MockResponse {
        var headers = response.payload.headers
            .filter { $0.name.caseInsensitiveCompare("Content-Length") != .orderedSame }
            .map { (name: $0.name, value: $0.value) }
        var text = response.payload.body(for: .response)
        if text == nil, let schema = response.payload.schema {
            text = JSONSchemaExample.example(for: schema, direction: .response).serialized(.prettyPrinted)
            if !headers.contains(where: { $0.name.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
                headers.append(("Content-Type", "application/json"))
            }
        }
        var bytes = Array((text ?? "").utf8)
        // Blueprint bodies are indented text blocks; a trailing newline is part of the block.
        if let last = bytes.last, last != UInt8(ascii: "\n"), !bytes.isEmpty { bytes.append(UInt8(ascii: "\n")) }
        return MockResponse(status: response.status == 0 ? 200 : response.status, headers: headers, body: bytes)
    }
}

/// What the client asked for through `Prefer` or `__code`/`__example`.
struct ResponsePreference {
    var status: Int?
    var example: String?

    init(request: MockRequest, target: URITemplate.Target) {
        for header in request.headers where header.name.caseInsensitiveCompare("Prefer") == .orderedSame {
            for token in header.value.split(whereSeparator: { $0 == "," || $0 == ";" }) {
                let pair = token.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                switch pair[0].lowercased() {
                case "status", "code": status = Int(value) ?? status
                case "example": example = value
                default: break
                }
            }
        }
        for parameter in target.queryParameters {
            switch parameter.name {
            case "__code": status = parameter.value.flatMap { Int($0) } ?? status
            case "__example": example = parameter.value ?? example
            default: break
            }
        }
    }
}
