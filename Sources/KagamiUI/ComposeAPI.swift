// Compose: a request written in the page (from scratch or from an exchange), sent once through
// the proxy like a repeat, so rules and breakpoints act on it and it is recorded like any other.
import Foundation
import Hummingbird
import KagamiFlow
import KagamiJSON
import KagamiRepeat
import KagamiStore

struct ComposeAPI: Sendable {
    let store: any FlowStore
    /// Where the composed exchange is heard arriving.
    let hub: FlowHub
    /// The way into the proxy that the request takes; nil without a proxy.
    let repeatRoute: RequestRepeater.Route?

    func register(on router: Router<some RequestContext>) {
        router.post("/api/compose") { request, _ in
            try await self.compose(text: try await BreakpointAPI.text(of: request))
        }
    }

    /// `{"method", "url", "headers": [[name, value]…], "body": "text"` or `"bodyBase64"`, `"from": id}`
    /// → `{"flowId", "status", "error"}` once the response has arrived and the exchange is recorded.
    func compose(text: String) async throws -> Response {
        guard let repeatRoute else { throw APIError.noProxy }
        let request: FlowRequest
        let source: UUID?
        do {
            (request, source) = try Self.request(from: try JSONValue(parsing: text))
        } catch let error as HeldEditError {
            throw APIError(.badRequest, error.description, details: ["field": .string(error.field)])
        } catch {
            throw APIError(.badRequest, "not JSON: \(error)")
        }
        // Marked as a repeat of the exchange it was composed from, or of a fresh id that names
        // no exchange (the page shows those as Composed); the mark is how it is found below.
        let mark = source ?? UUID()
        let arrivals = hub.subscribe(bufferLimit: 4096)
        defer { arrivals.cancel() }
        let summary: RepeatSummary
        do {
            summary = try await RequestRepeater(route: repeatRoute).run(request, of: mark, plan: RequestRepeater.Plan())
        } catch {
            throw APIError(.unprocessableContent, error.description)
        }
        let recorded = await Self.firstFlow(markedWith: mark, in: arrivals, within: .seconds(15))
        try await store.flush()
        let send = summary.sends.first
        return jsonResponse([
            "flowId": recorded.map { .string($0.uuidString) } ?? .null,
            "status": send?.status.map(JSONValue.integer) ?? .null,
            "error": send?.error.map(JSONValue.string) ?? .null,
        ])
    }

    static func firstFlow(markedWith mark: UUID, in arrivals: FlowHub.Subscription, within limit: Duration) async -> UUID? {
        await withTaskGroup(of: UUID?.self) { group in
            group.addTask {
                for await delivery in arrivals {
                    if case .flow(let flow) = delivery, flow.repeatOf == mark { return flow.id }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                arrivals.cancel()
                return nil
            }
            let found = await group.next() ?? nil
            arrivals.cancel()
            group.cancelAll()
            return found
        }
    }

    static func request(from json: JSONValue) throws(HeldEditError) -> (FlowRequest, UUID?) {
        guard json.objectValue != nil else { throw HeldEditError(field: "", message: "expected a JSON object, found \(json.typeName)") }
        let method = (json["method"]?.stringValue ?? "GET").trimmingCharacters(in: .whitespaces).uppercased()
        guard !method.isEmpty, method != "CONNECT", method.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) else {
            throw HeldEditError(field: "method", message: "expected a method such as GET or POST, found \(method.isEmpty ? "nothing" : method)")
        }
        guard let text = json["url"]?.stringValue, !text.isEmpty else { throw HeldEditError(field: "url", message: "a URL is needed (http:// or https://)") }
        let url: AbsoluteURL
        do {
            url = try AbsoluteURL(parsing: text.trimmingCharacters(in: .whitespaces))
        } catch {
            throw HeldEditError(field: "url", message: "\(error)")
        }
        guard url.scheme == "http" || url.scheme == "https" else {
            throw HeldEditError(field: "url", message: "only http:// and https:// URLs can be sent, not \(url.scheme)://")
        }
        var headers = HeaderFields()
        for (index, pair) in (json["headers"]?.arrayValue ?? []).enumerated() {
            guard let parts = pair.arrayValue, parts.count == 2, let name = parts[0].stringValue, let value = parts[1].stringValue else {
                throw HeldEditError(field: "headers[\(index)]", message: "expected [name, value]")
            }
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
                throw HeldEditError(field: "headers[\(index)]", message: "\"\(name)\" is not a header name")
            }
            guard !value.contains("\r"), !value.contains("\n") else {
                throw HeldEditError(field: "headers[\(index)]", message: "a header value can't hold a line break")
            }
            headers.add(trimmed, value)
        }
        var body = Data()
        if let base64 = json["bodyBase64"]?.stringValue {
            guard let data = Data(base64Encoded: base64) else { throw HeldEditError(field: "bodyBase64", message: "not base64") }
            body = data
        } else if let text = json["body"]?.stringValue {
            body = Data(text.utf8)
        }
        var source: UUID?
        if let from = json["from"]?.stringValue {
            guard let id = UUID(uuidString: from) else { throw HeldEditError(field: "from", message: "not an exchange id: \(from)") }
            source = id
        }
        let request = FlowRequest(
            method: method, scheme: url.scheme, host: url.host, port: url.port, target: url.target,
            headers: headers, body: FlowBody(data: body))
        return (request, source)
    }
}
