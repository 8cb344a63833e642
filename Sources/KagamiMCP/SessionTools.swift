// The read tools: one session's exchanges searched, read, checked, summarised and compared,
// through an `ExchangeSource` (the store's public API, or a running proxy's admin API), with
// credentials redacted in everything answered.
import Foundation
import KagamiContentCoding
import KagamiContractCheck
import KagamiCurl
import KagamiDiff
import KagamiFlow
import KagamiGRPC
import KagamiInfer
import KagamiJSON
import KagamiStore
import KagamiUI

/// The session `kagami mcp` serves, and the others it may compare it with.
public struct SessionSource: Sendable {
    public var exchanges: any ExchangeSource
    /// As the banner names it: the file's path, `NAME in postgres://…`, or the proxy's address.
    public var name: String
    /// The sessions beside it (a session file's folder, the other sessions of a shared store).
    public var others: ComparableSessions?

    public init(exchanges: any ExchangeSource, name: String, others: ComparableSessions?) {
        self.exchanges = exchanges
        self.name = name
        self.others = others
    }

    /// A session read through its store.
    public init(store: any FlowStore, name: String, others: ComparableSessions?) {
        self.init(exchanges: StoredExchanges(store), name: name, others: others)
    }
}

public enum SessionTools {
    /// Bytes of a body given when none is asked for, and the most one answer gives.
    static let defaultBodyBytes = 16 * 1024
    static let maximumBodyBytes = 1 << 20
    /// Exchanges read at most per call of contract_violations (flows with violations are
    /// found by reading them); the cursor continues.
    static let violationScan = 2_000

