import ArgumentParser
import Foundation
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing
@testable import KagamiCLI
@testable import KagamiHAR

/// Entries Kagami can't read are skipped, each with where and why, and the rest imported;
/// only a file with no archive in it is refused whole.
@Suite struct HARMalformedTests {
    static func chrome() throws -> JSONValue { try JSONValue(parsing: HARTestSupport.fixture("chrome-devtools.har")) }

    static let entryCases: [(path: [String], value: JSONValue?, expected: String)] = [
        (["log", "entries", "2", "request", "headers"], [["name": "a", "value": 5]], "log.entries[2].request.headers[0].value: expected a string, found number"),
        (["log", "entries", "0", "request", "method"], nil, "log.entries[0].request.method: missing; HAR 1.2 requires it"),
        (["log", "entries", "1", "startedDateTime"], "yesterday", "log.entries[1].startedDateTime: expected an ISO 8601 date-time such as 2026-05-28T20:26:40.123Z, found \"yesterday\""),
        (["log", "entries", "1", "response", "content", "text"], "@@not base64@@", "log.entries[1].response.content.text: expected base64 (the encoding says so)"),
        (["log", "entries", "0", "timings", "wait"], "12", "log.entries[0].timings.wait: expected a number, found string"),
        (["log", "entries", "2", "request", "url"], "/relative", "log.entries[2].request.url: expected an absolute URL such as http://host/path, got \"/relative\""),
        (["log", "entries", "1", "request", "headers"], "not a list", "log.entries[1].request.headers: expected an array, found string"),
        (["log", "entries", "0", "response", "status"], "200", "log.entries[0].response.status: expected an integer, found string"),
    ]

    @Test(arguments: 0..<entryCases.count)
    func anUnreadableEntryIsSkippedWithItsJSONPath(index: Int) throws {
        let (path, value, expected) = Self.entryCases[index]
        let archive = Self.setting(try Self.chrome(), path[...], value)
        let result = try HARImport.read(from: archive)
        #expect(result.skipped.map(\.description) == [expected])
        #expect(result.flows.count == 2, "the other entries are read")
    }

    /// What real producers write that HAR 1.2 calls required: still read.
    @Test func membersToolsLeaveOutAreNotRequired() throws {
        var archive = try Self.chrome()
        for path in [["log", "version"], ["log", "entries", "0", "time"], ["log", "entries", "0", "timings"],
                     ["log", "entries", "1", "request", "cookies"], ["log", "entries", "1", "request", "httpVersion"],
                     ["log", "entries", "2", "response", "content", "size"], ["log", "entries", "2", "response", "headers"]] {
            archive = Self.setting(archive, path[...], nil)
        }
        archive = Self.setting(archive, ["log", "creator"], [])
        let result = try HARImport.read(from: archive)
        #expect(result.skipped.isEmpty, "\(result.skipped)")
        #expect(result.flows.count == 3)
        #expect(result.flows[1].request.version == "HTTP/1.1")
    }

    @Test func withoutEntriesThereIsNothingToRead() throws {
        #expect(throws: HARImportError(path: "log.entries", message: "expected an array, found object")) {
            try HARImport.read(from: Self.setting(try Self.chrome(), ["log", "entries"], ["x": 1]))
        }
        #expect(throws: HARImportError(path: "log", message: "missing; HAR 1.2 requires it")) {
            try HARImport.read(from: ["entries": []])
        }
    }

    @Test func brokenJSONGivesLineAndColumn() {
        let text = "{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"entries\": [,]\n  }\n}\n"
        do {
            _ = try HARImport.read(from: Array(text.utf8), file: "bad.har")
            Issue.record("accepted broken JSON")
        } catch {
            #expect(error.file == "bad.har" && error.line == 4 && error.column == 17)
            #expect(error.description.hasPrefix("bad.har: line 4, column 17: not valid JSON"))
        }
    }

    @Test func kagamiImportSkipsWhatItCantReadAndRefusesAFileWithNothingReadable() async throws {
        var archive = try Self.chrome()
        // Two good entries before the bad one.
        archive = Self.setting(archive, ["log", "entries", "2", "timings", "receive"], "soon")
        let harPath = try TemporaryFolder.path("har", "partly.har")
        try Data(archive.serialized().utf8).write(to: URL(fileURLWithPath: harPath))
        let session = try TemporaryFolder.path("har", "partly.sqlite")
        try await ImportCommand.parse([harPath, "--session", session]).run()
        #expect(try await SQLiteFlowStore(path: session).count() == 2)

        var unreadable = archive
        for index in 0..<2 { unreadable = Self.setting(unreadable, ["log", "entries", String(index), "request", "url"], "nowhere") }
        let unreadablePath = try TemporaryFolder.path("har", "unreadable.har")
        try Data(unreadable.serialized().utf8).write(to: URL(fileURLWithPath: unreadablePath))
        let missing = try TemporaryFolder.path("har", "never.sqlite")
        await #expect(throws: ExitCode(2)) {
            try await ImportCommand.parse([unreadablePath, "--session", missing]).run()
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
