// The read tools of `kagami mcp` on a big session, timed through the tool layer (arguments
// checked against the schema, the store read, the answer built), as an agent's call costs
// without its transport: bench/mcp/run.sh.
// Usage: mcp-bench SESSION.sqlite [RUNS]
import Foundation
import KagamiJSON
import KagamiMCP
import KagamiStore

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: mcp-bench SESSION.sqlite [RUNS]\n".utf8))
    exit(64)
}
let runs = arguments.count > 2 ? max(1, Int(arguments[2]) ?? 7) : 7
let store = try SQLiteFlowStore(path: arguments[1])
let catalog = try ToolCatalog(SessionTools.tools(SessionSource(store: store, name: arguments[1], others: nil)))
let clock = ContinuousClock()

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// One call `runs` times after a first one not counted (the page cache warmed, as for an agent
/// that has called before): each time in ms and the last answer.
func measure(_ tool: String, _ arguments: JSONObject) async throws -> (times: [Double], answer: JSONValue) {
    var answer = try await catalog.call(tool, arguments: arguments)
    var times: [Double] = []
    for _ in 0..<runs {
        let started = clock.now
        answer = try await catalog.call(tool, arguments: arguments)
        times.append(milliseconds(clock.now - started))
    }
    return (times.sorted(), answer)
}

func row(_ what: String, _ tool: String, _ arguments: JSONObject, note: @Sendable (JSONValue) -> String) async throws -> JSONValue {
    let (times, answer) = try await measure(tool, arguments)
    let median = times[times.count / 2]
    let shown = times.map { String(format: "%.1f", $0) }.joined(separator: ", ")
    print("| \(what) | `\(tool)` `\(JSONValue.object(arguments).serialized())` | \(String(format: "%.1f", median)) ms | [\(shown)] | \(note(answer)) |")
    return answer
}

let started = clock.now
let total = try await store.count()
print("Session: \(total) exchanges; opened and counted in \(String(format: "%.0f", milliseconds(clock.now - started))) ms. Each row: median of \(runs) calls after one not counted, all calls in brackets, in ms.\n")
print("| What | Call | Median | Calls | Answer |")
print("|---|---|--:|---|---|")
let rows: @Sendable (JSONValue) -> String = { answer in
    let list = answer["exchanges"]?.arrayValue ?? []
    let first = list.first.map { "\($0["host"]?.stringValue ?? "")\($0["path"]?.stringValue ?? "")" } ?? "none"
    return "\(list.count) rows, newest \(first)"
}
let newest = try await row("Newest page", "search_exchanges", [:], note: rows)
_ = try await row("Newest 500", "search_exchanges", ["limit": 500], note: rows)
if let next = newest["next"], !next.isNull {
    _ = try await row("Second page (cursor)", "search_exchanges", ["cursor": next], note: rows)
}
_ = try await row("Host filter", "search_exchanges", ["filter": "host:h7.test"], note: rows)
_ = try await row("Status filter (0.1% of rows)", "search_exchanges", ["filter": "status:404"], note: rows)
_ = try await row("Text filter, common", "search_exchanges", ["filter": "page=7"], note: rows)
_ = try await row("Text filter, rare (one exchange)", "search_exchanges", ["filter": "items/333333?"], note: rows)
_ = try await row("Path wildcard and negation", "search_exchanges", ["filter": "path:/items/99999* -status:404"], note: rows)
if let id = newest["exchanges"]?[0]?["id"] {
    _ = try await row("Newest exchange read", "get_exchange", ["id": id]) { answer in
        "\(answer["exchange"]?["url"]?.stringValue ?? "") \(answer["responseBody"]?["size"]?.intValue ?? 0) B body"
    }
}
_ = try await row("Session and count", "list_sessions", [:]) { "\($0["current"]?["exchanges"]?.intValue ?? 0) exchanges" }
await store.close()
