import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

/// The Diff view's API: a session file against its neighbours in the folder, and in `kagami
/// serve` a session against the store's others; exchanges of either side read back for the
/// side-by-side view; names that are not sessions refused.
@Suite struct DiffAPITests {
    static func post(_ ui: RunningUI, _ body: JSONValue) async throws -> (status: String, answer: JSONValue) {
        let result = try await ui.curl(["-X", "POST", "-H", "Content-Type: application/json", "-d", body.serialized(), "-w", "\n%{http_code}", ui.url("/api/diff")])
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), try JSONValue(parsing: lines.dropLast().joined(separator: "\n")))
    }

    @Test func aSessionFileAgainstItsNeighbour() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let neighbour = try SQLiteFlowStore(path: ui.directory.appendingPathComponent("before.sqlite").path)
        let old = FlowFixtures.api("/users/1", response: #"{"id":1,"name":"Ada","email":"ada@example.com"}"#)
        neighbour.record(old)
        try await neighbour.flush()
        let new = FlowFixtures.api("/users/2", response: #"{"id":2,"name":"Ada"}"#)
        ui.recorder.record(new)
        ui.recorder.record(FlowFixtures.api("/health", response: "{}"))

        // Another program's SQLite database beside them is neither offered nor opened.
        let database = ui.directory.appendingPathComponent("app.sqlite").path
        let made = try await CommandLineClient("/usr/bin/python3").run(["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table note (text)'); c.commit()", database])
        #expect(made.status == 0, "\(made.stderr)")

        #expect(try await ui.json("/api/diff/sessions") == ["sessions": ["before.sqlite"]])
        let (status, answer) = try await Self.post(ui, ["before": ["session": "before.sqlite"], "after": ["filter": "path:/users/*"]])
        #expect(status == "200", "\(answer)")
        let finding = try #require(answer["findings"]?.arrayValue?.first)
        #expect(answer["findings"]?.arrayValue?.count == 1, "\(answer)")
        #expect(finding["kind"] == "removed-field" && finding["location"] == "response 200 body /email")
        #expect(finding["beforeExchanges"] == [.string(old.id.uuidString)] && finding["afterExchanges"] == [.string(new.id.uuidString)])
        #expect(answer["sessions"] == ["before": "before.sqlite", "after": nil])
        #expect(answer["after"]?["capture"] == "this session (path:/users/*)")

        // Each side's exchange, bodies as text to set side by side.
        let before = try await ui.json("/api/diff/exchange?id=\(old.id.uuidString)&session=before.sqlite")
        #expect(before["url"] == "http://api.example.com/users/1")
        #expect(before["responseText"]?.stringValue?.contains(#""email": "ada@example.com""#) == true, "\(before["responseText"] ?? nil)")
        let after = try await ui.json("/api/diff/exchange?id=\(new.id.uuidString)")
        #expect(after["url"] == "http://api.example.com/users/2")

        // Only session files of the folder, by name.
        for name in ["../before.sqlite", "session.sqlite", "nope.sqlite", "before", "app.sqlite"] {
            let (status, answer) = try await Self.post(ui, ["before": ["session": .string(name)], "after": [:]])
            #expect(status == "404" && answer["error"] == .string("no session named \(name)"), "\(name): \(answer)")
        }
        #expect(!SQLiteFlowStore.holdsSession(at: database) && !FileManager.default.fileExists(atPath: database + "-flows"))
        let (empty, refusal) = try await Self.post(ui, ["before": ["filter": "host:nowhere.example"], "after": [:]])
        #expect(empty == "422" && refusal["reason"] == "empty", "\(refusal)")
        #expect(refusal["error"] == "this session (host:nowhere.example) has no exchanges to compare (none match the filter)")
        let (chosen, answer2) = try await Self.post(ui, ["before": ["ids": [.string(new.id.uuidString)]], "after": ["ids": [.string(UUID().uuidString)]]])
        #expect(chosen == "404" && answer2["error"]?.stringValue?.hasPrefix("no exchange ") == true, "\(answer2)")
    }

    @Test func kagamiServeComparesASessionWithTheStoresOthers() async throws {
        let url = try KagamiProcess.postgresURL()
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let before = try await KagamiProcess.recordSession(origin, requests: ["/status/200", "/echo?x=1"])
        let after = try await KagamiProcess.recordSession(origin, requests: ["/status/200", "/bytes/16"])
        let serve = try await KagamiProcess.start(["serve", "--store", url, "--port", "0"])
        defer { serve.stop() }
        let base = "http://127.0.0.1:\(serve.port)/sessions/\(after.name)"
        let sessions = try JSONValue(parsing: try await CommandLineClient.curl.run(["-s"] + serve.authorization + [base + "/api/diff/sessions"]).stdoutText)
        let names = sessions["sessions"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(names.contains(before.name) && !names.contains(after.name), "\(names)")
        let body: JSONValue = ["before": ["session": .string(before.name)], "after": [:]]
        let result = try await CommandLineClient.curl.run(["-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", body.serialized()] + serve.authorization + [base + "/api/diff"])
        let answer = try JSONValue(parsing: result.stdoutText)
        let kinds = Set((answer["findings"]?.arrayValue ?? []).map { "\($0["kind"]?.stringValue ?? "") \($0["operation"]?.stringValue ?? "")" })
        #expect(kinds.contains("removed-operation GET /echo") && kinds.contains { $0.hasPrefix("added-operation GET /bytes/") }, "\(answer)")
        let removed = try #require(answer["findings"]?.arrayValue?.first { $0["kind"] == "removed-operation" })
        let id = try #require(removed["beforeExchanges"]?[0]?.stringValue)
        let exchange = try JSONValue(parsing: try await CommandLineClient.curl.run(["-s"] + serve.authorization + [base + "/api/diff/exchange?id=\(id)&session=\(before.name)"]).stdoutText)
        #expect(exchange["request"]?["target"] == "/echo?x=1", "\(exchange)")
    }
}
