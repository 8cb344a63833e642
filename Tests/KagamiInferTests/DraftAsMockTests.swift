import Foundation
@testable import KagamiCLI
import KagamiJSON
import KagamiMock
import KagamiTesting
import Testing

/// A drafted description is a working mock, and the `kagami` binary lists what it skipped on
/// standard error.
@Suite struct DraftAsMockTests {
    @Test(arguments: ["openapi", "apib"])
    func draftedDescriptionServesAsAMock(format: String) async throws {
        let folder = try Traffic.folder()
        let session = try await Traffic.session(Traffic.notes, in: folder)
        let output = folder.appendingPathComponent(format == "openapi" ? "notes.yaml" : "notes.apib").path
        try await InferCommand.parse(["--session", session, "--format", format, "-o", output]).run()
        let mock = try await MockServer.start(path: output, configuration: .init(reloadInterval: nil))
        do {
            try await Self.exercise(mock)
        } catch {
            try? await mock.stop()
            throw error
        }
        try await mock.stop()
    }

    static func exercise(_ mock: MockServer) async throws {
        let note = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-H", "Authorization: Bearer x", "-H", "X-Client-Version: 2.4.1", mock.url + "/api/v1/notes/5"])
        let body = try JSONValue(parsing: note.stdout)
        #expect(body["id"] == 3)
        #expect(body["title"] == "note 3")
        let missing = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Prefer: status=404", "-H", "Authorization: Bearer x", "-H", "X-Client-Version: 2.4.1", mock.url + "/api/v1/notes/5"])
        #expect(missing.stdoutText == "404")
        // The traffic sent a bearer token there, so the draft asks for one.
        let anonymous = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "-H", "X-Client-Version: 2.4.1", mock.url + "/api/v1/notes/5"])
        #expect(anonymous.stdoutText == (mock.contract.format == .apiBlueprint ? "200" : "401"))
        let created = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json", "--data-binary", #"{"title": "x"}"#, mock.url + "/api/v1/notes"])
        #expect(created.stdoutText == "201")
        // The mock checks requests against the draft: a body of the wrong shape is refused.
        let refused = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json", "--data-binary", #"{"title": 5}"#, mock.url + "/api/v1/notes"])
        #expect(refused.stdoutText == "422")
    }

    @Test func theBinaryListsWhatItSkippedOnStandardError() async throws {
        let folder = try Traffic.folder()
        var flows = Traffic.notes
        flows.append(Traffic.flow("GET", "/api/v1/broken", responseBody: #"{"cut": "#))
        let session = try await Traffic.session(flows, in: folder)
        let output = folder.appendingPathComponent("out.yaml").path
        let result = try await CommandLineClient.kagami().run(["infer", "--session", session, "-o", output])
        #expect(result.status == 0)
        #expect(result.stderr.contains("kagami infer: skipped 1 × response bodies labelled application/json that are not valid JSON"), "\(result.stderr)")
        #expect(result.stderr.contains("GET http://127.0.0.1:5000/api/v1/broken"))
        #expect(FileManager.default.fileExists(atPath: output))
    }
}
