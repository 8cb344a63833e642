import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

/// `kagami validate` run as a user runs it (the built binary, a child process): exit codes,
/// the three formats, `--fail-on`, a HAR exported by a browser, and unreadable input.
@Suite struct ValidateCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func run(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.kagami().run(arguments)
    }

    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "kagami-validate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A session holding `flows`.
    static func session(_ flows: [Flow]) async throws -> String {
        let path = try folder() + "/session.sqlite"
        let store = try SQLiteFlowStore(path: path)
        for flow in flows { store.record(flow) }
        try await store.flush()
        return path
    }

    static let contract = "\(ContractCheckTests.fixture("notes.apib"))=\(ContractCheckTests.base)"

    static let conformant = [
        ContractCheckTests.flow("GET", "/v1/notes/1", status: 200, body: #"{"id":1,"title":"Buy milk"}"#),
        ContractCheckTests.flow("GET", "/v1/notes", status: 200, body: #"[{"id":1,"title":"Buy milk"}]"#),
    ]
    static let wrongType = ContractCheckTests.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)
    static let undocumented = ContractCheckTests.flow("GET", "/v1/nope", status: 200, body: "{}")

    @Test func conformantTrafficPassesWithCoverage() async throws {
        let session = try await Self.session(Self.conformant)
        let result = try await Self.run(["validate", "--contract", Self.contract, "--session", session])
        #expect(result.status == 0, "\(result.stdoutText)\n\(result.stderr)")
        let text = result.stdoutText
        #expect(text.contains("GET /notes/{id} \"Retrieve a Note\"  \(ContractCheckTests.fixture("notes.apib")):13  1 exchange"))
        #expect(text.contains("DELETE /notes/{id} \"Delete a Note\""))
        #expect(text.contains("not exercised"))
        #expect(text.contains("Coverage: 2/4 operations, 2/5 documented statuses"))
        #expect(text.contains("passed"))
    }

    @Test func violationsFailInEveryFormat() async throws {
        let wrongType = Self.wrongType
        let session = try await Self.session(Self.conformant + [wrongType])
        let text = try await Self.run(["validate", "--contract", Self.contract, "--session", session])
        #expect(text.status == 1)
        #expect(text.stdoutText.contains("\(ContractCheckTests.fixture("notes.apib")):13: error: response body/id: expected number, found string [type] (expected number; actual string \"three\";"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("flow \(wrongType.id.uuidString)"))

        let json = try await Self.run(["validate", "--contract", Self.contract, "--session", session, "--format", "json"])
        #expect(json.status == 1)
        let report = try JSONValue(parsing: json.stdoutText)
        let violation = try #require(report["violations"]?[0])
        #expect(violation["flowId"]?.stringValue == wrongType.id.uuidString)
        #expect(violation["method"] == "GET")
        #expect(violation["url"] == "http://127.0.0.1:5000/v1/notes/3")
        #expect(violation["operation"]?["name"] == "Retrieve a Note")
        #expect(violation["operation"]?["template"] == "/notes/{id}")
        #expect(violation["side"] == "response")
        #expect(violation["location"] == "body")
        #expect(violation["instancePointer"] == "/id")
        #expect(violation["schemaPointer"]?.stringValue?.hasSuffix("/properties/id/type") == true)
        #expect(violation["keyword"] == "type")
        #expect(violation["expected"]?.stringValue?.contains("number") == true)
        #expect(violation["actual"] == #"string "three""#)
        #expect(violation["message"]?.stringValue?.isEmpty == false)
        #expect(violation["severity"] == "error")
        #expect(violation["descriptionLine"] == 13)
        #expect(report["coverage"]?[0]?["operations"]?["seen"] == 2)
        #expect(report["summary"]?["failed"] == true)

        let output = try Self.folder() + "/report.xml"
        let junit = try await Self.run(["validate", "--contract", Self.contract, "--session", session, "--format", "junit", "--output", output])
        #expect(junit.status == 1)
        let parsed = try await Self.readJUnit(output)
        #expect(parsed["tests"] == 5)
        #expect(parsed["failures"] == 1)
        let cases = try #require(parsed["suites"]?[0]?["cases"]?.arrayValue)
        let failing = try #require(cases.first { $0["name"] == "GET /notes/{id} (Retrieve a Note)" })
        #expect(failing["results"]?[0]?["kind"] == "Failure")
        #expect(failing["results"]?[0]?["type"] == "schema")
        let notExercised = try #require(cases.first { $0["name"] == "DELETE /notes/{id} (Delete a Note)" })
        #expect(notExercised["results"]?[0]?["kind"] == "Skipped")
    }

    @Test func undocumentedExchangesFailOnlyWhenAsked() async throws {
        let session = try await Self.session(Self.conformant + [Self.undocumented])
        let lenient = try await Self.run(["validate", "--contract", Self.contract, "--session", session])
        #expect(lenient.status == 0, "\(lenient.stdoutText)")
        #expect(lenient.stdoutText.contains("notes.apib: warning: request path: no operation of the description matches GET /nope"))
        let strict = try await Self.run(["validate", "--contract", Self.contract, "--session", session, "--fail-on", "undocumented"])
        #expect(strict.status == 1)
        let warnings = try await Self.run(["validate", "--contract", Self.contract, "--session", session, "--fail-on", "warnings"])
        #expect(warnings.status == 1)
    }

    @Test func aHARExportedByABrowserIsChecked() async throws {
        let har = ContractCheckTests.fixture("chrome-notes.har")
        let contract = "\(ContractCheckTests.fixture("notes.yaml"))=\(ContractCheckTests.base)"
        let result = try await Self.run(["validate", "--contract", contract, "--har", har, "--format", "json", "--fail-on", "undocumented"])
        #expect(result.status == 1, "\(result.stderr)")
        let report = try JSONValue(parsing: result.stdoutText)
        let violations = try #require(report["violations"]?.arrayValue)
        #expect(violations.count == 2)
        #expect(violations.contains { $0["url"] == "http://127.0.0.1:5000/v1/notes/3" && $0["instancePointer"] == "/id" && $0["operation"]?["name"] == "getNote" })
        #expect(violations.contains { $0["url"] == "http://127.0.0.1:5000/v1/nope?from=menu" && $0["severity"] == "warning" && $0["operation"] == .null })
        #expect(report["summary"]?["checked"] == 3)
    }

    @Test func unreadableInputExitsTwoWithTheReason() async throws {
        let missing = try await Self.run(["validate", "--contract", Self.contract, "--session", "/nonexistent/session.sqlite"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no session file at /nonexistent/session.sqlite"))

        let folder = try Self.folder()
        let brokenHAR = folder + "/broken.har"
        try #"{"log": {"entries": [}"#.write(toFile: brokenHAR, atomically: true, encoding: .utf8)
        let har = try await Self.run(["validate", "--contract", Self.contract, "--har", brokenHAR])
        #expect(har.status == 2)
        #expect(har.stderr.contains("broken.har"))

        // Lenient reading skips entries it can't use; with none left, nothing can be checked.
        let noEntries = folder + "/entries.har"
        try #"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"nope","request":{}}]}}"#
            .write(toFile: noEntries, atomically: true, encoding: .utf8)
        let unusable = try await Self.run(["validate", "--contract", Self.contract, "--har", noEntries])
        #expect(unusable.status == 2)
        #expect(unusable.stderr.contains("log.entries[0].startedDateTime"))
        #expect(unusable.stderr.contains("no entry of \(noEntries) could be read"))

        let brokenDescription = folder + "/broken.apib"
        try "# API\n\n# GET /\n+ Response 200 (application/json)\n    + Attributes (Nope)\n".write(toFile: brokenDescription, atomically: true, encoding: .utf8)
        let session = try await Self.session(Self.conformant)
        let description = try await Self.run(["validate", "--contract", brokenDescription, "--session", session])
        #expect(description.status == 2)
        #expect(description.stderr.contains("\(brokenDescription):5:5: error:"))
    }

    @Test func theProxyRefusesToStartWithABrokenDescription() async throws {
        let folder = try Self.folder()
        let broken = folder + "/broken.yaml"
        try "openapi: 3.1.0\ninfo:\n  title: T\n  version: '1'\npaths:\n  /a:\n    get:\n      responses: [\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let result = try await Self.run([
            "proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--upstream-allow", "loopback", "--session", folder + "/s.sqlite", "--contract", broken,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(broken):"), "\(result.stderr)")
        #expect(result.stderr.contains("error:"))
    }

    /// The JUnit file as junitparser (PyPI) reads it, from the venv scripts/test.sh prepares.
    static func readJUnit(_ path: String) async throws -> JSONValue {
        let python = root.appendingPathComponent(".venv-tests/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw JUnitReaderMissing(python: python)
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("check_junit.py").path
        let result = try await CommandLineClient(python).run([script, path])
        guard result.status == 0 else { throw JUnitReaderMissing(python: python + ": " + result.stderr) }
        return try JSONValue(parsing: result.stdoutText)
    }

    struct JUnitReaderMissing: Error, CustomStringConvertible {
        var python: String
        var description: String { "junitparser is not installed (\(python)); scripts/test.sh creates .venv-tests with it" }
    }
}
