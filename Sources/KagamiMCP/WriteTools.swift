// The write tools, served only with `--allow-write`: they change a running `kagami proxy`
// through its admin API, as its web UI does, with the installation's admin token.
import AsyncHTTPClient
import Foundation
import KagamiJSON
import KagamiOutput
import NIOCore
import NIOHTTP1

/// A running proxy's admin API (`kagami proxy`'s web UI port).
public struct AdminAPI: Sendable {
    /// `http://127.0.0.1:8889`
    public var baseURL: String
    public var token: String

    public init(baseURL: String, token: String) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
    }

    /// An answer the admin API refused, with its message.
    public struct Refusal: Error, CustomStringConvertible {
        public var status: Int
        public var message: String

        public var description: String { message }
    }

    /// Sends `body` (JSON) to `path` and returns the JSON answer; a status over 299 is a
    /// `Refusal` carrying the API's own message.
    public func send(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body.serialized()))
        }
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        } catch {
            throw ToolFailure("the proxy's admin API at \(baseURL) did not answer (\(error)); is kagami proxy running with its web UI there (--proxy)?")
        }
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let text = String(buffer: bytes)
        let answer = (try? JSONValue(parsing: text)) ?? .string(text)
        guard (200..<300).contains(Int(response.status.code)) else {
            throw Refusal(status: Int(response.status.code), message: answer["error"]?.stringValue ?? text)
        }
        return answer
    }
}

public enum WriteTools {
    /// The rule kinds of a rules document that add_rule and the others act on.
    static let ruleKinds = ["mapLocal", "mapRemote", "rewrite", "blockList", "allowList"]

    /// The tools that need a proxy but change nothing in it.
    static let readOnly: Set<String> = ["list_rules", "list_held"]

    /// Every write tool's name, so a call without `--allow-write` is told why it is missing.
    static let names: Set<String> = ["list_rules", "add_rule", "set_rule_enabled", "remove_rule", "repeat_exchange", "list_held", "release_breakpoint"]