    /// Every read tool over `source`. `redaction` is applied to each flow and message before
    /// anything of it is answered.
    public static func tools(_ source: SessionSource, redaction: FlowRedaction = FlowRedaction()) -> [KagamiTool] {
        let reader = SessionReader(source: source, redaction: redaction)
        return [
            KagamiTool(
                name: "list_sessions", title: "List sessions",
                summary: "The session this server reads (with its exchange count) and the other sessions beside it that diff_sessions can compare it with.",
                input: ToolSchema.object([:]),
                output: ToolSchema.answer([
                    "current": ToolSchema.anyObject("{name, exchanges}"),
                    "others": ToolSchema.array(of: ["type": "string"], "Names to give diff_sessions."),
                ]),
                run: { _ in try await reader.sessions() }),
            KagamiTool(
                name: "search_exchanges", title: "Search exchanges",
                summary: "Exchanges of the session, newest first, narrowed by Kagami's filter words (e.g. `host:api.example.com status:5xx -path:/health`), a page at a time.",
                input: ToolSchema.object([
                    "filter": ToolSchema.filter,
                    "limit": ToolSchema.integer("Exchanges per page.", minimum: 1, maximum: 500, default: 50),
                    "cursor": ToolSchema.cursor,
                ]),
                output: ToolSchema.answer([
                    "exchanges": ToolSchema.array(of: ToolSchema.anyObject("A row: id, time (ms), method, scheme, host, path, query, status, type, sizes, duration (ms), error, rules, violations."), "Newest first."),
                    "next": ToolSchema.next,
                    "total": ["type": "integer", "description": "Exchanges in the whole session."],
                ]),
                run: { try await reader.search($0) }),
            KagamiTool(
                name: "get_exchange", title: "Get an exchange",
                summary: "One exchange: URL, request and response headers, timings, TLS, error, rules applied, contract violations, the start of both bodies (decoded, at most body_bytes each; get_body pages through the rest), gRPC messages for a gRPC call and the first WebSocket messages.",
                input: ToolSchema.object([
                    "id": ToolSchema.id,
                    "body_bytes": ToolSchema.integer("Bytes of each body to include (0: none).", minimum: 0, maximum: maximumBodyBytes, default: defaultBodyBytes),
                ], required: ["id"]),
                output: ToolSchema.answer([
                    "exchange": ToolSchema.anyObject("The exchange as the admin API's /api/flows/{id} gives it."),
                    "requestBody": ToolSchema.anyObject("A body page (see get_body), or null."),
                    "responseBody": ToolSchema.anyObject("A body page (see get_body), or null."),
                ]),
                run: { try await reader.exchange($0) }),
            KagamiTool(
                name: "get_body", title: "Read a body",
                summary: "A page of an exchange's request or response body, Content-Encoding undone: text when it is UTF-8, else base64; nextOffset continues.",
                input: ToolSchema.object([
                    "id": ToolSchema.id,
                    "part": ToolSchema.string("Which body.", oneOf: ["request", "response"]),
                    "offset": ToolSchema.integer("First byte of the decoded body.", minimum: 0, default: 0),
                    "limit": ToolSchema.integer("Bytes at most.", minimum: 1, maximum: maximumBodyBytes, default: defaultBodyBytes),
                ], required: ["id", "part"]),
                output: ToolSchema.answer([
                    "offset": ["type": "integer"], "length": ["type": "integer"], "size": ["type": "integer", "description": "Decoded bytes kept."],
                    "truncated": ["type": "boolean", "description": "The capture kept only part of the body."],
                    "nextOffset": ["type": ["integer", "null"]],
                ]),
                run: { try await reader.body($0) }),
            KagamiTool(
                name: "get_messages", title: "Read WebSocket messages",
                summary: "The WebSocket messages of an exchange in the order they passed (type send or receive, text or base64, opcode, size).",
                input: ToolSchema.object([
                    "id": ToolSchema.id,
                    "offset": ToolSchema.integer("First message.", minimum: 0, default: 0),
                    "limit": ToolSchema.integer("Messages at most.", minimum: 1, maximum: 1_000, default: 100),
                ], required: ["id"]),
                output: ToolSchema.answer(["messages": ToolSchema.array(of: ToolSchema.anyObject("A message."), "In order."), "nextOffset": ["type": ["integer", "null"]]]),
                run: { try await reader.messages($0) }),
            KagamiTool(
                name: "list_notes", title: "Changes made while recording",
                summary: "The session's notes, oldest first: each change made to the proxy while it recorded (a rule added, enabled or removed, a scenario put in force, a held exchange released, an exchange repeated — every change kagami mcp makes is noted), with its time (ms), who made it and the exchange it concerns.",
                input: ToolSchema.object([:]),
                output: ToolSchema.answer([
                    "notes": ToolSchema.array(of: ToolSchema.anyObject("{id, time (ms), author, text, flow}"), "Oldest first."),
                ]),
                run: { _ in ["notes": .array(try await source.exchanges.notes().map(\.json))] }),
            KagamiTool(
                name: "contract_violations", title: "Contract violations",
                summary: "Exchanges that disagree with the API description, newest first, with each violation (kind, severity, operation, location, expected, actual). Without `contract` the violations the recording proxy found (kagami proxy --contract); with it, the session checked now against that description file.",
                input: ToolSchema.object([
                    "contract": ToolSchema.string("An API description (OpenAPI or API Blueprint) file, optionally FILE=BASEURL."),
                    "filter": ToolSchema.filter,
                    "limit": ToolSchema.integer("Exchanges with violations per page.", minimum: 1, maximum: 200, default: 20),
                    "cursor": ToolSchema.cursor,
                ]),
                output: ToolSchema.answer([
                    "exchanges": ToolSchema.array(of: ToolSchema.anyObject("{id, method, url, status, violations}"), "Newest first."),
                    "next": ToolSchema.next,
                    "scanned": ["type": "integer", "description": "Exchanges read for this page."],
                ]),
                run: { try await reader.violations($0) }),
            KagamiTool(
                name: "list_operations", title: "Operations seen",
                summary: "The API operations the session's traffic shows (path templates as kagami infer finds them: /users/{userId}), each with its call count and the statuses answered.",
                input: ToolSchema.object([
                    "paths": ToolSchema.array(of: ["type": "string"], "Path templates to use where they fit (/repos/{owner}/{repo})."),
                ]),
                output: ToolSchema.answer([
                    "operations": ToolSchema.array(of: ToolSchema.anyObject("{method, server, path, name, count, statuses}"), "By server, path and method."),
                    "exchanges": ["type": "integer"],
                    "skipped": ToolSchema.array(of: ["type": "string"], "What was left out, and why."),
                ]),
                run: { try await reader.operations($0) }),
            KagamiTool(
                name: "draft_description", title: "Draft an API description",
                summary: "An API description drafted from the session's traffic (kagami infer): OpenAPI 3.1 YAML or API Blueprint.",
                input: ToolSchema.object([
                    "format": ToolSchema.string("The description's format.", oneOf: ["openapi", "apib"]),
                    "paths": ToolSchema.array(of: ["type": "string"], "Path templates to use where they fit."),
                ]),
                output: ToolSchema.answer([
                    "format": ["type": "string"], "text": ["type": "string"], "operations": ["type": "integer"], "exchanges": ["type": "integer"],
                    "skipped": ToolSchema.array(of: ["type": "string"], "What was left out, and why."),
                ]),
                run: { try await reader.draft($0) }),
            KagamiTool(
                name: "diff_sessions", title: "Compare two captures",
                summary: "What changed between two captures, operation by operation (kagami diff): calls added or removed, statuses, shapes, values, latency and size. Each side is a session (list_sessions names them; absent: this one) and filter words; two filters of this session compare two parts of it.",
                input: ToolSchema.object([
                    "before": ToolSchema.object(["session": ToolSchema.string("A session list_sessions names; absent: this one."), "filter": ToolSchema.filter]),
                    "after": ToolSchema.object(["session": ToolSchema.string("A session list_sessions names; absent: this one."), "filter": ToolSchema.filter]),
                    "ignore": ToolSchema.array(of: ["type": "string"], "JSON Pointers (/meta/requestId, * for any member) or header and query names never to report."),
                ], required: ["before", "after"]),
                output: ToolSchema.answer(["findings": ToolSchema.array(of: ToolSchema.anyObject("A finding."), "As kagami diff --format json writes them.")]),
                run: { try await reader.diff($0) }),
            KagamiTool(
                name: "copy_curl", title: "Copy as cURL",
                summary: "An exchange's request as a curl command line that sends it again (credentials redacted).",
                input: ToolSchema.object(["id": ToolSchema.id], required: ["id"]),
                output: ToolSchema.answer(["command": ["type": "string"]]),
                run: { try await reader.curl($0) }),
        ]
    }
}

