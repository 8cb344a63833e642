// Tools on a recorded exchange: Copy cURL Request, Copy as grpcurl and Repeat / Repeat Advanced.
import Foundation
import Hummingbird
import KagamiContentCoding
import KagamiCurl
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiRepeat
import KagamiRules
import KagamiStore

struct ToolsAPI: Sendable {
    let store: any FlowStore
    /// The way into the proxy that repeats take; nil without a proxy.
    let repeatRoute: RequestRepeater.Route?
    /// Where a response may be saved as a local file; nil where no file of this host may be
    /// written (`kagami serve`).
    let mapLocalFolders: MapLocalFolders?
    /// Where a gRPC call's request is read as JSON for grpcurl.
    var grpcSchemas: GRPCSchemas?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/flows/:id/curl") { _, context in
            let flow = try await self.store.flow(named: context.parameters.get("id"))
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: CurlCommand(flow.request).shellCommand + "\n")))
        }
        router.get("/api/flows/:id/grpcurl") { _, context in
            let flow = try await self.store.flow(named: context.parameters.get("id"))
            let schema = await self.grpcSchemas?.schema(for: flow)
            // The given files when they define the method; else grpcurl asks the server's reflection.
            let sources = self.grpcSchemas.flatMap { $0.given.method(path: flow.request.path) != nil ? $0.sources : nil } ?? GRPCSchemas.Sources()
            let command: GRPCurlCommand
            do {
                command = try GRPCurlCommand(flow, schema: schema, sources: sources)
            } catch {
                throw APIError(.conflict, "\(error)")
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: command.shellCommand + "\n")))
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

    /// Map Local's "save this response as the local file": `{"path": "file.json", "overwrite": false}`
    /// writes the response body (gzip/deflate undone, as a local file is served plain) → `{path, size}`.
    /// The path is relative to the first of the Map Local folders, or absolute inside one of them:
    /// nothing else is ever written. An existing file is kept unless `overwrite` is true (409 says so).
    func saveResponseBody(id: String?, text: String) async throws -> Response {
        guard let mapLocalFolders else {
            throw APIError(.forbidden, "this server writes no file on its host: save the response from the proxy's own web UI")
        }
        let flow = try await store.flow(named: id)
        guard let response = flow.response else { throw APIError(.notFound, "exchange \(flow.id) has no response") }
        let options: JSONValue
        do { options = try JSONValue(parsing: text) } catch { throw APIError(.badRequest, "not JSON: \(error)") }
        guard let given = options["path"]?.stringValue, !given.isEmpty else {
            throw APIError(.badRequest, "path: a file name is needed (in \(mapLocalFolders.base), or an absolute path in one of the Map Local folders)", details: ["field": "path"])
        }
        let path: String
        switch mapLocalFolders.writable(given) {
        case .success(let resolved): path = resolved
        case .failure(let refusal): throw APIError(.forbidden, "path: \(refusal)", details: ["field": "path"])
        }
        if response.body.isTruncated || response.body.keptCount < response.body.size {
            throw APIError(.conflict, "only \(response.body.keptCount) of the response's \(response.body.size) body bytes were kept: the file would not be the response")
        }
        if FileManager.default.fileExists(atPath: path), options["overwrite"]?.boolValue != true {
            throw APIError(.conflict, "path: \(path) exists (send overwrite: true to replace it)", details: ["field": "path"])
        }
        var data = response.body.data
        if let encoding = response.headers["Content-Encoding"], ContentCoding.isEncoded(encoding) {
            do { data = try ContentCoding.decode(data, contentEncoding: encoding) } catch {
                throw APIError(.unprocessableContent, "the body is \(encoding) encoded and could not be decoded: \(error)")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw APIError(.unprocessableContent, "path: could not write \(path): \(error.localizedDescription)", details: ["field": "path"])
        }
        return jsonResponse(["path": .string(path), "size": .integer(data.count)])
    }

    /// `{"count": N, "concurrency": C, "delayMs": D}` (each optional: 1, 1, 0), answered once
    /// every repeat has ended, with the summary.
    func repeatFlow(id: String?, text: String) async throws -> Response {
        guard let repeatRoute else { throw APIError.noProxy }
        let flow = try await store.flow(named: id)
        let plan: RequestRepeater.Plan
        do {
            let options = text.allSatisfy(\.isWhitespace) ? JSONValue.object([:]) : try JSONValue(parsing: text)
            guard options.objectValue != nil else { throw APIError(.badRequest, "expected a JSON object, found \(options.typeName)") }
            func number(_ name: String, _ fallback: Int) throws(HeldEditError) -> Int {
                guard let value = options[name] else { return fallback }
                guard let number = value.intValue else { throw HeldEditError(field: name, message: "expected a whole number, found \(value.typeName)") }
                return number
            }
            plan = try RequestRepeater.Plan(
                count: try number("count", 1), concurrency: try number("concurrency", 1), delayMilliseconds: try number("delayMs", 0))
        } catch let error as APIError {
            throw error
        } catch let error as JSONParseError {
            throw APIError(.badRequest, "not JSON: \(error)")
        } catch {
            throw APIError(.badRequest, "\(error)")
        }
        if flow.request.body.isTruncated || flow.request.body.keptCount < flow.request.body.size {
            throw APIError(.conflict, "exchange \(flow.id) kept only \(flow.request.body.keptCount) of its \(flow.request.body.size) request body bytes: it can't be sent again as it was")
        }
        let summary: RepeatSummary
        do {
            summary = try await RequestRepeater(route: repeatRoute).run(flow.request, of: flow.id, plan: plan)
        } catch {
            throw APIError(.unprocessableContent, error.description)
        }
        try await store.flush()
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
