// What the proxy and the mock answer for an operation in the error or empty state.
import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON

public enum ScenarioAnswers {
    /// The error state's answer: its own body, or a problem+json body (RFC 9457) naming the
    /// scenario.
    public static func error(status: Int, body: String?, contentType: String?, scenario: String, request: FlowRequest) -> FlowResponse {
        let reason = HTTPStatusPhrase.phrase(for: status) ?? (status < 500 ? "Client Error" : "Server Error")
        let bytes: [UInt8]
        let type: String
        if let body {
            bytes = Array(body.utf8)
            type = contentType ?? (((try? JSONValue(parsing: bytes)) != nil) ? "application/json" : "text/plain; charset=utf-8")
        } else {
            let path = RecordedTraffic.originForm(request.target).split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let problem: JSONValue = [
                "type": "urn:kagami:scenario:error",
                "title": .string(reason),
                "status": .integer(status),
                "detail": .string("Scenario \(scenario) puts \(request.method.uppercased()) \(path) in its error state."),
            ]
            bytes = Array(problem.serialized(.prettyPrinted).utf8)
            type = contentType ?? "application/problem+json"
        }
        return FlowResponse(
            status: status, reason: reason, version: "HTTP/1.1",
            headers: HeaderFields([("Content-Type", type), ("Content-Length", String(bytes.count))]),
            body: FlowBody(data: Data(bytes)))
    }

    /// The empty state's answer made from the real one: a JSON body with every array emptied
    /// (objects keep their other members, so a page keeps its `total` and `next`); a body that is
    /// not JSON, or an answer that is not a success, as it is when it has no body and else an
    /// empty `204`. The body goes out decoded and uncompressed with its new length.
    public static func emptied(_ response: FlowResponse) -> FlowResponse {
        emptied(response, emptying: emptiedCollections)
    }

    /// The empty state's answer with the JSON body changed by `emptying` (a description's
    /// schema says what emptied means), else as `emptied(_:)` makes it.
    public static func emptied(_ response: FlowResponse, emptying: (JSONValue) -> JSONValue) -> FlowResponse {
        guard (200..<300).contains(response.status) else { return response }
        var emptied = response
        let encoding = response.headers["Content-Encoding"]
        let decoded: Data
        if ContentCoding.isEncoded(encoding) {
            guard let plain = try? ContentCoding.decode(response.body.data, contentEncoding: encoding) else { return noContent(response) }
            decoded = plain
        } else {
            decoded = response.body.data
        }
        guard !decoded.isEmpty else { return response }
        guard let value = try? JSONValue(parsing: Array(decoded)) else { return noContent(response) }
        let bytes = Array(emptying(value).serialized().utf8)
        emptied.headers.remove("Content-Encoding")
        emptied.headers.remove("Transfer-Encoding")
        emptied.headers.remove("ETag")
        emptied.headers.set("Content-Length", String(bytes.count))
        emptied.body = FlowBody(data: Data(bytes))
        return emptied
    }

    static func noContent(_ response: FlowResponse) -> FlowResponse {
        var empty = response
        empty.status = 204
        empty.reason = "No Content"
        for name in ["Content-Encoding", "Content-Length", "Transfer-Encoding", "Content-Type", "ETag"] { empty.headers.remove(name) }
        empty.body = FlowBody(data: Data())
        return empty
    }

    static func emptiedCollections(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array:
            return .array([])
        case .object(var members):
            for key in members.keys { members[key] = members[key].map(emptiedCollections) }
            return .object(members)
        default:
            return value
        }
    }
}
