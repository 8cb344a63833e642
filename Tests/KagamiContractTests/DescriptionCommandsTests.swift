import ArgumentParser
import Foundation
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiJSON
import KagamiTesting
import Testing

/// `kagami lint` and `kagami contract` on real files of both formats.
@Suite struct DescriptionCommandsTests {
    static func write(_ text: String, named name: String) throws -> String {
        let folder = try TemporaryFolder.make("test")
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func lintReportsFileLineColumnAndFailsOnErrors() throws {
        let path = try Self.write("# API\n\n# GET /\n+ Response 200 (application/json)\n    + Attributes (Nope)\n", named: "api.apib")
        let file = try DescriptionFile(path: path)
        #expect(file.diagnostics() == ["\(path):5:5: error: base type 'Nope' is not defined in the document"])
        #expect(throws: ExitCode(1)) { try LintCommand.parse([path]).run() }
    }

    @Test func lintPassesACleanOpenAPIDocument() throws {
        let yaml = "openapi: 3.1.0\ninfo:\n  title: T\n  version: '1'\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n"
        let path = try Self.write(yaml, named: "api.yaml")
        let file = try DescriptionFile(path: path)
        #expect(file.contract.format == .openAPI31)
        #expect(file.contract.actions.map(\.method) == ["GET"])
        try LintCommand.parse([path]).run()
    }

    @Test func formatIsChosenByExtensionThenContent() {
        #expect(DescriptionFile.isOpenAPI(path: "a.yml", text: "") == true)
        #expect(DescriptionFile.isOpenAPI(path: "a.apib", text: "openapi: 3.0.0") == false)
        #expect(DescriptionFile.isOpenAPI(path: "description", text: "{\"openapi\": \"3.1.0\"}") == true)
        #expect(DescriptionFile.isOpenAPI(path: "description", text: "FORMAT: 1A\n# API\n") == false)
    }

    @Test func unreadableFileExitsWithStatusTwo() {
        #expect(throws: ExitCode(2)) { try ContractCommand.parse(["/nonexistent/api.apib", "--json"]).run() }
    }

    /// `kagami contract --json` lists under `diagnostics` what it prints on standard error: a
    /// Swagger 2.0 reading note and a Blueprint warning, each with file, line, column,
    /// severity and message, in the same order as the lines.
    @Test func contractJSONCarriesTheReadingNotesAndWarnings() async throws {
        let kagami = try CommandLineClient.kagami()
        let swaggerText = OpenAPIReaderTests.fixture("uploads-2.0.yaml")
        let swagger = try Self.write(swaggerText, named: "uploads.yaml")
        let tsvLine = try #require(SwaggerReadingTests.line(of: "collectionFormat: tsv", in: swaggerText))
        let blueprint = try Self.write("# API\n\n## Notes [/notes]\n\n### List [GET]\n\n+ Response 200\n\n+ Nonsense here\n", named: "notes.apib")
        let cases: [(path: String, severity: String, line: Int, text: String)] = [
            (swagger, "note", tsvLine, "collectionFormat 'tsv'"), (blueprint, "warning", 9, "ignoring unrecognized block"),
        ]
        for expected in cases {
            let path = expected.path
            let result = try await kagami.run(["contract", path, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try JSONValue(parsing: result.stdoutText)
            let diagnostics = try #require(document["diagnostics"]?.arrayValue, "\(result.stdoutText.prefix(300))")
            let found = try #require(diagnostics.first { $0["message"]?.stringValue?.contains(expected.text) == true }, "\(diagnostics)")
            #expect(found["file"] == .string(path) && found["severity"] == .string(expected.severity), "\(found)")
            #expect(found["line"] == .integer(expected.line) && found["column"]?.intValue ?? 0 >= 1, "\(found)")
            let lines = diagnostics.map { entry in
                "\(entry["file"]?.stringValue ?? ""):\(entry["line"]?.intValue ?? 0):\(entry["column"]?.intValue ?? 0): \(entry["severity"]?.stringValue ?? ""): \(entry["message"]?.stringValue ?? "")"
            }
            #expect(lines == result.stderr.split(separator: "\n").map(String.init), "\(result.stderr)")
        }
    }
}
