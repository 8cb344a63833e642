// HTTP Archives in and out of the live session: import a .har into it, export chosen exchanges.
import Foundation
import Hummingbird
import KagamiFlow
import KagamiGRPC
import KagamiHAR
import KagamiJSON

extension FlowAPI {
    /// Archives from browsers can be large, but not unbounded.
    static let maximumArchiveBytes = 512 << 20

    /// `POST /api/import.har` with the archive as the body. Entries that can't be read are
    /// skipped and listed (`skipped`: path and message each); the rest join the session and the
    /// live stream like captured ones, and so do the archive's notes (`log._notes`). Nothing to import (broken JSON, no `log.entries`, or no
    /// readable entry): 400 with where (line and column, or the JSON path) and what was expected.
    func importHAR(_ request: Request) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumArchiveBytes)
        } catch {
            throw APIError(.contentTooLarge, "an archive to import is at most \(Self.maximumArchiveBytes >> 20) MB")
        }
        var result: HARImport.Result
        do {
            result = try HARImport.read(from: body.readableBytesView)
        } catch {
            throw APIError(.badRequest, error.description, details: Self.details(error))
        }
        let skipped = JSONValue.array(result.skipped.map { skip in
            var object: JSONObject = ["error": .string(skip.description)]
            object.merge(Self.details(skip)) { _, detail in detail }
            return .object(object)
        })
        if result.flows.isEmpty, let first = result.skipped.first {
            var details = Self.details(first)
            details["skipped"] = skipped
            throw APIError(.badRequest, "no entry could be read: \(first.description)", details: details)
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
        // In the order they started, as the list shows captured exchanges (an archive may list
        // its entries otherwise); those that started together keep the archive's order.
        let flows = result.flows.enumerated().sorted { ($0.element.timings.start, $0.offset) < ($1.element.timings.start, $1.offset) }.map(\.element)
        for flow in flows {
            recorder.record(flow)
            if let messages = result.webSocketMessages[flow.id] { recorder.record(messages: messages, of: flow.id) }
        }
        // Notes the session already has (the archive came from it) are added again as new ones,
        // like the exchanges they are about.
        let kept = Set(try await store.notes().map(\.id))
        for var note in result.notes {
            if kept.contains(note.id) { note.id = UUID() }
            recorder.record(.note(note))
        }
        try await store.flush()
        return jsonResponse([
            "imported": .integer(flows.count),
            "notes": .integer(result.notes.count),
            "ids": .array(flows.map { .string($0.id.uuidString) }),
            "skipped": skipped,
        ])
    }

    /// Where an entry could not be read, after its `error`: what was expected, the JSON path,
    /// the line and column.
    static func details(_ error: HARImportError) -> JSONObject {
        var object: JSONObject = ["message": .string(error.message)]
        object["path"] = error.path.map(JSONValue.string) ?? .null
        object["line"] = error.line.map(JSONValue.integer) ?? .null
        object["column"] = error.column.map(JSONValue.integer) ?? .null
        return object
    }

    /// `POST /api/export.har` with `{"ids": [...]}`: those exchanges (in the order given) as HAR 1.2,
    /// with the notes about them.
    func harOfSelected(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 << 20)
        let ids: [UUID]
        do {
            let document = try JSONValue(parsing: body.readableBytesView)
            guard case .object(let object) = document, case .array(let list)? = object["ids"] else {
                throw APIError(.badRequest, "expected {\"ids\": [\"<exchange id>\", ...]}")
            }
            var parsed: [UUID] = []
            for (index, item) in list.enumerated() {
                guard case .string(let text) = item, let id = UUID(uuidString: text) else {
                    throw APIError(.badRequest, "ids[\(index)]: expected an exchange id (a UUID)")
                }
                parsed.append(id)
            }
            ids = parsed
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, "the body is not JSON: \(error)")
        }
        try await store.flush()
        var flows: [Flow] = []
        for id in ids {
            guard let flow = try await store.flow(id: id) else { throw APIError.missing(id.uuidString) }
            flows.append(flow)
        }
        let chosen = Set(ids)
        let archive = HARExport.archive(
            flows, webSocketMessages: try await store.webSocketMessages(of: flows), grpc: await configuration.grpcSchemas?.archiveFields(of: flows) ?? [:],
            notes: try await store.notes().filter { $0.flowID.map(chosen.contains) ?? false }, creatorVersion: configuration.version)
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
