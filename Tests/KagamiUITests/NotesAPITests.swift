import Foundation
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing

/// `/api/notes`: a change made to the proxy is kept in the session as a note, read back,
/// announced on the event stream; a note that is not one is refused naming its field.
@Suite struct NotesAPITests {
    @Test func aNoteIsKeptReadAndAnnounced() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let flow = FlowFixtures.getJSON(url: "/feed")
        ui.recorder.record(flow)
        let listener = Task {
            try await RawConnection.exchange(
                port: ui.port, send: Data("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(ui.port)\r\nAuthorization: Bearer \(ui.server.token)\r\n\r\n".utf8),
                timeout: .seconds(30),
                until: { $0.contains("event: note") && $0.contains("Map Local rule") })
        }
        for _ in 0..<500 where ui.hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(20)) }

        let posted = try await ui.curl([
            "-w", "\n%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", #"{"text": "added a Map Local rule 'feed'", "author": "kagami mcp", "flow": "\#(flow.id.uuidString)"}"#,
            ui.url("/api/notes"),
        ])
        #expect(posted.stdoutText.hasSuffix("\n201"))
        let answer = try JSONValue(parsing: String(posted.stdoutText.dropLast(4)))
        #expect(answer["author"] == "kagami mcp")
        #expect(answer["flow"]?.stringValue == flow.id.uuidString)

        let stream = try await listener.value
        #expect(stream.contains("event: note\ndata: {"))
        #expect(stream.contains(#""text":"added a Map Local rule 'feed'""#))

        _ = try await ui.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data", #"{"text": "put scenario empty-feed in force"}"#, ui.url("/api/notes")])
        let listed = try await ui.json("/api/notes")
        let notes = try #require(listed["notes"]?.arrayValue)
        #expect(notes.map { $0["text"]?.stringValue } == ["added a Map Local rule 'feed'", "put scenario empty-feed in force"])
        #expect(notes.map { $0["author"]?.stringValue } == ["kagami mcp", "admin API"])
        let kept = try await ui.store.notes()
        #expect(kept.map(\.text) == ["added a Map Local rule 'feed'", "put scenario empty-feed in force"])
        #expect(kept.first?.flowID == flow.id)
        #expect(SessionNote(json: notes[0]) == kept[0])
    }

    @Test(arguments: [
        ("not json", "not JSON", nil),
        (#"["text"]"#, "give a JSON object", nil),
        (#"{"author": "me"}"#, "text: give the note's text", "text"),
        (#"{"text": "  "}"#, "text: give the note's text", "text"),
        (#"{"text": "x", "colour": "red"}"#, "no field \"colour\"", "colour"),
        (#"{"text": "x", "author": 7}"#, "author: give who made the change", "author"),
        (#"{"text": "x", "flow": "12"}"#, "flow: 12 is not an exchange id", "flow"),
    ] as [(String, String, String?)])
    func aNoteThatIsNotOneIsRefusedNamingItsField(body: String, message: String, field: String?) async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let result = try await ui.curl(["-w", "\n%{http_code}", "-X", "POST", "-H", "Content-Type: application/json", "--data", body, ui.url("/api/notes")])
        #expect(result.stdoutText.hasSuffix("\n400"))
        let error = try JSONValue(parsing: String(result.stdoutText.dropLast(4)))
        #expect(error["error"]?.stringValue?.contains(message) == true, "\(error)")
        if let field { #expect(error["field"]?.stringValue == field, "\(error)") }
        #expect(try await ui.store.notes() == [])
    }

    @Test func aNoteLongerThanALineIsRefused() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let body = JSONValue.object(["text": .string(String(repeating: "x", count: SessionNote.maximumTextLength + 1))]).serialized()
        let result = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json", "--data", body, ui.url("/api/notes")])
        #expect(result.stdoutText == "413")
    }
}