/// What the read tools do, over one source.
struct SessionReader: Sendable {
    let source: SessionSource
    let redaction: FlowRedaction

    var exchanges: any ExchangeSource { source.exchanges }

    func sessions() async throws -> JSONValue {
        let others = try await source.others?.names() ?? []
        return [
            "current": ["name": .string(source.name), "exchanges": .integer(try await exchanges.count())],
            "others": .array(others.map(JSONValue.string)),
        ]
    }

    /// The filter words in `field`, refused when they have words only a page can apply.
    static func filter(_ arguments: ToolArguments, _ field: String = "filter") throws(ToolArgumentError) -> String {
        let words = arguments.string(field) ?? ""
        let filter = FlowFilter(parsing: words)
        if !filter.unapplied.isEmpty {
            throw ToolArgumentError(field: field, message: "\(filter.unapplied.joined(separator: " ")) can't select exchanges here; use host:, path:, method:, status:, has:error and text")
        }
        return words
    }

    /// Rows say no header, body or credential, so they are answered as the source gives them.
    func search(_ arguments: ToolArguments) async throws -> JSONValue {
        let query = ExchangeQuery(
            order: .newestFirst, after: try arguments.cursor(), filter: try Self.filter(arguments),
            limit: arguments.int("limit") ?? 50)
        let page = try await exchanges.rows(query)
        return [
            "exchanges": .array(page.rows),
            "next": page.next.map { .string(String($0)) } ?? .null,
            "total": .integer(try await exchanges.count()),
        ]
    }

    /// The stored flow, redacted, or a failure naming the id.
    func flow(_ arguments: ToolArguments) async throws -> Flow {
        let id = try arguments.exchangeID()
        guard let flow = try await exchanges.flow(id: id) else {
            throw ToolFailure("no exchange \(id.uuidString) in \(source.name)")
        }
        return redaction.apply(to: flow)
    }

