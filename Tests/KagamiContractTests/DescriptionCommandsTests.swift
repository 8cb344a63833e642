import ArgumentParser
import Foundation
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
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
}
