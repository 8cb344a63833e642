import Foundation
import KagamiFlow
import KagamiJSON

/// A request as the mock sees it, independent of the server engine.
public struct MockRequest: Sendable {
    public var method: String
    /// Path and query as sent, e.g. `/notes/1?__code=404`.
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The request as the flow model holds it, for the shared request check and the
    /// scenario's operations (the host is the one the client named in `Host`).
    var flowRequest: FlowRequest { flowRequest(host: "") }

    /// As `flowRequest`, with `host` when the request names none.
    func flowRequest(host fallbackHost: String) -> FlowRequest {
        FlowRequest(
            method: method, scheme: "http", host: header("Host").map { Authority.split($0)?.host ?? $0 } ?? fallbackHost, port: 0, target: target,
            headers: HeaderFields(headers), body: FlowBody(data: Data(body)))
    }

    /// A request edited in the held list, as the mock answers it.
    init(_ request: FlowRequest) {
        self.init(method: request.method, target: request.target, headers: request.headers.fields.map { ($0.name, $0.value) }, body: Array(request.body.data))
    }
}

/// What the mock answers.
public struct MockResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// A response of the flow model (a scenario's answer); the mock frames the body itself.
    init(_ response: FlowResponse) {
        status = response.status
        headers = response.headers.fields
            .filter { $0.name.caseInsensitiveCompare("Content-Length") != .orderedSame }
            .map { ($0.name, $0.value) }
        body = Array(response.body.data)
    }

    var flowResponse: FlowResponse {
        FlowResponse(status: status, headers: HeaderFields(headers), body: FlowBody(data: Data(body)))
    }

    /// An RFC 9457 problem document.
    static func problem(status: Int, type: String, title: String, detail: String, extra: JSONObject = [:]) -> MockResponse {
        var object: JSONObject = [
            "type": .string(type), "title": .string(title), "detail": .string(detail), "status": .integer(status),
        ]
        for (key, value) in extra { object[key] = value }
        let text = JSONValue.object(object).serialized(.prettyPrinted) + "\n"
        return MockResponse(status: status, headers: [("Content-Type", "application/problem+json")], body: Array(text.utf8))
    }
}