    public static func tools(_ admin: AdminAPI) -> [KagamiTool] {
        let kind = ToolSchema.string(
            "The rule's kind, as a rules document names its list (docs/RULES.md), or breakpoints (the breakpoints document's list, docs/TOOLS.md).",
            oneOf: ruleKinds + ["breakpoints"])
        let name = ToolSchema.string("The rule's name (a breakpoint's, as list_rules shows it).")
        return [
            KagamiTool(
                name: "list_rules", title: "Rules in force",
                summary: "The running proxy's rules document (Block and Allow List, Map Local, Map Remote, Rewrite, No Caching, throttling), as GET /api/rules gives it, and its breakpoints document (each breakpoint with its name), as GET /api/breakpoints gives it.",
                input: ToolSchema.object([:]),
                output: ToolSchema.answer(["rules": ToolSchema.anyObject("The rules document."), "breakpoints": ToolSchema.anyObject("The breakpoints document.")]),
                needsAllowWrite: true,
                run: { _ in
                    let rules = try await refusalsAsFailures { try await admin.send(.GET, "/api/rules") }
                    let breakpoints = try await refusalsAsFailures { try await admin.send(.GET, "/api/breakpoints") }
                    return ["rules": rules, "breakpoints": breakpoints]
                }),
            KagamiTool(
                name: "add_rule", title: "Add a rule",
                summary: "Adds a rule to the running proxy's rules, in force for the next request. `rule` is one entry of the kind's list in a rules document: Map Local {name, from: {protocol, host, port, path, query}, local: FILE}; Map Remote {name, from, to, preserveHost}; Block/Allow List {name, locations: [...], action: \"403\"|drop}; Rewrite {name, locations, rules: [...]}; a breakpoint {location: {host, path, ...}, request: true, response: false}. Map Local files must lie in the proxy's Map Local folders.",
                input: ToolSchema.object([
                    "kind": kind,
                    "rule": ToolSchema.anyObject("The rule, as in a rules document."),
                ], required: ["kind", "rule"]),
                output: ToolSchema.answer(["kind": ["type": "string"], "index": ["type": "integer"], "rule": ToolSchema.anyObject("The rule as the proxy keeps it.")]),
                needsAllowWrite: true,
                run: { arguments in
                    let kind = arguments.string("kind") ?? ""
                    let rule = JSONValue.object(arguments.object("rule") ?? [:])
                    let document = try await change(admin, kind: kind, field: "rule") { list in list.append(rule) }
                    let kept = document[kind]?.arrayValue ?? []
                    // The proxy names a breakpoint given none.
                    let keptName = kept.last?["name"]?.stringValue ?? rule["name"]?.stringValue
                    await log("added a \(what(kind))\(keptName.map { " '\($0)'" } ?? "")", to: admin)
                    return ["kind": .string(kind), "index": .integer(kept.count - 1), "rule": kept.last ?? rule]
                }),
            KagamiTool(
                name: "set_rule_enabled", title: "Enable or disable a rule",
                summary: "Turns a rule or breakpoint of the running proxy on or off, by kind and name.",
                input: ToolSchema.object(["kind": kind, "name": name, "enabled": ToolSchema.boolean("On or off.")], required: ["kind", "name", "enabled"]),
                output: ToolSchema.answer(["kind": ["type": "string"], "name": ["type": "string"], "enabled": ["type": "boolean"]]),
                needsAllowWrite: true,
                run: { arguments in
                    let kind = arguments.string("kind") ?? ""
                    let ruleName = arguments.string("name") ?? ""
                    let enabled = arguments.bool("enabled") ?? true
                    _ = try await change(admin, kind: kind, field: "name") { list in
                        let index = try Self.index(of: ruleName, kind: kind, in: list)
                        guard case .object(var rule) = list[index] else { return }
                        rule["enabled"] = .bool(enabled)
                        list[index] = .object(rule)
                    }
                    await log("\(enabled ? "enabled" : "disabled") the \(what(kind)) '\(ruleName)'", to: admin)
                    return ["kind": .string(kind), "name": .string(ruleName), "enabled": .bool(enabled)]
                }),
            KagamiTool(
                name: "remove_rule", title: "Remove a rule",
                summary: "Removes a rule or breakpoint from the running proxy, by kind and name.",
                input: ToolSchema.object(["kind": kind, "name": name], required: ["kind", "name"]),
                output: ToolSchema.answer(["kind": ["type": "string"], "name": ["type": "string"], "removed": ["type": "boolean"]]),
                needsAllowWrite: true,
                run: { arguments in
                    let kind = arguments.string("kind") ?? ""
                    let ruleName = arguments.string("name") ?? ""
                    _ = try await change(admin, kind: kind, field: "name") { list in
                        list.remove(at: try Self.index(of: ruleName, kind: kind, in: list))
                    }
                    await log("removed the \(what(kind)) '\(ruleName)'", to: admin)
                    return ["kind": .string(kind), "name": .string(ruleName), "removed": true]
                }),
            KagamiTool(
                name: "repeat_exchange", title: "Repeat an exchange",
                summary: "Sends a recorded request again through the running proxy (its rules and breakpoints apply); the repeats are recorded in its session.",
                input: ToolSchema.object([
                    "id": ToolSchema.id,
                    "count": ToolSchema.integer("Times to send it.", minimum: 1, maximum: 100, default: 1),
                ], required: ["id"]),
                output: ToolSchema.answer(["result": ToolSchema.anyObject("What the admin API's repeat answered: the repeats' ids and statuses.")]),
                needsAllowWrite: true,
                run: { arguments in
                    let id = try arguments.exchangeID()
                    let answer = try await refusalsAsFailures {
                        try await admin.send(.POST, "/api/flows/\(id.uuidString)/repeat", body: ["count": .integer(arguments.int("count") ?? 1)])
                    }
                    await log("repeated exchange \(id.uuidString)", flow: id, to: admin)
                    return ["result": answer]
                }),
            KagamiTool(
                name: "list_held", title: "Exchanges held at breakpoints",
                summary: "The exchanges the running proxy holds at a breakpoint, waiting for release_breakpoint.",
                input: ToolSchema.object([:]),
                output: ToolSchema.answer(["held": ToolSchema.anyObject("As GET /api/breakpoints/held gives it.")]),
                needsAllowWrite: true,
                run: { _ in
                    let held = try await refusalsAsFailures { try await admin.send(.GET, "/api/breakpoints/held") }
                    return ["held": held]
                }),
            KagamiTool(
                name: "release_breakpoint", title: "Release a held exchange",
                summary: "Lets an exchange held at a breakpoint go on: execute (with the edits given: request {method, url, headers, body} or response {status, headers, body}), abort (the client gets an error) or cancel (go on unedited).",
                input: ToolSchema.object([
                    "id": ToolSchema.string("The held exchange's id, as list_held gives it."),
                    "action": ToolSchema.string("What to do.", oneOf: ["execute", "abort", "cancel"]),
                    "request": ToolSchema.anyObject("Edits of a request held at its request."),
                    "response": ToolSchema.anyObject("Edits of a response held at its response."),
                ], required: ["id", "action"]),
                output: ToolSchema.answer(["result": ToolSchema.anyObject("What the admin API answered.")]),
                needsAllowWrite: true,
                run: { arguments in
                    let id = try arguments.exchangeID()
                    var body: JSONObject = ["action": .string(arguments.string("action") ?? "cancel")]
                    if let request = arguments.object("request") { body["request"] = .object(request) }
                    if let response = arguments.object("response") { body["response"] = .object(response) }
                    let answer = try await refusalsAsFailures {
                        try await admin.send(.POST, "/api/breakpoints/held/\(id.uuidString)", body: .object(body))
                    }
                    await log("released held exchange \(id.uuidString): \(body["action"]?.stringValue ?? "")", flow: id, to: admin)
                    return ["result": answer]
                }),
            KagamiTool(
                name: "list_scenarios", title: "Scenarios",
                summary: "The scenarios of the running proxy's scenario file (--scenarios), each with the state it puts its operations in (empty, loading, error, offline, slow, recorded), and the one in force.",
                input: ToolSchema.object([:]),
                output: ToolSchema.answer(["scenarios": ToolSchema.anyObject("As GET /api/scenarios gives it: the scenarios and the active one.")]),
                needsAllowWrite: true,
                run: { _ in
                    ["scenarios": try await refusalsAsFailures { try await admin.send(.GET, "/api/scenarios") }]
                }),
            KagamiTool(
                name: "use_scenario", title: "Put a scenario in force",
                summary: "Puts one of the proxy's scenarios in force at once (the next matching requests get its states), or, with off, every operation as-is again.",
                input: ToolSchema.object([
                    "name": ToolSchema.string("The scenario's name, as list_scenarios gives it."),
                    "off": ToolSchema.boolean("True to turn the scenario in force off (then leave name out)."),
                ]),
                output: ToolSchema.answer(["scenarios": ToolSchema.anyObject("The scenarios after the change, the active one included.")]),
                needsAllowWrite: true,
                run: { arguments in
                    let name = arguments.string("name")
                    let off = arguments.bool("off") ?? false
                    guard (name == nil) == off else {
                        throw ToolArgumentError(field: name == nil ? "name" : "off", message: "give a scenario's name, or off: true, not both")
                    }
                    let answer: JSONValue
                    do {
                        answer = try await admin.send(.PUT, "/api/scenarios/active", body: ["active": name.map(JSONValue.string) ?? .null])
                    } catch let refusal as AdminAPI.Refusal where refusal.status == 404 || refusal.status == 400 {
                        throw ToolArgumentError(field: "name", message: refusal.message)
                    } catch let refusal as AdminAPI.Refusal {
                        throw ToolFailure(refusal.message)
                    }
                    await log(name.map { "put scenario \($0) in force" } ?? "turned the scenario in force off", to: admin)
                    return ["scenarios": answer]
                }),
        ]
    }

