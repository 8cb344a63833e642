// Tools on a recorded exchange: Copy cURL Request and Repeat / Repeat Advanced.
import Foundation
import Hummingbird
import KagamiCurl
import KagamiFlow
import KagamiJSON
import KagamiRepeat

struct ToolsAPI: Sendable {
    let server: UIServer
    let flows: FlowAPI

    func register(on router: Router<some RequestContext>) {
        router.get("/api/flows/:id/curl") { _, context in
            let id = context.parameters.get("id")
            guard let flow = try await self.flows.flow(id) else { return self.flows.missing(id) }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: CurlCommand(flow.request).shellCommand + "\n")))
        }
        router.post("/api/flows/:id/repeat") { request, context in
            let id = context.parameters.get("id")
            let text = try await BreakpointAPI.text(of: request)
            return try await self.repeatFlow(id: id, text: text)
        }
    }

    /// `{"count": N, "concurrency": C, "delayMs": D}` (each optional: 1, 1, 0), answered once
    /// every repeat has ended, with the summary.
    func repeatFlow(id: String?, text: String) async throws -> Response {
        guard let proxy = server.liveProxy else {
            return noProxyError()
        }
        guard let flow = try await flows.flow(id) else { return flows.missing(id) }
        let plan: RequestRepeater.Plan
        do {
            let options = text.allSatisfy(\.isWhitespace) ? JSONValue.object([:]) : try JSONValue(parsing: text)
            guard options.objectValue != nil else { return apiError(.badRequest, "expected a JSON object, found \(options.typeName)") }
            func number(_ name: String, _ fallback: Int) throws(HeldEditError) -> Int {
                guard let value = options[name] else { return fallback }
                guard let number = value.intValue else { throw HeldEditError(field: name, message: "expected a whole number, found \(value.typeName)") }
                return number
            }
            plan = try RequestRepeater.Plan(
                count: try number("count", 1), concurrency: try number("concurrency", 1), delayMilliseconds: try number("delayMs", 0))
        } catch let error as JSONParseError {
            return apiError(.badRequest, "not JSON: \(error)")
        } catch {
            return apiError(.badRequest, "\(error)")
        }
        if flow.request.body.isTruncated || flow.request.body.data.count < flow.request.body.size {
            return apiError(.conflict, "exchange \(flow.id) kept only \(flow.request.body.data.count) of its \(flow.request.body.size) request body bytes: it can't be sent again as it was")
        }
        let repeater = RequestRepeater(route: proxy.repeatRoute)
        let outcome: Result<RepeatSummary, RepeatError>
        do {
            outcome = .success(try await repeater.run(flow.request, of: flow.id, plan: plan))
        } catch {
            outcome = .failure(error)
        }
        guard case .success(let summary) = outcome else {
            if case .failure(let error) = outcome { return apiError(.unprocessableContent, error.description) }
            return apiError(.internalServerError, "repeat ended without a summary")
        }
        try await server.store.flush()
        return jsonResponse(summary.json)
    }
}

extension RepeatSummary {
    var json: JSONValue {
        var statuses: JSONObject = [:]
        for (status, count) in countsByStatus { statuses[String(status)] = .integer(count) }
        var object: JSONObject = [
            "repeatOf": .string(repeatOf.uuidString),
            "sent": .integer(sends.count),
            "statuses": .object(statuses),
            "failed": .integer(failures),
        ]
        if let durations {
            object["durationMs"] = ["min": .number(durations.min), "median": .number(durations.median), "max": .number(durations.max)]
        } else {
            object["durationMs"] = .null
        }
        object["firstError"] = firstError.map(JSONValue.string) ?? .null
        object["summary"] = .string(text)
        return .object(object)
    }
}
