// Diff: this session (or a filter or a choice of its exchanges) against another session, or
// two parts of this one, by operation (`kagami diff`), with each exchange a finding names
// readable from either session for the side-by-side view.
import Foundation
import Hummingbird
import KagamiContentCoding
import KagamiDiff
import KagamiFlow
import KagamiJSON
import KagamiStore

/// The sessions the UI can compare its own with: a session file's neighbours in its folder, or
/// the other sessions of the store `kagami serve` shows.
public struct ComparableSessions: Sendable {
    /// Their names, this session's left out.
    public let names: @Sendable () async throws -> [String]
    /// The session `name` for reading, or nil when there is none; the caller closes it.
    public let open: @Sendable (String) async throws -> (any FlowStore)?

    /// The other session files (`*.sqlite` holding a session) in the folder of the session at
    /// `path`. Another SQLite database there is neither listed nor opened: opening it as a
    /// store would write a session's tables into it.
    public static func folder(of path: String) -> ComparableSessions {
        let folder = (path as NSString).deletingLastPathComponent
        let own = (path as NSString).lastPathComponent
        @Sendable func file(_ name: String) -> String? {
            // A name, never a path: nothing outside the folder is opened.
            guard name.hasSuffix(".sqlite"), !name.contains("/"), !name.hasPrefix("."), name != own else { return nil }
            let file = (folder as NSString).appendingPathComponent(name)
            return SQLiteFlowStore.holdsSession(at: file) ? file : nil
        }
        return ComparableSessions(
            names: {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                return names.filter { file($0) != nil }.sorted()
            },
            open: { name in try file(name).map { try SQLiteFlowStore(path: $0) } })
    }

    /// The store's other sessions.
    public static func catalog(_ catalog: any SessionCatalog, except own: String) -> ComparableSessions {
        ComparableSessions(
            names: { try await catalog.sessions().map(\.name).filter { $0 != own } },
            open: { name in name == own ? nil : try await catalog.open(session: name) })
    }
}

