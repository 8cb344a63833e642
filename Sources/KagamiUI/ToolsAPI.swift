// Tools on a recorded exchange: Copy cURL Request and Repeat / Repeat Advanced.
import Foundation
import Hummingbird
import KagamiContentCoding
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
        router.post("/api/flows/:id/response/save") { request, context in
            let id = context.parameters.get("id")
            return try await self.saveResponseBody(id: id, text: try await BreakpointAPI.text(of: request))
        }
        router.post("/api/flows/:id/repeat") { request, context in
            let id = context.parameters.get("id")
            let text = try await BreakpointAPI.text(of: request)
            return try await self.repeatFlow(id: id, text: text)
        }
    }

    /// Map Local's "save this response as the local file": `{"path": "/abs/file", "overwrite": false}`
    /// writes the response body (gzip/deflate undone, as a local file is served plain) → `{path, size}`.
    /// An existing file is kept unless `overwrite` is true (409 says so).
    func saveResponseBody(id: String?, text: String) async throws -> Response {
        guard let flow = try await flows.flow(id) else { return flows.missing(id) }
        guard let response = flow.response else { return apiError(.notFound, "exchange \(flow.id) has no response") }
        let options: JSONValue
        do { options = try JSONValue(parsing: text) } catch { return apiError(.badRequest, "not JSON: \(error)") }
        guard let path = options["path"]?.stringValue, path.hasPrefix("/") else {
            return jsonResponse(["error": "path: an absolute file path is needed", "field": "path"], status: .badRequest)
        }
        if response.body.isTruncated || response.body.data.count < response.body.size {
            return apiError(.conflict, "only \(response.body.data.count) of the response's \(response.body.size) body bytes were kept: the file would not be the response")
        }
        if FileManager.default.fileExists(atPath: path), options["overwrite"]?.boolValue != true {
            return jsonResponse(["error": .string("path: \(path) exists (send overwrite: true to replace it)"), "field": "path"], status: .conflict)
        }
        var data = response.body.data
        if let encoding = response.headers["Content-Encoding"], ContentCoding.isEncoded(encoding) {
            do { data = try ContentCoding.decode(data, contentEncoding: encoding) } catch {
                return apiError(.unprocessableContent, "the body is \(encoding) encoded and could not be decoded: \(error)")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            return jsonResponse(["error": .string("path: could not write \(path): \(error.localizedDescription)"), "field": "path"], status: .unprocessableContent)
        }
        return jsonResponse(["path": .string(path), "size": .integer(data.count)])
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
