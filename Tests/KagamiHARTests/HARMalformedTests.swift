import ArgumentParser
import Foundation
import KagamiJSON
import KagamiStore
import Testing
@testable import KagamiCLI
@testable import KagamiHAR

/// Archives Kagami must refuse, saying where the problem is; and refusing imports nothing.
@Suite struct HARMalformedTests {
    static func chrome() throws -> JSONValue { try JSONValue(parsing: HARTestSupport.fixture("chrome-devtools.har")) }

    static let cases: [(path: [String], value: JSONValue?, expected: String)] = [
        (["log", "entries", "2", "request", "headers"], [["name": "a", "value": 5]], "log.entries[2].request.headers[0].value: expected a string, found number"),
        (["log", "entries", "0", "request", "method"], nil, "log.entries[0].request.method: missing; HAR 1.2 requires it"),
        (["log", "entries", "1", "startedDateTime"], "yesterday", "log.entries[1].startedDateTime: expected an ISO 8601 date-time such as 2026-05-28T20:26:40.123Z, found \"yesterday\""),
        (["log", "entries", "1", "response", "content", "text"], "@@not base64@@", "log.entries[1].response.content.text: expected base64 (the encoding says so)"),
        (["log", "entries", "0", "timings", "wait"], "12", "log.entries[0].timings.wait: expected a number, found string"),
        (["log", "entries", "2", "request", "url"], "/relative", "log.entries[2].request.url: expected an absolute URL (scheme://host/path)"),
        (["log", "entries", "1", "request", "cookies"], [["name": "a"]], "log.entries[1].request.cookies[0].value: missing; HAR 1.2 requires it"),
        (["log", "entries", "0", "response", "status"], "200", "log.entries[0].response.status: expected an integer, found string"),
        (["log", "creator"], [], "log.creator: expected an object, found array"),
        (["log", "entries"], ["x": 1], "log.entries: expected an array, found object"),
    ]

    @Test(arguments: 0..<cases.count)
    func refusedWithTheJSONPath(index: Int) throws {
        let (path, value, expected) = Self.cases[index]
        var archive = try Self.chrome()
        archive = Self.setting(archive, path[...], value)
        #expect(throws: HARImportError(path: String(expected.prefix { $0 != ":" }), message: String(expected.drop { $0 != ":" }.dropFirst(2)))) {
            try HARImport.flows(from: archive)
        }
        do {
            _ = try HARImport.flows(from: archive)
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func brokenJSONGivesLineAndColumn() {
        let text = "{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"entries\": [,]\n  }\n}\n"
        do {
            _ = try HARImport.flows(from: Array(text.utf8), file: "bad.har")
            Issue.record("accepted broken JSON")
        } catch {
            #expect(error.file == "bad.har" && error.line == 4 && error.column == 17)
            #expect(error.description.hasPrefix("bad.har: line 4, column 17: not valid JSON"))
        }
    }

    @Test func aRefusedFileImportsNothing() async throws {
        var archive = try Self.chrome()
        // Two good entries before the bad one.
        archive = Self.setting(archive, ["log", "entries", "2", "timings", "receive"], nil)
        let harPath = try HARTestSupport.temporaryPath("bad.har")
        try Data(archive.serialized().utf8).write(to: URL(fileURLWithPath: harPath))
        let session = try HARTestSupport.temporaryPath("untouched.sqlite")
        let store = try SQLiteFlowStore(path: session)
        store.record(HARTestSupport.kagamiFlows()[0])
        try await store.flush()
        await #expect(throws: ExitCode(2)) {
            try await ImportCommand.parse([harPath, "--session", session]).run()
        }
        #expect(try await SQLiteFlowStore(path: session).count() == 1)
        let missing = try HARTestSupport.temporaryPath("never.sqlite")
        await #expect(throws: ExitCode(2)) {
            try await ImportCommand.parse([harPath, "--session", missing]).run()
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// Sets (nil: removes) a member; numeric path parts index arrays.
    static func setting(_ value: JSONValue, _ path: ArraySlice<String>, _ new: JSONValue?) -> JSONValue {
        guard let key = path.first else { return new ?? .null }
        if case .array(var items) = value, let index = Int(key) {
            items[index] = setting(items[index], path.dropFirst(), new)
            return .array(items)
        }
        var object = value.objectValue ?? [:]
        if path.count == 1 {
            if let new { object[key] = new } else { object.removeValue(forKey: key) }
        } else {
            object[key] = setting(object[key] ?? .object([:]), path.dropFirst(), new)
        }
        return .object(object)
    }
}
