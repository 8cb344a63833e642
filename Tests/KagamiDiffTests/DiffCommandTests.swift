import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

/// `kagami diff` as a user runs it: two builds of a real local origin (Tests/Diff/diff_origin.py)
/// recorded through `kagami proxy` by real clients (httpx from Tests/Diff/diff_client.py, and
/// curl), then the built binary compares the sessions: every intended change is found, no id,
/// time or token is. Also HAR files, filters of one session, a shared store, the report formats,
/// --fail-on, and the inputs it refuses with exit status 2.
@Suite(.serialized) struct DiffCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct PythonMissing: Error, CustomStringConvertible {
        var description: String { "\(root.path)/.venv-tests has no Python with httpx: scripts/python-env.sh makes it" }
    }

    static func python() throws -> String {
        let path = root.appendingPathComponent(".venv-tests/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw PythonMissing() }
        return path
    }

    static func run(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.kagami().run(arguments)
    }

    /// diff_origin.py serving one version on a port of its own, until `stop()`.
    final class Origin: Sendable {
        let process: ChildProcess
        let url: String

        init(version: Int) throws {
            let script = DiffCommandTests.root.appendingPathComponent("Tests/Diff/diff_origin.py").path
            process = try ChildProcess(try DiffCommandTests.python(), [script, String(version)], stdin: .pipe, stdout: .pipe)
            url = "http://127.0.0.1:\(try process.announcedPort())"
        }

        func stop() {
            try? process.input?.close()
            process.waitUntilExit()
        }
    }

    /// A session of one build: the origin of that version, the app of that version through a
    /// real `kagami proxy` (httpx for most calls, curl for a user and an order).
    static func record(version: Int, into session: String) async throws {
        let origin = try Origin(version: version)
        defer { origin.stop() }
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        defer { proxy.stop() }
        let proxyURL = "http://127.0.0.1:\(proxy.port)"
        let client = root.appendingPathComponent("Tests/Diff/diff_client.py").path
        let app = try await CommandLineClient(try python()).run([client, String(version), proxyURL, origin.url])
        #expect(app.status == 0, "\(app.stderr)")
        let statuses = try JSONValue(parsing: app.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(statuses.objectValue?.values.allSatisfy { $0 == 200 } == true, "\(statuses)")
        // Every build shows a different user (an id in the path) and places an order.
        let user = try await CommandLineClient.curl.run(["-s", "-x", proxyURL, "-o", "/dev/null", "-w", "%{http_code}", "\(origin.url)/users/\(version == 1 ? 7 : 8001)"])
        #expect(user.stdoutText == "200")
        let order = try await CommandLineClient.curl.run([
            "-s", "-x", proxyURL, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
            "--data", #"{"sku":"A-1","quantity":2}"#, "\(origin.url)/orders",
        ])
        #expect(order.stdoutText == (version == 1 ? "201" : "202"))
    }

    /// The two builds' sessions, recorded once for the suite's tests.
    static let builds: Task<(v1: String, v2: String), any Error> = Task {
        let folder = try TemporaryFolder.make("diff-builds").path
        let v1 = folder + "/v1.sqlite", v2 = folder + "/v2.sqlite"
        try await record(version: 1, into: v1)
        try await record(version: 2, into: v2)
        return (v1, v2)
    }

    /// `kind operation location` of each finding whose kind is not about time.
    static func shapes(_ report: JSONValue) -> Set<String> {
        Set((report["findings"]?.arrayValue ?? []).compactMap { finding -> String? in
            let kind = finding["kind"]?.stringValue ?? ""
            guard !["slower", "faster"].contains(kind) else { return nil }
            return "\(kind) \(finding["operation"]?.stringValue ?? "") \(finding["location"]?.stringValue ?? "")"
        })
    }

    static let intended: Set<String> = [
        "added-operation GET /recommendations ",
        "removed-field GET /users/{userId} response 200 body /email",
        "removed-parameter GET /search request query ?q",
        "added-parameter GET /search request query ?query",
        "status POST /orders ",
    ]

    @Test func twoBuildsDifferInEveryIntendedWayAndNoOther() async throws {
        let (v1, v2) = try await Self.builds.value
        // A generous latency floor: only the 300 ms endpoint can cross it on a busy machine.
        let result = try await Self.run(["diff", v1, v2, "--format", "json", "--latency-minimum", "150"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONValue(parsing: result.stdoutText)
        var found = Self.shapes(report)
        let order = try #require(found.first { $0.hasPrefix("order ") }, "\(found)")
        found.remove(order)
        #expect(order.hasPrefix("order GET /config") || order.hasPrefix("order GET /feed"), "\(order)")
        #expect(found == Self.intended, "unexpected: \(found.subtracting(Self.intended)); missing: \(Self.intended.subtracting(found))")

        let findings = report["findings"]?.arrayValue ?? []
        let slower = try #require(findings.first { $0["kind"] == "slower" })
        #expect(slower["operation"] == "GET /slow", "\(slower)")
        let status = try #require(findings.first { $0["kind"] == "status" })
        #expect(status["before"] == "201 ×1" && status["after"] == "202 ×1")
        // Each finding names exchanges on its sides, by id.
        let removed = try #require(findings.first { $0["kind"] == "removed-field" })
        #expect(removed["beforeExchanges"]?.arrayValue?.count == 1 && removed["afterExchanges"]?.arrayValue?.count == 1)
        let store = try SQLiteFlowStore(path: v1)
        let id = try #require(removed["beforeExchanges"]?[0]?.stringValue.flatMap(UUID.init(uuidString:)))
        #expect(try await store.flow(id: id)?.request.path == "/users/7")
        #expect(report["summary"]?["inBoth"] == 6 && report["summary"]?["added"] == 1 && report["summary"]?["removed"] == 0, "\(report["summary"] ?? nil)")

        // Nothing about ids, times, tokens or the request id header, wherever they are.
        let volatile = ["/id", "/items/*/id", "/generated_at", "/request_id", "/last_login", "/avatar_url", "/next_cursor", "/order_id",
                        "/created_at", "/items/*/published_at", "/results/*/id"]
        for finding in findings {
            let pointer = finding["place"]?["pointer"]?.stringValue ?? ""
            #expect(!volatile.contains(pointer), "\(finding)")
            #expect(finding["place"]?["name"]?.stringValue?.lowercased() != "x-request-id", "\(finding)")
        }
    }

    @Test func textHTMLAndJUnitReportsAndFailOn() async throws {
        let (v1, v2) = try await Self.builds.value
        let text = try await Self.run(["diff", v1, v2, "--latency-minimum", "150"])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("+ GET /recommendations"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("removed-field  response 200 body /email: string → absent"), "\(text.stdoutText)")
        // Not a terminal: no colours.
        #expect(!text.stdoutText.contains("\u{1B}["))
        let coloured = try await Self.run(["diff", v1, v2, "--color", "always"])
        #expect(coloured.stdoutText.contains("\u{1B}[32m+ GET /recommendations"))

        let failing = try await Self.run(["diff", v1, v2, "--fail-on", "removed-operation,removed-field,status"])
        #expect(failing.status == 1, "\(failing.stderr)")
        #expect(failing.stdoutText.contains("✗ removed-field"))
        #expect(failing.stdoutText.contains("Failed: 2 findings of a kind given to --fail-on (status, removed-field)"), "\(failing.stdoutText)")
        let passing = try await Self.run(["diff", v1, v2, "--fail-on", "removed-operation", "--fail-on", "added-header"])
        #expect(passing.status == 0)

        let folder = try TemporaryFolder.make("diff-reports").path
        let junit = try await Self.run(["diff", v1, v2, "--format", "junit", "--fail-on", "removed-field", "--output", folder + "/diff.xml"])
        #expect(junit.status == 1)
        #expect(junit.stderr.contains("written to \(folder)/diff.xml"))
        let xml = try String(contentsOfFile: folder + "/diff.xml", encoding: .utf8)
        #expect(xml.contains(#"<testcase classname="127.0.0.1" name="GET /users/{userId}">"#), "\(xml)")
        #expect(xml.contains(#"<failure type="removed-field""#))
        #expect(xml.contains(#"failures="1""#))
        // One case per operation with findings (a busy machine may add a slower one).
        #expect(xml.components(separatedBy: "<testcase ").count - 1 >= 6, "\(xml)")

        let html = try await Self.run(["diff", v1, v2, "--format", "html"])
        #expect(html.stdoutText.hasPrefix("<!doctype html>"))
        #expect(html.stdoutText.contains("<code>GET /recommendations</code>"))
        #expect(!html.stdoutText.contains("<script"))
    }

    @Test func aHARAndTwoFiltersOfOneSession() async throws {
        let (v1, v2) = try await Self.builds.value
        let har = try TemporaryFolder.path("diff-har", "v1.har")
        let export = try await Self.run(["export", "--session", v1, "--format", "har", "--output", har])
        #expect(export.status == 0, "\(export.stderr)")
        let fromHAR = try await Self.run(["diff", har, v2, "--format", "json", "--latency-minimum", "150"])
        #expect(fromHAR.status == 0, "\(fromHAR.stderr)")
        #expect(Self.shapes(try JSONValue(parsing: fromHAR.stdoutText)).isSuperset(of: Self.intended))

        let parts = try await Self.run(["diff", v2, "--before-filter", "-path:/recommendations", "--format", "json"])
        #expect(parts.status == 0, "\(parts.stderr)")
        let report = try JSONValue(parsing: parts.stdoutText)
        #expect(Self.shapes(report) == ["added-operation GET /recommendations "], "\(Self.shapes(report))")
        #expect(report["before"]?["capture"]?.stringValue == "\(v2) (-path:/recommendations)")

        // A filter works on an archive too, and the same words on both sides narrow both.
        let archived = try await Self.run(["diff", har, v2, "--filter", "path:/search", "--format", "json"])
        #expect(Self.shapes(try JSONValue(parsing: archived.stdoutText)) == [
            "removed-parameter GET /search request query ?q", "added-parameter GET /search request query ?query",
        ])
    }

    @Test func sessionsOfASharedStore() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let before = try await KagamiProcess.recordSession(origin, requests: ["/status/200", "/echo?x=1"])
        let after = try await KagamiProcess.recordSession(origin, requests: ["/status/200", "/bytes/10", "/bytes/20"])
        let result = try await Self.run(["diff", "--store", before.url, before.name, after.name, "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let shapes = Self.shapes(try JSONValue(parsing: result.stdoutText))
        #expect(shapes.contains("removed-operation GET /echo "), "\(shapes)")
        #expect(shapes.contains { $0.hasPrefix("added-operation GET /bytes/{") }, "\(shapes)")
        // --session names the first, as for the other commands.
        let named = try await Self.run(["diff", "--store", before.url, "--session", before.name, after.name])
        #expect(named.status == 0, "\(named.stderr)")
        let missing = try await Self.run(["diff", "--store", before.url, before.name, "no-such-session"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no session named no-such-session"), "\(missing.stderr)")
    }

    @Test func unusableInputExitsTwoWithAClearMessage() async throws {
        let (v1, _) = try await Self.builds.value
        let folder = try TemporaryFolder.make("diff-bad").path

        let text = folder + "/notes.txt"
        try "just some notes\n".write(toFile: text, atomically: true, encoding: .utf8)
        let neither = try await Self.run(["diff", text, v1])
        #expect(neither.status == 2)
        #expect(neither.stderr.contains("is neither a session file (SQLite) nor an HTTP Archive (HAR, JSON)"), "\(neither.stderr)")
        #expect(neither.stdoutText.isEmpty)

        // Another program's SQLite database is refused, and left as it was.
        let database = folder + "/app.sqlite"
        let made = try await CommandLineClient("/usr/bin/python3").run(["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table note (text)'); c.commit()", database])
        #expect(made.status == 0, "\(made.stderr)")
        let foreign = try await Self.run(["diff", database, v1])
        #expect(foreign.status == 2 && foreign.stderr.contains("\(database) is an SQLite database but not a session file"), "\(foreign.stderr)")
        #expect(!SQLiteFlowStore.holdsSession(at: database) && !FileManager.default.fileExists(atPath: database + "-flows"))

        let missing = try await Self.run(["diff", folder + "/nope.sqlite", v1])
        #expect(missing.status == 2 && missing.stderr.contains("no file at \(folder)/nope.sqlite"), "\(missing.stderr)")

        let empty = folder + "/empty.sqlite"
        let store = try SQLiteFlowStore(path: empty)
        try await store.flush()
        let none = try await Self.run(["diff", empty, v1])
        #expect(none.status == 2)
        #expect(none.stderr.contains("\(empty) has no exchanges to compare"), "\(none.stderr)")
        #expect(none.stdoutText.isEmpty)

        let nothing = try await Self.run(["diff", v1, "--before-filter", "host:nowhere.example", "--after-filter", "path:/config"])
        #expect(nothing.status == 2)
        #expect(nothing.stderr.contains("(host:nowhere.example) has no exchanges to compare (none match the filter)"), "\(nothing.stderr)")

        let elsewhere = folder + "/elsewhere.sqlite"
        let other = try SQLiteFlowStore(path: elsewhere)
        other.record(FlowFixtures.api("/config", host: "api.example.com", response: #"{"theme":"light"}"#))
        try await other.flush()
        let apart = try await Self.run(["diff", v1, elsewhere])
        #expect(apart.status == 2)
        #expect(apart.stderr.contains("no operation in common (before: 127.0.0.1; after: api.example.com)"), "\(apart.stderr)")

        let brokenHAR = folder + "/broken.har"
        try #"{"log": {"entries": [}"#.write(toFile: brokenHAR, atomically: true, encoding: .utf8)
        let har = try await Self.run(["diff", brokenHAR, v1])
        #expect(har.status == 2 && har.stderr.contains("broken.har"), "\(har.stderr)")

        // Usage errors are the argument parser's.
        let kind = try await Self.run(["diff", v1, v1, "--fail-on", "removed-feild"])
        #expect(kind.status == 64 && kind.stderr.contains("removed-feild is not a kind of finding"), "\(kind.stderr)")
        let alone = try await Self.run(["diff", v1])
        #expect(alone.status == 64 && alone.stderr.contains("--before-filter"), "\(alone.stderr)")
    }
}
