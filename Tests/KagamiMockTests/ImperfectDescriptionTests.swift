// Descriptions as they are found: one broken example body is reported by lint, and the mock and
// convert go on with the rest (the body kept as written), through the `kagami` executable.
import Foundation
import KagamiJSON
import KagamiTesting
import Testing

@Suite struct ImperfectDescriptionTests {
    /// Two actions; the second's JSON body has a trailing comma (found at the `]`, line 17).
    static let blueprint = """
    FORMAT: 1A
    # Notes

    ## Note [/notes/{id}]
    ### Get [GET]
    + Response 200 (application/json)

            {"id": 1, "title": "good"}

    ## Notes [/notes]
    ### List [GET]
    + Response 200 (application/json)

            [
              {"id": 1},
              {"id": 2},
            ]

    """

    static func file() throws -> String {
        let folder = try TemporaryFolder.make("imperfect")
        let path = folder.appendingPathComponent("notes.apib").path
        try blueprint.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func lintReportsTheBodyWithItsLine() async throws {
        let path = try Self.file()
        let lint = try await CommandLineClient.kagami().run(["lint", path])
        #expect(lint.status == 1)
        #expect(lint.stdoutText.contains("\(path):17:"), "\(lint.stdoutText)")
        #expect(lint.stdoutText.contains("error: the body is declared application/json but is not valid JSON"))
    }

    @Test func mockServesEveryActionAndTheBrokenBodyAsWritten() async throws {
        let path = try Self.file()
        let log = try TemporaryFolder.make("imperfect-log").appendingPathComponent("stderr.txt").path
        let session = try TemporaryFolder.make("imperfect-session").appendingPathComponent("s.sqlite").path
        let mock = try await KagamiProcess.start(["mock", path, "--port", "0", "--session", session], stderr: .file(log))
        defer { mock.stop() }
        let good = try await MockClient.curl("GET", "http://127.0.0.1:\(mock.port)/notes/1")
        #expect(good.status == 200)
        #expect(good.json == ["id": 1, "title": "good"])
        let broken = try await MockClient.curl("GET", "http://127.0.0.1:\(mock.port)/notes")
        #expect(broken.status == 200)
        #expect(broken.body.contains("{\"id\": 2},\n]"), "\(broken.body)")
        let warnings = try String(contentsOfFile: log, encoding: .utf8)
        #expect(warnings.contains("\(path):17:"), "\(warnings)")
        #expect(warnings.contains("warning: the body is declared application/json but is not valid JSON"))
        #expect(warnings.contains("served as written"))
    }

    @Test func convertKeepsTheBodyAndSaysSo() async throws {
        let path = try Self.file()
        let converted = try await CommandLineClient.kagami().run(["convert", path, "--to", "openapi"])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stderr.contains("\(path):17:"), "\(converted.stderr)")
        #expect(converted.stderr.contains("kept as written"))
        let document = try JSONValue(parsing: converted.stdoutText)
        let example = document["paths"]?["/notes"]?["get"]?["responses"]?["200"]?["content"]?["application/json"]?["example"]
        #expect(example?.stringValue?.contains("{\"id\": 2},") == true, "\(example?.serialized() ?? "none")")
        #expect(document["paths"]?["/notes/{id}"]?["get"] != nil)
    }

    @Test func aDocumentWithNothingToServeIsStillRefused() async throws {
        let folder = try TemporaryFolder.make("imperfect")
        let path = folder.appendingPathComponent("broken.apib").path
        try "# T\n\n# GET /a\n+ Response 200 (application/json)\n    + Attributes (Nope)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let converted = try await CommandLineClient.kagami().run(["convert", path, "--to", "openapi"])
        #expect(converted.status == 1)
        #expect(converted.stderr.contains("base type 'Nope' is not defined"))
    }
}
