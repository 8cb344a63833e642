import Foundation
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing

/// `POST /api/import.har`, `POST /api/export.har` and the rule names on summaries.
@Suite struct HARTransferAPITests {
    /// The archive file the session's own export writes.
    func exportedArchive(_ ui: RunningUI) async throws -> URL {
        let file = ui.directory.appendingPathComponent("export-\(UUID().uuidString).har")
        let result = try await ui.curl(["-o", file.path, "-w", "%{http_code}", ui.url("/api/export.har")])
        #expect(result.stdoutText == "200")
        return file
    }

    func post(_ ui: RunningUI, _ path: String, file: URL) async throws -> (status: String, body: JSONValue) {
        let output = ui.directory.appendingPathComponent("answer-\(UUID().uuidString).json")
        let result = try await ui.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@\(file.path)", "-o", output.path, "-w", "%{http_code}", ui.url(path)])
        return (result.stdoutText, try JSONValue(parsing: try Data(contentsOf: output)))
    }

    @Test func importAddsTheArchivesExchangesToTheSessionAndTheLiveStream() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let first = FlowFixtures.getJSON(url: "/users/1")
        let second = FlowFixtures.getJSON(url: "/users/2", status: 404)
        ui.recorder.record(first)
        ui.recorder.record(second)
        let archive = try await exportedArchive(ui)
        let live = ui.hub.subscribe()
        let (status, answer) = try await post(ui, "/api/import.har", file: archive)
        live.cancel()
        #expect(status == "200")
        #expect(answer["imported"] == 2)
        // The session already has those ids: the imported copies get their own.
        guard case .array(let ids)? = answer["ids"] else { Issue.record("no ids in \(answer)"); return }
        let imported = ids.compactMap { $0.stringValue }
        #expect(imported.count == 2 && !imported.contains(first.id.uuidString) && !imported.contains(second.id.uuidString))
        let list = try await ui.json("/api/flows")
        #expect(list["total"] == 4)
        #expect(list["flows"]?[2]?["path"] == "/users/1")
        #expect(list["flows"]?[3]?["status"] == 404)
        #expect(list["flows"]?[3]?["id"] == .string(imported[1]))
        var streamed: [String] = []
        for await delivery in live { if case .flow(let flow) = delivery { streamed.append(flow.id.uuidString) } }
        #expect(streamed == imported, "imported exchanges reach the live views like captured ones")
        // Bodies came along.
        let body = try await ui.curl([ui.url("/api/flows/\(imported[0])/response/body")])
        #expect(body.stdoutText == #"{"id":1,"name":"Ada"}"#)
    }

    /// The session's export carries its notes; the export of chosen exchanges, the notes about
    /// them. Importing it back adds the notes to the session and the live stream, those about a
    /// renumbered exchange moved to its new id.
    @Test func notesTravelInTheArchives() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let first = FlowFixtures.getJSON(url: "/users/1")
        let second = FlowFixtures.getJSON(url: "/users/2", start: Date(timeIntervalSince1970: 1_780_000_001))
        ui.recorder.record(first)
        ui.recorder.record(second)
        let about = SessionNote(time: Date(timeIntervalSince1970: 1_780_000_000.5), author: "kagami mcp", text: "added a breakpoint", flowID: second.id)
        ui.recorder.record(.note(SessionNote(time: Date(timeIntervalSince1970: 1_779_999_999), author: "web UI", text: "put 'empty' in force")))
        ui.recorder.record(.note(about))
        let archive = try await exportedArchive(ui)
        let whole = try JSONValue(parsing: try Data(contentsOf: archive))
        #expect(whole["log"]?["_notes"]?.arrayValue?.map { $0["text"] } == ["put 'empty' in force", "added a breakpoint"])

        let chosen = ui.directory.appendingPathComponent("ids.json")
        for (id, texts) in [(second.id, ["added a breakpoint"]), (first.id, [])] as [(UUID, [JSONValue])] {
            try #"{"ids": ["\#(id.uuidString)"]}"#.write(to: chosen, atomically: true, encoding: .utf8)
            let (status, part) = try await post(ui, "/api/export.har", file: chosen)
            #expect(status == "200")
            #expect((part["log"]?["_notes"]?.arrayValue ?? []).map { $0["text"] } == texts)
        }

        let live = ui.hub.subscribe()
        let (status, answer) = try await post(ui, "/api/import.har", file: archive)
        live.cancel()
        #expect(status == "200", "\(answer)")
        #expect(answer["notes"] == 2)
        let imported = answer["ids"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let notes = try await ui.json("/api/notes")["notes"]?.arrayValue ?? []
        #expect(notes.count == 4, "\(notes)")
        #expect(Set(notes.compactMap { $0["id"]?.stringValue }).count == 4, "a note the session had comes again under an id of its own")
        let moved = notes.filter { $0["text"] == "added a breakpoint" }.compactMap { $0["flow"]?.stringValue }
        #expect(Set(moved) == [second.id.uuidString, imported[1]], "\(moved) \(imported)")
        var streamed: [String] = []
        for await delivery in live { if case .note(let note) = delivery { streamed.append(note.text) } }
        #expect(streamed == ["put 'empty' in force", "added a breakpoint"])
    }

    /// An archive that lists its entries newest first joins the session in the order they started.
    @Test func importedExchangesJoinInTheOrderTheyStarted() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        func entry(_ path: String, _ started: String) -> String {
            #"""
            {"startedDateTime": "\#(started)", "time": 5,
             "request": {"method": "GET", "url": "http://127.0.0.1:9/\#(path)", "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [], "content": {"size": 0, "mimeType": "text/plain"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
             "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}}
            """#
        }
        let archive = ui.directory.appendingPathComponent("newest-first.har")
        let entries = [entry("third", "2026-11-29T10:00:03.000Z"), entry("first", "2026-11-29T10:00:01.000Z"), entry("second", "2026-11-29T10:00:02.000Z")]
        try #"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [\#(entries.joined(separator: ","))]}}"#
            .write(to: archive, atomically: true, encoding: .utf8)
        let (status, answer) = try await post(ui, "/api/import.har", file: archive)
        #expect(status == "200", "\(answer)")
        let list = try await ui.json("/api/flows")
        #expect(list["flows"]?.arrayValue?.map { $0["path"]?.stringValue ?? "" } == ["/first", "/second", "/third"])
    }

    @Test func unreadableEntriesAreSkippedAndNamedAndAnArchiveOfNothingReadableIsRefused() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        ui.recorder.record(FlowFixtures.getJSON())
        let archive = try await exportedArchive(ui)
        guard case .object(var document) = try JSONValue(parsing: try Data(contentsOf: archive)),
              case .object(var log)? = document["log"], case .array(var entries)? = log["entries"],
              case .object(var entry)? = entries.first, case .object(var request)? = entry["request"]
        else { Issue.record("unexpected archive shape"); return }
        request["headers"] = "not a list"
        entry["request"] = .object(request)
        entries.append(.object(entry))
        log["entries"] = .array(entries)
        document["log"] = .object(log)
        let broken = ui.directory.appendingPathComponent("broken.har")
        try Data(JSONValue.object(document).serialized().utf8).write(to: broken)
        let (status, answer) = try await post(ui, "/api/import.har", file: broken)
        #expect(status == "200")
        #expect(answer["imported"] == 1)
        #expect(answer["skipped"]?[0]?["path"] == "log.entries[1].request.headers")
        #expect(answer["skipped"]?[0]?["error"]?.stringValue?.contains("log.entries[1].request.headers") == true)
        #expect(try await ui.json("/api/flows")["total"] == 2, "the readable entry joined the session")

        // Nothing readable: refused, naming the first problem.
        let onlyBroken = ui.directory.appendingPathComponent("only-broken.har")
        log["entries"] = .array([entries[1]])
        document["log"] = .object(log)
        try Data(JSONValue.object(document).serialized().utf8).write(to: onlyBroken)
        let (refusedStatus, refused) = try await post(ui, "/api/import.har", file: onlyBroken)
        #expect(refusedStatus == "400")
        #expect(refused["path"] == "log.entries[0].request.headers")
        #expect(try await ui.json("/api/flows")["total"] == 2)

        let notJSON = ui.directory.appendingPathComponent("not.har")
        try Data("{\"log\": [".utf8).write(to: notJSON)
        let (syntaxStatus, syntax) = try await post(ui, "/api/import.har", file: notJSON)
        #expect(syntaxStatus == "400")
        #expect(syntax["line"] == 1)
        #expect(syntax["column"] != nil && syntax["column"] != .null)
    }

    @Test func exportOfChosenExchangesKeepsTheirOrder() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let flows = (1...3).map { FlowFixtures.getJSON(url: "/items/\($0)") }
        for flow in flows { ui.recorder.record(flow) }
        let request = ui.directory.appendingPathComponent("ids.json")
        try Data(#"{"ids": ["\#(flows[2].id.uuidString)", "\#(flows[0].id.uuidString)"]}"#.utf8).write(to: request)
        let (status, archive) = try await post(ui, "/api/export.har", file: request)
        #expect(status == "200")
        guard case .array(let entries)? = archive["log"]?["entries"] else { Issue.record("no entries in \(archive)"); return }
        #expect(entries.map { $0["request"]?["url"] } == ["http://api.example.com/items/3", "http://api.example.com/items/1"])

        try Data(#"{"ids": ["\#(UUID().uuidString)"]}"#.utf8).write(to: request)
        #expect(try await post(ui, "/api/export.har", file: request).status == "404")
        try Data(#"{"ids": [1]}"#.utf8).write(to: request)
        let (badStatus, bad) = try await post(ui, "/api/export.har", file: request)
        #expect(badStatus == "400")
        #expect(bad["error"]?.stringValue?.hasPrefix("ids[0]") == true)
    }

    @Test func summariesNameTheRulesThatActedOnce() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        var flow = FlowFixtures.getJSON()
        flow.appliedRules = [
            RuleApplication(name: "Rewrite 'auth'", description: "request header Authorization: Bearer → Token"),
            RuleApplication(name: "Map Remote 'staging'", description: "mapped to http://staging.example.com/users/1"),
            RuleApplication(name: "Rewrite 'auth'", description: "response header added X-Debug: 1"),
        ]
        ui.recorder.record(flow)
        ui.recorder.record(FlowFixtures.getJSON(url: "/untouched"))
        let list = try await ui.json("/api/flows")
        #expect(list["flows"]?[0]?["rules"] == ["Rewrite 'auth'", "Map Remote 'staging'"])
        #expect(list["flows"]?[1]?["rules"] == nil, "untouched exchanges carry no rules member")
        let detail = try await ui.json("/api/flows/\(flow.id.uuidString)")
        #expect(detail["appliedRules"]?[2]?["description"] == "response header added X-Debug: 1")
        #expect(detail["appliedRules"]?[1]?["name"] == "Map Remote 'staging'")
    }
}
