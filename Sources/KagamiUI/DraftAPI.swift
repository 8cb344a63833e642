// Draft description: an API description drafted from the session's exchanges (`kagami infer`).
import Foundation
import Hummingbird
import KagamiFlow
import KagamiInfer
import KagamiJSON
import KagamiStore

struct DraftAPI: Sendable {
    let store: any FlowStore

    func register(on router: Router<some RequestContext>) {
        router.post("/api/draft") { request, _ in
            try await self.draft(BreakpointAPI.text(of: request))
        }
    }

    /// `{"ids": [...], "format": "openapi"|"apib", "paths": ["/repos/{owner}/{repo}"]}`, each
    /// optional (every exchange, OpenAPI, no hints): the description as text, with what was
    /// skipped.
    func draft(_ text: String) async throws -> Response {
        let options: JSONObject
        do {
            let document = text.allSatisfy(\.isWhitespace) ? JSONValue.object([:]) : try JSONValue(parsing: text)
            guard let object = document.objectValue else { throw APIError(.badRequest, "expected a JSON object, found \(document.typeName)") }
            options = object
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, "the body is not JSON: \(error)")
        }
        let format = options["format"]?.stringValue ?? "openapi"
        guard ["openapi", "apib"].contains(format) else { throw APIError(.badRequest, "format: expected \"openapi\" or \"apib\", found \(format)") }
        var hints: [PathHint] = []
        for (index, item) in (options["paths"]?.arrayValue ?? []).enumerated() {
            guard let text = item.stringValue else { throw APIError(.badRequest, "paths[\(index)]: expected a path template") }
            do {
                hints.append(try PathHint(parsing: text))
            } catch {
                throw APIError(.badRequest, "paths[\(index)]: \(error.description)")
            }
        }
        try await store.flush()
        let draft: TrafficDraft
        if let ids = options["ids"]?.arrayValue {
            var flows: [Flow] = []
            for (index, item) in ids.enumerated() {
                guard let text = item.stringValue, let id = UUID(uuidString: text) else {
                    throw APIError(.badRequest, "ids[\(index)]: expected an exchange id (a UUID)")
                }
                guard let flow = try await store.flow(id: id) else { throw APIError(.notFound, "no exchange \(text)") }
                flows.append(flow)
            }
            draft = TrafficDraft(flows: flows, options: .init(hints: hints))
        } else {
            draft = try await TrafficDraft.Builder.draft(options: .init(hints: hints)) { offset, limit, includeBodies in
                try await store.flows(offset: offset, limit: limit, includeBodies: includeBodies)
            }
        }
        let description = format == "openapi" ? OpenAPIDraftWriter.yaml(draft) : BlueprintDraftWriter.text(draft)
        return jsonResponse([
            "format": .string(format),
            "text": .string(description),
            "operations": .integer(draft.operations.count),
            "exchanges": .integer(draft.exchangeCount),
            "skipped": .array(draft.skipped.map(JSONValue.string)),
        ])
    }
}