struct DiffAPI: Sendable {
    let store: any FlowStore
    /// Nil: only parts of this session can be compared.
    let sessions: ComparableSessions?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/diff/sessions") { _, _ in
            jsonResponse(["sessions": .array(try await self.sessions?.names().map(JSONValue.string) ?? [])])
        }
        router.post("/api/diff") { request, _ in
            try await self.diff(BreakpointAPI.text(of: request))
        }
        router.get("/api/diff/exchange") { request, _ in
            try await self.exchange(request)
        }
    }

    /// One side as the page asks for it: `{"session": NAME}` (absent: this session), and either
    /// `"filter"` (the filter box's words) or `"ids"` (chosen exchanges, in this order).
    struct Side {
        var session: String?
        var filter = FlowFilter()
        var ids: [UUID]?
        var label: String
    }

    /// `{"before": side, "after": side, "ignore": [...]}`: the diff as `kagami diff --format
    /// json` writes it. A capture that is empty or has nothing in common with the other is a
    /// 422 that says so, never an empty diff.
    func diff(_ text: String) async throws -> Response {
        let body: JSONObject
        do {
            guard let object = try JSONValue(parsing: text).objectValue else { throw APIError(.badRequest, "expected a JSON object") }
            body = object
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, "the body is not JSON: \(error)")
        }
        let before = try side(body["before"], field: "before")
        let after = try side(body["after"], field: "after")
        var options = DiffOptions()
        for (index, item) in (body["ignore"]?.arrayValue ?? []).enumerated() {
            guard let place = item.stringValue else { throw APIError(.badRequest, "ignore[\(index)]: expected a JSON Pointer or a name") }
            options.ignore.append(place)
        }
        if let percent = body["latencyThreshold"]?.doubleValue { options.latencyRatio = max(0, percent) / 100 }
        try await store.flush()
        let diff: CaptureDiff
        do {
            let options = options
            diff = try await CaptureDiff.comparing(
                { try await self.summary(before, options: options) }, { try await self.summary(after, options: options) },
                labels: (before.label, after.label))
        } catch let refusal as DiffRefusal {
            let reason = switch refusal.reason {
            case .empty: "empty"
            case .nothingInCommon: "nothingInCommon"
            }
            throw APIError(.unprocessableContent, refusal.description, details: ["reason": .string(reason)])
        }
        var answer = DiffReport(diff, beforeLabel: before.label, afterLabel: after.label).json()
        if case .object(var object) = answer {
            object["sessions"] = ["before": before.session.map(JSONValue.string) ?? .null, "after": after.session.map(JSONValue.string) ?? .null]
            answer = .object(object)
        }
        return jsonResponse(answer)
    }

    private func side(_ value: JSONValue?, field: String) throws -> Side {
        guard let object = value?.objectValue else { throw APIError(.badRequest, "\(field): expected an object with session, filter or ids") }
        let session = object["session"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if session != nil, sessions == nil { throw APIError(.badRequest, "\(field).session: this UI compares parts of its own session only") }
        var side = Side(session: session, label: session ?? "this session")
        if let text = object["filter"]?.stringValue, !text.allSatisfy(\.isWhitespace) {
            side.filter = FlowFilter(parsing: text)
            if !side.filter.unapplied.isEmpty {
                throw APIError(.badRequest, "\(field).filter: \(side.filter.unapplied.joined(separator: " ")) can't select exchanges to compare; use host:, path:, method:, status:, has:error and text")
            }
            side.label += " (\(text))"
        }
        if let ids = object["ids"]?.arrayValue {
            side.ids = try ids.enumerated().map { index, item in
                guard let text = item.stringValue, let id = UUID(uuidString: text) else { throw APIError(.badRequest, "\(field).ids[\(index)]: expected an exchange id") }
                return id
            }
            side.label += " (\(ids.count) chosen)"
        }
        return side
    }

    /// The store a side reads, and whether it was opened for it (and is closed after).
    private func store(of session: String?) async throws -> (store: any FlowStore, opened: Bool) {
        guard let session else { return (store, false) }
        guard let sessions, let opened = try await sessions.open(session) else { throw APIError(.notFound, "no session named \(session)") }
        return (opened, true)
    }

    private func summary(_ side: Side, options: DiffOptions) async throws -> CaptureSummary {
        let (store, opened) = try await store(of: side.session)
        do {
            var summary = CaptureSummary(options: options)
            if let ids = side.ids {
                for id in ids {
                    guard let flow = try await store.flow(id: id) else { throw APIError(.notFound, "no exchange \(id.uuidString) in \(side.session ?? "this session")") }
                    try await summary.add([flow]) { try await store.messages(of: $0, offset: 0, limit: nil) }
                }
            } else {
                try await store.forEachFlow(filter: side.filter, includeBodies: true) { page in
                    try await summary.add(page) { try await store.messages(of: $0, offset: 0, limit: nil) }
                }
            }
            if opened { await store.close() }
            return summary
        } catch {
            if opened { await store.close() }
            throw error
        }
    }

    /// `?id=ID&session=NAME` (no session: this one): the exchange as the inspector reads it,
    /// with both bodies as text (decoded, JSON pretty-printed) for the side-by-side view.
    func exchange(_ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        guard let text = parameters.get("id"), let id = UUID(uuidString: text) else { throw APIError.missing(parameters.get("id")) }
        let (store, opened) = try await store(of: parameters.get("session").flatMap { $0.isEmpty ? nil : $0 })
        let flow: Flow?
        do {
            flow = try await store.flow(id: id)
        } catch {
            if opened { await store.close() }
            throw error
        }
        if opened { await store.close() }
        guard let flow else { throw APIError.missing(text) }
        guard case .object(var object) = flow.detailJSON else { return jsonResponse(flow.detailJSON) }
        object["requestText"] = Self.text(flow.request.body, headers: flow.request.headers)
        object["responseText"] = flow.response.map { Self.text($0.body, headers: $0.headers) } ?? .null
        return jsonResponse(.object(object))
    }

    /// A body to read beside another: decoded, JSON pretty-printed with sorted members (so two
    /// bodies line up member by member), other text as it is; nil for binary or none.
    static func text(_ body: FlowBody, headers: HeaderFields) -> JSONValue {
        guard body.keptCount > 0 else { return .null }
        let data = (try? ContentCoding.decode(body.data, contentEncoding: headers["content-encoding"], limit: 4 << 20)) ?? body.data
        guard let text = String(data: data.prefix(1 << 20), encoding: .utf8) else { return .null }
        if let value = try? JSONValue(parsing: text) { return .string(value.serialized([.prettyPrinted, .sortedKeys])) }
        return .string(text)
    }
}
