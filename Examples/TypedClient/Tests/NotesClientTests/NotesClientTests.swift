// Every operation of notes.apib through the generated client, against `kagami mock notes.apib`
// started on port 0 (the kagami binary: $KAGAMI_BINARY, else the one the repository built).
import Foundation
import NotesClient
import Testing

@Suite struct NotesClientTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A running `kagami mock notes.apib`, and its URL with the description's base path.
    final class Mock: Sendable {
        let process: Process
        let url: URL

        init() throws {
            let binary = ProcessInfo.processInfo.environment["KAGAMI_BINARY"]
                ?? folder.appendingPathComponent("../../.build/debug/kagami").standardizedFileURL.path
            let session = FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(UUID().uuidString).sqlite").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["mock", folder.appendingPathComponent("notes.apib").path, "--port", "0", "--session", session]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // The first line names the address: `… listening on http://127.0.0.1:PORT`.
            var text = ""
            while !text.contains("\n") {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            guard let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                  let url = URL(string: text[range] + "/v1")
            else {
                process.terminate()
                throw MockDidNotStart(output: text)
            }
            self.process = process
            self.url = url
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    struct MockDidNotStart: Error { var output: String }

    @Test func everyOperationThroughTheGeneratedClient() async throws {
        let mock = try Mock()
        defer { mock.stop() }
        let client = Client.notes(at: mock.url)

        let list = try await client.listNotes(query: .init(limit: 2))
        let notes = try list.ok.body.json
        #expect(notes.value.count == 1)

        let created = try await client.createNote(body: .json(.init(title: "Call Bob", status: .open)))
        let note = try created.created.body.json
        #expect(note.id == 1)
        #expect(note.title == "Buy milk")

        let got = try await client.getNote(path: .init(id: 1))
        #expect(try got.ok.body.json.status == .open)

        let deleted = try await client.deleteNote(path: .init(id: 1))
        _ = try deleted.noContent
    }
}
