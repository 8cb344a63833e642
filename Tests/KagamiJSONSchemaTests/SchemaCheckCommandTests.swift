// Runs the built `kagami` executable the way a user does.
import Foundation
import KagamiJSON
import KagamiTesting
import Testing

struct SchemaCheckCommandTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// The `kagami` binary next to the test bundle in the build products folder.
    func kagami(_ arguments: [String], in directory: URL) throws -> Run {
        let errorsPath = directory.appendingPathComponent("kagami.err").path
        let process = try ChildProcess(try CommandLineClient.kagamiPath(), arguments, directory: directory.path, stdout: .pipe, stderr: .file(errorsPath))
        let output = (try process.output?.readToEnd()) ?? Data()
        let status = process.waitUntilExit()
        let errors = FileManager.default.contents(atPath: errorsPath) ?? Data()
        return Run(status: status, output: String(decoding: output, as: UTF8.self), errors: String(decoding: errors, as: UTF8.self))
    }

    func workspace(_ files: [String: String]) throws -> URL {
        let directory = try TemporaryFolder.make("schema")
        for (name, text) in files {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return directory
    }

    static let files: [String: String] = [
        "order.schema.json": """
            {"type": "object", "required": ["id", "total"],
             "properties": {"id": {"type": "integer"}, "total": {"$ref": "money.json"},
                            "placed": {"type": "string", "format": "date-time"}},
             "additionalProperties": false}
            """,
        "money.json": #"{"type": "string", "pattern": "^[0-9]+\\.[0-9]{2}$"}"#,
        "good.json": #"{"id": 7, "total": "10.00", "placed": "yesterday"}"#,
        "bad.json": #"{"id": "7", "total": "10", "note": 1}"#,
        "orders.jsonl": "{\"id\": 1, \"total\": \"1.00\"}\n\n{\"total\": 3}\n",
        "broken.json": "{\"type\": \"object\",\n  \"required\": [\"id\",]}",
    ]

    @Test func reportsEachViolationAndExitsOne() throws {
        let directory = try workspace(Self.files)
        let run = try kagami(["schema", "check", "--schema", "order.schema.json", "good.json", "bad.json"], in: directory)
        #expect(run.status == 1)
        #expect(run.output.split(separator: "\n") == [
            "good.json: valid",
            "bad.json: /id  /properties/id/type  expected integer, found string",
            #"bad.json: /total  /properties/total/$ref/pattern  string "10" does not match the pattern "^[0-9]+\\.[0-9]{2}$""#,
            #"bad.json: /note  /additionalProperties  property "note" is not allowed (additionalProperties is false)"#,
        ])
    }

    @Test func validInstancesExitZeroAndFormatIsOptIn() throws {
        let directory = try workspace(Self.files)
        let plain = try kagami(["schema", "check", "--schema", "order.schema.json", "good.json"], in: directory)
        #expect(plain.status == 0)
        let strict = try kagami(["schema", "check", "--schema", "order.schema.json", "--assert-format", "good.json"], in: directory)
        #expect(strict.status == 1)
        #expect(strict.output.contains(#"good.json: /placed  /properties/placed/format  "yesterday" is not a valid date-time"#))
    }

    @Test func jsonLinesGetOneLineEach() throws {
        let directory = try workspace(Self.files)
        let run = try kagami(["schema", "check", "--schema", "order.schema.json", "--instances", "orders.jsonl"], in: directory)
        #expect(run.status == 1)
        let lines = run.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first == "valid")
        let errors = try JSONValue(parsing: String(lines[1]))
        #expect(errors.arrayValue?.count == 2)
        #expect(errors[0]?["message"] == "missing required property \"id\"")
        #expect(errors[1]?["instanceLocation"] == "/total")
        #expect(errors[1]?["schemaLocation"] == "/properties/total/$ref/type")
    }

    @Test func brokenSchemaExitsTwoWithPosition() throws {
        let directory = try workspace(Self.files)
        let syntax = try kagami(["schema", "check", "--schema", "broken.json", "good.json"], in: directory)
        #expect(syntax.status == 2)
        #expect(syntax.errors.hasPrefix("broken.json:2:21: "))
        try #"{"properties": {"id": {"minLength": "two"}}}"#.write(
            to: directory.appendingPathComponent("wrong.json"), atomically: true, encoding: .utf8)
        let wrong = try kagami(["schema", "check", "--schema", "wrong.json", "good.json"], in: directory)
        #expect(wrong.status == 2)
        #expect(wrong.errors.contains("/properties/id/minLength: minLength must be a non-negative integer"))
        let draft4 = try kagami(["schema", "check", "--schema", "order.schema.json", "--draft", "4", "bad.json"], in: directory)
        #expect(draft4.status == 1)
    }
}