    func exchange(_ arguments: ToolArguments) async throws -> JSONValue {
        let flow = try await flow(arguments)
        let limit = arguments.int("body_bytes") ?? SessionTools.defaultBodyBytes
        var answer: JSONObject = ["exchange": flow.detailJSON]
        answer["requestBody"] = limit > 0 ? BodyPage(flow.request.body, headers: flow.request.headers, offset: 0, limit: limit).json : .null
        answer["responseBody"] = limit > 0 ? flow.response.map { BodyPage($0.body, headers: $0.headers, offset: 0, limit: limit).json } ?? .null : .null
        if let grpc = GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers) {
            answer["grpc"] = grpc.json
        }
        if flow.isWebSocket {
            let messages = redaction.apply(to: try await exchanges.messages(of: flow.id, offset: 0, limit: 21))
            answer["messages"] = .array(messages.prefix(20).map(\.json))
            answer["moreMessages"] = .bool(messages.count > 20)
        }
        return .object(answer)
    }

    func body(_ arguments: ToolArguments) async throws -> JSONValue {
        let flow = try await flow(arguments)
        let offset = arguments.int("offset") ?? 0
        let limit = arguments.int("limit") ?? SessionTools.defaultBodyBytes
        if arguments.string("part") == "request" {
            return BodyPage(flow.request.body, headers: flow.request.headers, offset: offset, limit: limit).json
        }
        guard let response = flow.response else { throw ToolFailure("exchange \(flow.id.uuidString) has no response") }
        return BodyPage(response.body, headers: response.headers, offset: offset, limit: limit).json
    }

    func messages(_ arguments: ToolArguments) async throws -> JSONValue {
        let flow = try await flow(arguments)
        guard flow.isWebSocket else { throw ToolFailure("exchange \(flow.id.uuidString) is not a WebSocket") }
        let offset = arguments.int("offset") ?? 0
        let limit = arguments.int("limit") ?? 100
        let messages = redaction.apply(to: try await exchanges.messages(of: flow.id, offset: offset, limit: limit + 1))
        return [
            "messages": .array(messages.prefix(limit).map(\.json)),
            "nextOffset": messages.count > limit ? .integer(offset + limit) : .null,
        ]
    }

    func violations(_ arguments: ToolArguments) async throws -> JSONValue {
        var check: ContractCheck?
        if let contract = arguments.string("contract") {
            do {
                check = try ContractCheck.load(contract)
            } catch {
                throw ToolArgumentError(field: "contract", message: error.description)
            }
        }
        let limit = arguments.int("limit") ?? 20
        // A check made now reads the bodies; stored violations need none.
        var query = ExchangeQuery(
            order: .newestFirst, after: try arguments.cursor(), filter: try Self.filter(arguments), limit: 100, includeBodies: check != nil)
        var found: [JSONValue] = []
        var scanned = 0
        var next: Int64?
        // Whole pages, so the cursor continues where reading stopped; a page may bring a few
        // more than `limit`.
        repeat {
            let page = try await exchanges.flows(query)
            scanned += page.flows.count
            for flow in page.flows {
                let violations = check.map { check in check.check(flow)?.violations ?? [] } ?? flow.violations
                let disagreements = violations.filter(\.isDisagreement)
                guard !disagreements.isEmpty else { continue }
                let shown = redaction.apply(to: flow)
                found.append([
                    "id": .string(flow.id.uuidString),
                    "method": .string(shown.request.method),
                    "url": .string(shown.request.url),
                    "status": flow.response.map { .integer($0.status) } ?? .null,
                    "violations": .array(disagreements.map { $0.json() }),
                ])
            }
            next = page.next
            query.after = page.next
        } while next != nil && found.count < limit && scanned < SessionTools.violationScan
        return ["exchanges": .array(found), "next": next.map { .string(String($0)) } ?? .null, "scanned": .integer(scanned)]
    }

    func operations(_ arguments: ToolArguments) async throws -> JSONValue {
        let draft = try await draft(hints: arguments.values["paths"])
        return [
            "operations": .array(draft.operations.map { operation in
                var statuses: JSONObject = [:]
                for status in operation.responses.keys.sorted() {
                    statuses[String(status)] = .integer(operation.responses[status]?.count ?? 0)
                }
                return [
                    "method": .string(operation.method), "server": .string(operation.server), "path": .string(operation.template.description),
                    "name": .string(operation.name), "count": .integer(operation.count), "statuses": .object(statuses),
                ]
            }),
            "exchanges": .integer(draft.exchangeCount),
            "skipped": .array(draft.skipped.map(JSONValue.string)),
        ]
    }

    func draft(_ arguments: ToolArguments) async throws -> JSONValue {
        let format = arguments.string("format") ?? "openapi"
        let draft = try await draft(hints: arguments.values["paths"])
        return [
            "format": .string(format),
            "text": .string(format == "apib" ? BlueprintDraftWriter.text(draft) : OpenAPIDraftWriter.yaml(draft)),
            "operations": .integer(draft.operations.count),
            "exchanges": .integer(draft.exchangeCount),
            "skipped": .array(draft.skipped.map(JSONValue.string)),
        ]
    }

    /// The session's traffic drafted as `kagami infer` drafts it (which leaves credentials out).
    private func draft(hints value: JSONValue?) async throws -> TrafficDraft {
        var hints: [PathHint] = []
        for (index, item) in (value?.arrayValue ?? []).enumerated() {
            do {
                hints.append(try PathHint(parsing: item.stringValue ?? ""))
            } catch {
                throw ToolArgumentError(field: "paths[\(index)]", message: error.description)
            }
        }
        // Two passes, as TrafficDraft.Builder.draft makes them: the paths first, then the bodies.
        var builder = TrafficDraft.Builder(options: .init(hints: hints))
        try await exchanges.forEachFlow(includeBodies: false) { builder.learnPaths($0) }
        try await exchanges.forEachFlow(includeBodies: true) { builder.describe($0) }
        return builder.draft()
    }

    func diff(_ arguments: ToolArguments) async throws -> JSONValue {
        var options = DiffOptions()
        options.ignore = (arguments.values["ignore"]?.arrayValue ?? []).compactMap(\.stringValue)
        let before = try side(arguments, "before")
        let after = try side(arguments, "after")
        if before.session == after.session, before.filter == after.filter {
            throw ToolArgumentError(field: "after", message: "the same capture as before: name another session or give different filters")
        }
        let diff: CaptureDiff
        do {
            let options = options
            diff = try await CaptureDiff.comparing(
                { try await self.summary(before, options: options) }, { try await self.summary(after, options: options) },
                labels: (before.label, after.label))
        } catch let refusal as DiffRefusal {
            throw ToolFailure(refusal.description)
        }
        return DiffReport(diff, beforeLabel: before.label, afterLabel: after.label).json()
    }

    private struct Side {
        var session: String?
        var filter: String
        var label: String
    }

    private func side(_ arguments: ToolArguments, _ field: String) throws(ToolArgumentError) -> Side {
        let object = ToolArguments(arguments.object(field) ?? [:])
        let session = object.string("session").flatMap { $0.isEmpty ? nil : $0 }
        let filter: String
        do {
            filter = try Self.filter(object)
        } catch {
            throw ToolArgumentError(field: "\(field).\(error.field)", message: error.message)
        }
        let words = object.string("filter") ?? ""
        let label = (session ?? "this session") + (words.allSatisfy(\.isWhitespace) ? "" : " (\(words))")
        return Side(session: session, filter: filter, label: label)
    }

    private func summary(_ side: Side, options: DiffOptions) async throws -> CaptureSummary {
        var reading = exchanges
        var opened: (any FlowStore)?
        if let name = side.session {
            guard let others = source.others, let other = try await others.open(name) else {
                throw ToolFailure("no session named \(name) beside \(source.name) (list_sessions names them)")
            }
            reading = StoredExchanges(other)
            opened = other
        }
        var summary = CaptureSummary(options: options)
        do {
            try await reading.forEachFlow(filter: side.filter, includeBodies: true) { page in
                try await summary.add(page) { try await reading.messages(of: $0, offset: 0, limit: nil) }
            }
        } catch {
            await opened?.close()
            throw error
        }
        await opened?.close()
        return summary
    }

    func curl(_ arguments: ToolArguments) async throws -> JSONValue {
        let flow = try await flow(arguments)
        return ["command": .string(CurlCommand(flow.request).shellCommand)]
    }
}

