import ArgumentParser
import Foundation
@testable import KagamiCLI
import KagamiContract
@testable import KagamiDescription
import KagamiTesting
import Testing

/// `kagami lint` finds what would break the mock or a client, with where it is.
@Suite struct LintTests {
    static func lint(_ text: String, named name: String = "api.apib") throws -> (path: String, lines: [String], hasErrors: Bool) {
        let path = try DescriptionCommandsTests.write(text, named: name)
        let report = LintCommand.report(try DescriptionFile(path: path, checksSchemaExamples: true))
        return (path, report.lines, report.hasErrors)
    }

    @Test func invalidJSONInABodyDeclaredJSONIsAnErrorWhereTheJSONBreaks() throws {
        let text = """
        # API

        ## Notes [/notes]

        ### Create [POST]

        + Request (application/json)

                {
                  "title": "a",
                  "tags": [1, 2,]
                }

        + Response 201

        """
        let result = try Self.lint(text)
        #expect(result.hasErrors)
        // Line 11 of the description, at the `]` after the trailing comma.
        let column = "          \"tags\": [1, 2,".utf8.count + 1
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):11:\(column): error: the body is declared application/json but is not valid JSON") }, "\(result.lines)")
    }

    @Test func headerDeclaredJSONBodyIsCheckedToo() throws {
        let text = "# API\n\n# GET /a\n+ Response 200\n    + Headers\n\n            Content-Type: application/json\n\n    + Body\n\n            {nope}\n"
        let result = try Self.lint(text)
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):11:14: error: the body is declared application/json") }, "\(result.lines)")
    }

    @Test func unknownMSONTypeIsAnError() throws {
        let text = "# API\n\n# POST /a\n+ Request (application/json)\n    + Attributes\n        + id (nmuber)\n+ Response 204\n"
        let result = try Self.lint(text)
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):6:9: error: base type 'nmuber' is not defined") }, "\(result.lines)")
    }

    @Test func unclosedBracketInAPropertyLineIsAnErrorAtTheBracket() throws {
        let text = "# API\n\n# POST /a\n+ Request (application/json)\n    + Attributes\n        + tags (array[string, required)\n+ Response 204\n"
        let result = try Self.lint(text)
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):6:22: error: unclosed '['") }, "\(result.lines)")
    }

    @Test func invalidURITemplateIsTheErrorTheMockRefusesWith() throws {
        let text = "# API\n\n## Note [/notes/{id]\n\n### Get [GET]\n+ Response 204\n"
        let result = try Self.lint(text)
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):3:1: error: invalid URI template in GET /notes/{id") }, "\(result.lines)")
    }

    @Test func unresolvableReferenceIsNamed() throws {
        let yaml = """
        openapi: 3.1.0
        info: {title: T, version: '1'}
        paths:
          /pets:
            get:
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Pett'
        components:
          schemas:
            Pet: {type: object}
        """
        let result = try Self.lint(yaml, named: "api.yaml")
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.contains("error: unresolvable reference '#/components/schemas/Pett'") && $0.hasPrefix("\(result.path):12:") }, "\(result.lines)")
    }

    /// A response header's example its own schema refuses is a warning at the example (the
    /// mock would send it, and the check would then report the mock); an example the schema
    /// accepts, or none, says nothing. `example`, `examples`, a `$ref` to `components/headers`
    /// and Swagger 2.0's `x-example` alike.
    @Test func aHeaderExampleItsSchemaRefusesIsAWarningAtTheExample() throws {
        let yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:
          /items:
            get:
              responses:
                '200':
                  description: ok
                  headers:
                    X-Total:
                      schema: {type: integer, minimum: 0}
                      example: -4
                    X-Page:
                      schema: {type: integer}
                      example: 2
                    X-Sizes:
                      schema: {type: array, items: {type: integer}}
                      examples:
                        two:
                          value: [10, ten]
                    X-Mode:
                      $ref: '#/components/headers/Mode'
                    X-Generated:
                      schema: {type: string, format: uuid}
        components:
          headers:
            Mode:
              schema: {type: string, enum: [soft, hard]}
              example: medium
        """
        let result = try Self.lint(yaml, named: "api.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        let lines = result.lines.map { Int($0.dropFirst(result.path.count + 1).prefix { $0 != ":" }) ?? 0 }
        // X-Total's `example`, the value of X-Sizes's first of `examples`, the components' Mode's `example`.
        #expect(lines == [12, 20, 29], "\(result.lines)")
        #expect(result.lines.allSatisfy { $0.contains(": warning: the example of response header '") }, "\(result.lines)")
        #expect(result.lines.first?.contains("'X-Total' is refused by its schema: ") == true, "\(result.lines)")
        #expect(result.lines.dropFirst().first?.contains("'X-Sizes' is refused by its schema at /1: ") == true, "\(result.lines)")
        #expect(result.lines.last?.contains("'X-Mode' is refused") == true, "\(result.lines)")

        let swagger = """
        swagger: '2.0'
        info: {title: T, version: '1'}
        paths:
          /items:
            get:
              responses:
                '200':
                  description: ok
                  headers:
                    X-Total:
                      type: integer
                      x-example: many
        """
        let legacy = try Self.lint(swagger, named: "swagger.yaml")
        #expect(legacy.lines.count == 1 && legacy.lines[0].hasPrefix("\(legacy.path):12:") && legacy.lines[0].contains("'X-Total' is refused"), "\(legacy.lines)")
    }

    @Test func operationWithoutResponsesIsAnError() throws {
        let yaml = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      responses: {}\n"
        let result = try Self.lint(yaml, named: "api.yaml")
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.contains("error: GET /a has no responses") }, "\(result.lines)")
    }

    @Test func everyProblemOnceSortedByLine() throws {
        let text = "# API\n\n# POST /a\n+ Request (application/json)\n    + Attributes\n        + b (Nope)\n        + a (Nope)\n+ Response 200 (application/json)\n\n        {\n"
        let result = try Self.lint(text)
        let lines = result.lines.map { Int($0.dropFirst(result.path.count + 1).prefix { $0 != ":" }) ?? 0 }
        #expect(lines == lines.sorted(), "\(result.lines)")
        #expect(Set(result.lines).count == result.lines.count, "\(result.lines)")
        #expect(result.lines.filter { $0.contains("'Nope'") }.count == 2, "\(result.lines)")
        #expect(result.lines.contains { $0.contains("not valid JSON") }, "\(result.lines)")
    }

    @Test func cleanFileSaysSoInOneLine() throws {
        let result = try Self.lint("# API\n\n# GET /a\n+ Response 200 (application/json)\n\n        {\"a\": 1}\n")
        #expect(result.lines == ["\(result.path): no problems found"])
        #expect(!result.hasErrors)
    }

    @Test func directoryAndBinaryFilesGetAClearMessage() throws {
        let folder = try TemporaryFolder.make("test")
        do {
            _ = try DescriptionFile(path: folder.path)
            Issue.record("a directory was read")
        } catch {
            #expect(error.description.contains("is a directory"), "\(error)")
        }
        let binary = folder.appendingPathComponent("image.apib")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00]).write(to: binary)
        do {
            _ = try DescriptionFile(path: binary.path)
            Issue.record("a binary file was read")
        } catch {
            #expect(error.description.contains("not a text file (a NUL byte at offset 8)"), "\(error)")
        }
        let latin1 = folder.appendingPathComponent("latin1.apib")
        try Data("# API\n\nCaf".utf8 + [0xE9] + Data("\n".utf8)).write(to: latin1)
        do {
            _ = try DescriptionFile(path: latin1.path)
            Issue.record("a file that is not UTF-8 was read")
        } catch {
            #expect(error.description.contains("it is not UTF-8 text"), "\(error)")
        }
        // A byte order mark is text: kept, as it was.
        let marked = folder.appendingPathComponent("marked.apib")
        try Data([0xEF, 0xBB, 0xBF] + Array("# API\n".utf8)).write(to: marked)
        #expect(try DescriptionFile.text(of: Data([0xEF, 0xBB, 0xBF] + Array("# API\n".utf8)), path: marked.path) == "\u{FEFF}# API\n")
        _ = try DescriptionFile(path: marked.path)
        #expect(throws: ExitCode(2)) { try LintCommand.parse([folder.path]).run() }
    }
}
