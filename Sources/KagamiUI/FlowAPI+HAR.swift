// HTTP Archives in and out of the live session: import a .har into it, export chosen exchanges.
import Foundation
import Hummingbird
import KagamiFlow
import KagamiHAR
import KagamiJSON

extension FlowAPI {
    /// Archives from browsers can be large, but not unbounded.
    static let maximumArchiveBytes = 512 << 20

    /// `POST /api/import.har` with the archive as the body. Entries that can't be read are
    /// skipped and listed (`skipped`: path and message each); the rest join the session and the
    /// live stream like captured ones. Nothing to import (broken JSON, no `log.entries`, or no
    /// readable entry): 400 with where (line and column, or the JSON path) and what was expected.
    func importHAR(_ request: Request) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumArchiveBytes)
        } catch {
            return apiError(.contentTooLarge, "an archive to import is at most \(Self.maximumArchiveBytes >> 20) MB")
        }
        var result: HARImport.Result
        do {
            result = try HARImport.read(from: body.readableBytesView)
        } catch {
            return jsonResponse(.object(Self.describe(error)), status: .badRequest)
        }
        let skipped = JSONValue.array(result.skipped.map { .object(Self.describe($0)) })
        if result.flows.isEmpty, let first = result.skipped.first {
            var object = Self.describe(first)
            object["error"] = .string("no entry could be read: \(first.description)")
            object["skipped"] = skipped
            return jsonResponse(.object(object), status: .badRequest)
        }
        // An archive exported from this session (or imported twice) carries ids it already has:
        // those get new ids, so importing adds exchanges instead of replacing the recorded ones.
        try await store.flush()
        var seen = Set<UUID>()
        for index in result.flows.indices {
            let id = result.flows[index].id
            var taken = !seen.insert(id).inserted
            if !taken { taken = try await store.flow(id: id) != nil }
            if taken { result.renumber(index) }
        }
        let flows = result.flows
        for flow in flows {
            server.hub.record(flow)
            if let messages = result.webSocketMessages[flow.id] { server.hub.record(messages: messages, of: flow.id) }
        }
        try await store.flush()
        return jsonResponse([
            "imported": .integer(flows.count),
            "ids": .array(flows.map { .string($0.id.uuidString) }),
            "skipped": skipped,
        ])
    }

    static func describe(_ error: HARImportError) -> JSONObject {
        var object: JSONObject = ["error": .string(error.description), "message": .string(error.message)]
        object["path"] = error.path.map(JSONValue.string) ?? .null
        object["line"] = error.line.map(JSONValue.integer) ?? .null
        object["column"] = error.column.map(JSONValue.integer) ?? .null
        return object
    }

    /// `POST /api/export.har` with `{"ids": [...]}`: those exchanges (in the order given) as HAR 1.2.
    func harOfSelected(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 << 20)
        let ids: [UUID]
        do {
            let document = try JSONValue(parsing: body.readableBytesView)
            guard case .object(let object) = document, case .array(let list)? = object["ids"] else {
                return apiError(.badRequest, "expected {\"ids\": [\"<exchange id>\", ...]}")
            }
            var parsed: [UUID] = []
            for (index, item) in list.enumerated() {
                guard case .string(let text) = item, let id = UUID(uuidString: text) else {
                    return apiError(.badRequest, "ids[\(index)]: expected an exchange id (a UUID)")
                }
                parsed.append(id)
            }
            ids = parsed
        } catch {
            return apiError(.badRequest, "the body is not JSON: \(error)")
        }
        try await store.flush()
        var flows: [Flow] = []
        for id in ids {
            guard let flow = try await store.flow(id: id) else { return missing(id.uuidString) }
            flows.append(flow)
        }
        let archive = HARExport.archive(flows, webSocketMessages: try await store.webSocketMessages(of: flows), creatorVersion: server.configuration.version)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8",
                .contentDisposition: "attachment; filename=\"kagami-selected.har\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: archive.serialized()))
        )
    }
}