/// A page of a body: Content-Encoding undone, as text when the decoded bytes are UTF-8, else
/// base64; cut at a character boundary.
struct BodyPage {
    var json: JSONValue

    init(_ body: FlowBody, headers: HeaderFields, offset: Int, limit: Int) {
        var data = body.data
        var decodeError: String?
        if let encoding = headers["Content-Encoding"], !data.isEmpty {
            do {
                data = try ContentCoding.decode(data, contentEncoding: encoding)
            } catch {
                decodeError = error.description
            }
        }
        let bytes = [UInt8](data)
        let start = min(offset, bytes.count)
        var end = min(bytes.count, start + limit)
        var object: JSONObject = [:]
        if String(validating: bytes, as: UTF8.self) != nil {
            // Back off to the start of a character so the page is valid text.
            while end < bytes.count, end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            object["text"] = .string(String(decoding: bytes[start..<end], as: UTF8.self))
        } else {
            object["base64"] = .string(Data(bytes[start..<end]).base64EncodedString())
        }
        object["offset"] = .integer(start)
        object["length"] = .integer(end - start)
        object["size"] = .integer(bytes.count)
        object["truncated"] = .bool(body.isTruncated)
        object["contentType"] = headers["Content-Type"].map(JSONValue.string) ?? .null
        object["nextOffset"] = end < bytes.count ? .integer(end) : .null
        if let decodeError { object["decodeError"] = .string(decodeError) }
        json = .object(object)
    }
}
