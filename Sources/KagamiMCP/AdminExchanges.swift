// A running proxy's session read through its admin API, for an agent that can't open the
// session itself (the proxy runs on another machine, or as another user): rows from
// `/api/flows`, whole exchanges from its HAR export, which carries everything a flow holds.
import Foundation
import KagamiFlow
import KagamiHAR
import KagamiJSON
import KagamiStore
import NIOHTTP1

public struct AdminExchanges: ExchangeSource {
    public let admin: AdminAPI

    public init(_ admin: AdminAPI) {
        self.admin = admin
    }

    public func count() async throws -> Int {
        let status = try await read(.GET, "/api/status")
        guard let count = status["flows"]?.intValue else { throw ToolFailure("the proxy at \(admin.baseURL) answered /api/status without a flow count") }
        return count
    }

    public func rows(_ query: ExchangeQuery) async throws -> RowPage {
        var parameters = [
            "order=\(query.order == .newestFirst ? "newest" : "oldest")",
            "limit=\(query.limit)",
        ]
        if let after = query.after { parameters.append("after=\(after)") }
        if !query.filter.isEmpty { parameters.append("filter=\(Self.queryValue(query.filter))") }
        let answer = try await read(.GET, "/api/flows?" + parameters.joined(separator: "&"))
        guard let rows = answer["flows"]?.arrayValue else { throw ToolFailure("the proxy at \(admin.baseURL) answered /api/flows without flows") }
        return RowPage(rows: rows, next: answer["next"]?.stringValue.flatMap { Int64($0) })
    }

    public func flows(_ query: ExchangeQuery) async throws -> FlowPage {
        let page = try await rows(query)
        let ids = page.rows.compactMap { $0["id"]?.stringValue }
        guard !ids.isEmpty else { return FlowPage(flows: [], next: page.next) }
        return FlowPage(flows: try await archive(ids).flows, next: page.next)
    }

    public func flow(id: UUID) async throws -> Flow? {
        do {
            return try await archive([id.uuidString]).flows.first
        } catch let refusal as AdminAPI.Refusal where refusal.status == 404 {
            return nil
        }
    }

    public func messages(of flowID: UUID, offset: Int, limit: Int?) async throws -> [WebSocketMessage] {
        let all: [WebSocketMessage]
        do {
            all = try await archive([flowID.uuidString]).webSocketMessages[flowID] ?? []
        } catch let refusal as AdminAPI.Refusal where refusal.status == 404 {
            return []
        }
        let start = min(offset, all.count)
        let end = limit.map { min(all.count, start + $0) } ?? all.count
        return Array(all[start..<end])
    }

    public func notes() async throws -> [SessionNote] {
        let answer = try await read(.GET, "/api/notes")
        guard let notes = answer["notes"]?.arrayValue else { throw ToolFailure("the proxy at \(admin.baseURL) answered /api/notes without notes") }
        return try notes.map { json in
            guard let note = SessionNote(json: json) else { throw ToolFailure("the proxy at \(admin.baseURL) gave a note Kagami can't read: \(json.serialized())") }
            return note
        }
    }

    /// The exchanges with these ids as the proxy exports them (`POST /api/export.har`): bodies,
    /// timings, TLS, violations, rules applied and WebSocket messages.
    private func archive(_ ids: [String]) async throws -> HARImport.Result {
        let archive = try await admin.send(.POST, "/api/export.har", body: ["ids": .array(ids.map(JSONValue.string))])
        do {
            return try HARImport.read(from: archive)
        } catch {
            throw ToolFailure("the proxy at \(admin.baseURL) exported exchanges Kagami can't read: \(error)")
        }
    }

    /// A read whose refusal is the tool's failure, with the proxy's reason.
    private func read(_ method: HTTPMethod, _ path: String) async throws -> JSONValue {
        do {
            return try await admin.send(method, path)
        } catch let refusal as AdminAPI.Refusal {
            throw ToolFailure("the proxy at \(admin.baseURL) refused \(path): \(refusal.message)")
        }
    }

    private static func queryValue(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