    /// Reads the rules (or breakpoints) in force, changes the kind's list, and puts the document back; a
    /// document the proxy refuses is an argument error naming `field` and the proxy's reason.
    static func change(
        _ admin: AdminAPI, kind: String, field: String, _ edit: (inout [JSONValue]) throws -> Void
    ) async throws -> JSONValue {
        // Breakpoints are a document of their own beside the rules.
        let path = kind == "breakpoints" ? "/api/breakpoints" : "/api/rules"
        let current = try await refusalsAsFailures { try await admin.send(.GET, path) }
        guard case .object(var document) = current else { throw ToolFailure("the proxy's rules are not a JSON object") }
        var list = document[kind]?.arrayValue ?? []
        try edit(&list)
        document[kind] = .array(list)
        do {
            return try await admin.send(.PUT, path, body: .object(document))
        } catch let refusal as AdminAPI.Refusal where refusal.status == 400 {
            throw ToolArgumentError(field: field, message: refusal.message)
        } catch let refusal as AdminAPI.Refusal {
            throw ToolFailure(refusal.message)
        }
    }

    static func index(of name: String, kind: String, in list: [JSONValue]) throws(ToolArgumentError) -> Int {
        guard let index = list.firstIndex(where: { $0["name"]?.stringValue == name }) else {
            let names = list.compactMap { $0["name"]?.stringValue }
            throw ToolArgumentError(field: "name", message: "no \(what(kind)) named \(name) (there are: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
        }
        return index
    }

    /// `breakpoint`, `mapLocal rule`.
    static func what(_ kind: String) -> String {
        kind == "breakpoints" ? "breakpoint" : "\(kind) rule"
    }

    static func refusalsAsFailures(_ body: () async throws -> JSONValue) async throws -> JSONValue {
        do {
            return try await body()
        } catch let refusal as AdminAPI.Refusal {
            throw ToolFailure(refusal.message)
        }
    }

    /// Every change is kept in the proxy's session as a note (`POST /api/notes`), beside the
    /// exchanges it changed, and said on standard error, which an MCP client keeps as the
    /// server's log. A note the proxy refuses doesn't undo the change: standard error says so.
    static func log(_ change: String, flow: UUID? = nil, to admin: AdminAPI) async {
        Console.error("kagami mcp: \(change)\n")
        var note: JSONObject = ["author": "kagami mcp", "text": .string(change)]
        if let flow { note["flow"] = .string(flow.uuidString) }
        do {
            _ = try await admin.send(.POST, "/api/notes", body: .object(note))
        } catch {
            Console.error("kagami mcp: the change is made but the session could not keep a note of it: \(error)\n")
        }
    }
}
