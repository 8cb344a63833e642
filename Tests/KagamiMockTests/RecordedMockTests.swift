// A description and a recording served together: what was recorded answers first.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiMock
import KagamiScenarios
import KagamiTesting
import Testing

@Suite struct RecordedMockTests {
    static let description = """
        FORMAT: 1A
        # Notes API
        ## Notes [/notes]
        ### List notes [GET]
        + Response 200 (application/json)

                [{"id": 1, "title": "from the description"}]

        ## Note [/notes/{id}]
        ### Get a note [GET]
        + Parameters
            + id: 1 (number)
        + Response 200 (application/json)

                {"id": 1, "title": "from the description"}
        """

    @Test func recordingsTakePrecedenceOverTheDescriptionsExamples() async throws {
        let recorded = try RecordedTraffic(flows: [
            FlowFixtures.api("/notes", response: #"[{"id":7,"title":"recorded"}]"#),
            FlowFixtures.api("/notes", response: "[]"),
        ], source: "notes.sqlite")
        let server = try await MockServer.start(text: Self.description, configuration: .init(reloadInterval: nil, recorded: recorded))
        defer { Task { try await server.stop() } }

        let first = try await MockClient.curl("GET", server.url + "/notes")
        #expect(first.status == 200 && first.json == [["id": 7, "title": "recorded"]])
        #expect(first.header("X-Kagami-Recorded") != nil)
        #expect(try await MockClient.curl("GET", server.url + "/notes").json == [])
        #expect(try await MockClient.curl("GET", server.url + "/notes").json == [])
        // Not recorded: the description answers, and its docs page is still there.
        let note = try await MockClient.curl("GET", server.url + "/notes/1")
        #expect(note.json == ["id": 1, "title": "from the description"] && note.header("X-Kagami-Recorded") == nil)
        #expect(try await MockClient.curl("GET", server.url + "/__docs").status == 200)
        #expect(try await MockClient.curl("GET", server.url + "/nothing").json?["type"] == "urn:kagami:mock:no-route")
    }

    @Test func recordingAloneHasNoDocsPage() async throws {
        let recorded = try RecordedTraffic(flows: [FlowFixtures.api("/notes", response: "[]")], source: "notes.har")
        let server = try await MockServer.start(recorded: recorded)
        defer { Task { try await server.stop() } }
        let docs = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(docs.status == 404 && docs.json?["type"] == "urn:kagami:mock:not-recorded")
        #expect(docs.json?["closestRecorded"] == ["GET /notes"])
    }
}
