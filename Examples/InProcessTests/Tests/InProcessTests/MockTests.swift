import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KagamiKit
import KagamiKitOpenAPI
import NotesClient
import Testing

/// The generated client against an in-process mock of notes.apib: the documented answers, and
/// a 422 for a request the description doesn't allow.
@Suite struct MockTests {
    @Test func everyOperationThroughTheGeneratedClient() async throws {
        try await withKagamiMock(description: Fixtures.notes) { mock in
            let client = Client(serverURL: mock.baseURL.appendingPathComponent("v1"), transport: mock.clientTransport)

            let notes = try await client.listNotes(query: .init(limit: 2)).ok.body.json
            #expect(notes.value.count == 1)

            let note = try await client.createNote(body: .json(.init(title: "Call Bob", status: .open))).created.body.json
            #expect(note.id == 1)
            #expect(note.title == "Buy milk")

            #expect(try await client.getNote(path: .init(id: 1)).ok.body.json.status == .open)
            _ = try await client.deleteNote(path: .init(id: 1)).noContent

            let flows = try await mock.flows(count: 4)
            #expect(flows.map(\.request.method) == ["GET", "POST", "GET", "DELETE"])
            #expect(flows.map { $0.response?.status } == [200, 201, 200, 204])
        }
    }

    @Test func aRequestTheDescriptionForbidsGets422() async throws {
        try await withKagamiMock(description: Fixtures.notes) { mock in
            var request = URLRequest(url: mock.baseURL.appendingPathComponent("v1/notes"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"title": 5, "status": "open"}"#.utf8)
            let (body, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 422)
            #expect(String(decoding: body, as: UTF8.self).contains("title"))
            let flows = try await mock.flows(count: 1)
            #expect(flows[0].response?.status == 422)
        }
    }
}
