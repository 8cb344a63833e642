import ArgumentParser
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing
@testable import KagamiCLI
@testable import KagamiHAR

@Suite struct HARImportTests {
    /// Kagami → HAR → flows → HAR gives the same archive, and the flows themselves come back.
    @Test func kagamiFlowsRoundTrip() throws {
        let original = HARTestSupport.kagamiFlows()
        let first = HARExport.archive(original, creatorVersion: "0.1.0")
        let imported = try HARTestSupport.importAll(Array(first.serialized().utf8))
        let second = HARExport.archive(imported, creatorVersion: "0.1.0")
        #expect(HARTestSupport.differences(first, second) == [])
        for (a, b) in zip(original, imported) {
            #expect(a.id == b.id && a.mode == b.mode && a.clientAddress == b.clientAddress && a.serverAddress == b.serverAddress)
            #expect(a.request == b.request)
            #expect(a.response == b.response)
            #expect(a.tls == b.tls && a.error == b.error && a.violations == b.violations)
            #expect(abs(a.timings.start.timeIntervalSince(b.timings.start)) < 0.001)
            #expect(b.archiveFields == nil, "\(b.archiveFields ?? [])")
        }
        #expect(imported[4].request.target == "secure.example.com:443")
    }

    /// HTTP versions as each writer names them are read as flows name them; an HTTP/2 exchange is
    /// written `HTTP/2`, which mitmproxy's reader (it takes only `HTTP/2` and `http/2.0`) and
    /// Chrome's read as HTTP/2, and comes back as it was.
    @Test func httpVersionsAsEachWriterNamesThem() throws {
        for (written, kept) in [
            ("HTTP/2", "HTTP/2.0"), ("http/2.0", "HTTP/2.0"), ("h2", "HTTP/2.0"), ("HTTP/2.0", "HTTP/2.0"), ("h3", "HTTP/3"),
            ("http/1.1", "HTTP/1.1"), ("HTTP/1.1", "HTTP/1.1"), ("HTTP/1.0", "HTTP/1.0"), ("SPDY/3", "SPDY/3"),
        ] {
            #expect(HARHTTPVersion.read(written) == kept, "\(written)")
        }
        var flow = HARTestSupport.kagamiFlows()[0]
        flow.request.version = "HTTP/2.0"
        flow.response?.version = "HTTP/2.0"
        let archive = HARExport.archive([flow], creatorVersion: "0.1.0")
        #expect(archive["log"]?["entries"]?[0]?["request"]?["httpVersion"] == "HTTP/2")
        #expect(archive["log"]?["entries"]?[0]?["response"]?["httpVersion"] == "HTTP/2")
        let back = try HARTestSupport.importAll(Array(archive.serialized().utf8))
        #expect(back.first?.request.version == "HTTP/2.0" && back.first?.response?.version == "HTTP/2.0")
    }

    /// A WebSocket's messages come back from an archive (Chrome's fields), are not kept twice
    /// as archive fields, and export the same again; a bad message says where.
    @Test func webSocketMessagesRoundTrip() throws {
        let flow = FlowFixtures.webSocket()
        var messages = FlowFixtures.webSocketMessages()
        messages[2].size = 3_000
        messages[2].isTruncated = true
        messages[1].isCompressed = true
        let first = HARExport.archive([flow], webSocketMessages: [flow.id: messages], creatorVersion: "0.1.0")
        let contents = try HARImport.read(from: Array(first.serialized().utf8))
        #expect(contents.skipped.isEmpty)
        #expect(contents.flows.first?.archiveFields == nil, "\(contents.flows.first?.archiveFields ?? [])")
        #expect(contents.webSocketMessages[flow.id] == messages.map { message in
            var message = message
            // Times travel as seconds since 1970 in a JSON number.
            message.time = Date(timeIntervalSince1970: message.time.timeIntervalSince1970)
            return message
        })
        let second = HARExport.archive(contents.flows, webSocketMessages: contents.webSocketMessages, creatorVersion: "0.1.0")
        #expect(HARTestSupport.differences(first, second) == [])
        var renumbered = contents
        renumbered.renumber(0)
        #expect(renumbered.webSocketMessages[renumbered.flows[0].id]?.count == 6)

        var broken = first
        broken.replace(at: ["log", "entries"], with: [first["log"]?["entries"]?[0]?.replacing(["_webSocketMessages"], with: [["type": "sideways", "time": 1, "opcode": 1, "data": ""]]) ?? .null])
        let skipped = try HARImport.read(from: broken)
        #expect(skipped.flows.isEmpty)
        #expect(skipped.skipped.map(\.path) == ["log.entries[0]._webSocketMessages[0].type"])
    }

    /// HAR → session file → HAR through the commands, keeping every field.
    @Test(arguments: ["chrome-devtools.har", "charles.har"])
    func fixtureRoundTripsThroughASession(name: String) async throws {
        let input = try JSONValue(parsing: HARTestSupport.fixture(name))
        let harPath = try TemporaryFolder.path("har", name)
        try HARTestSupport.fixture(name).write(to: URL(fileURLWithPath: harPath))
        let session = try TemporaryFolder.path("har", "session.sqlite")
        try await ImportCommand.parse([harPath, "--session", session]).run()
        let output = try TemporaryFolder.path("har", "out.har")
        try await ExportCommand.parse(["--session", session, "--format", "har", "-o", output]).run()
        let exported = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(HARTestSupport.differences(HARTestSupport.withoutCreator(input), HARTestSupport.withoutCreator(exported)) == [])
        #expect(exported["log"]?["creator"]?["name"] == "Kagami")
    }

    @Test func chromeEntriesMapOntoFlows() throws {
        let flows = try HARTestSupport.importAll(HARTestSupport.fixture("chrome-devtools.har"))
        #expect(flows.count == 3)
        let page = flows[0]
        #expect(page.request.method == "GET" && page.request.scheme == "https" && page.request.host == "shop.example.com" && page.request.port == 443)
        #expect(page.request.target == "/cart?step=2&coupon=SUMMER%2024&empty=")
        #expect(page.request.version == "HTTP/2.0")
        #expect(page.request.headers.count == 8 && page.request.headers["cookie"] == "sid=9f2c; cart=3")
        #expect(page.serverAddress == "[2606:4700:10::6816:2a]:443")
        let pageText = String(decoding: page.response?.body.data ?? Data(), as: UTF8.self)
        #expect(pageText.hasSuffix("42,00 €</p>\n"))
        #expect(page.timings.blocked.map { abs($0 - 0.002196) < 1e-9 } == true)
        #expect(page.timings.ssl.map { abs($0 - 0.021538) < 1e-9 } == true)
        let connectMs = try #require(page.timings.connected).timeIntervalSince(page.timings.start) * 1000
        #expect(abs(connectMs - (2.196 + 0.013 + 44.004)) < 0.001)
        let paths = Set((page.archiveFields ?? []).map { $0.path.joined(separator: ".") })
        // What the flow holds is not duplicated; only what it can't hold is kept aside.
        for mapped in ["request.method", "request.url", "request.headers", "response.status", "response.headers", "response.content.text", "timings.connect"] {
            #expect(!paths.contains(mapped), "\(mapped)")
        }
        #expect(paths.isSuperset(of: ["_initiator", "_priority", "_resourceType", "pageref", "connection", "response._transferSize", "log.pages"]))

        let post = flows[1]
        #expect(String(decoding: post.request.body.data, as: UTF8.self) == #"{"sku":"A-17","quantity":2}"#)
        #expect(post.request.headers["x-empty"] == "")
        #expect(post.response?.body.data == Data(base64Encoded: "iVBORw0KGgoAAAAN"))
        #expect(post.timings.connected == nil)

        let failed = flows[2]
        #expect(failed.response == nil)
        #expect(failed.error?.message == "net::ERR_NAME_NOT_RESOLVED")
    }

    /// An archive mitmdump 11.0.2 wrote (`--set hardump=`) through a loopback origin: a GET with
    /// cookies, a form POST, a gzip answer (mitmproxy writes it decoded) and a refused connection
    /// (`"content": {}` and an `_error`).
    @Test func mitmproxyEntriesMapOntoFlows() throws {
        let flows = try HARTestSupport.importAll(HARTestSupport.fixture("mitmproxy-11.har"))
        #expect(flows.count == 4)
        #expect(flows[0].request.target == "/users/1?fields=name" && flows[0].response?.status == 200)
        #expect(flows[0].response?.headers["Set-Cookie"] == "session=abc; Path=/; HttpOnly")
        #expect(flows[1].request.method == "POST" && String(decoding: flows[1].request.body.data, as: UTF8.self) == "user=ada&password=secret")
        #expect(flows[1].response?.status == 201 && flows[1].response?.reason == "Created")
        #expect(String(decoding: flows[2].response?.body.data ?? Data(), as: UTF8.self) == #"{"compressed": true, "items": [1, 2, 3]}"#)
        let refused = flows[3]
        #expect(refused.request.port == 1)
        #expect(refused.response == nil)
        #expect(refused.error?.message.contains("Connect call failed") == true)
        // Microseconds and a +00:00 offset in startedDateTime.
        #expect(flows[0].timings.start.timeIntervalSince1970 > 1_790_000_000)
    }

    @Test func charlesEntriesMapOntoFlows() throws {
        let flows = try HARTestSupport.importAll(HARTestSupport.fixture("charles.har"))
        #expect(flows.count == 2)
        let login = flows[0]
        #expect(login.request.port == 8080 && login.request.target == "/v1/login")
        // Params without text: the body is the form they describe.
        #expect(String(decoding: login.request.body.data, as: UTF8.self) == "user=ada%40example.com&password=p%26ss%20w%3Drd")
        #expect(login.response?.status == 302 && login.response?.headers["Location"] == "/v1/home")
        #expect(abs(login.timings.start.timeIntervalSince1970 - 1_795_167_667.512) < 0.0005)
        #expect(login.serverAddress == "203.0.113.7:8080")
        let upload = flows[1]
        #expect(upload.request.body.data.count == 240)
        #expect(upload.timings.ssl == 0.028)
    }

    @Test func importIntoAnExistingSessionAddsFlows() async throws {
        let session = try TemporaryFolder.path("har", "existing.sqlite")
        let store = try SQLiteFlowStore(path: session)
        store.record(HARTestSupport.kagamiFlows()[0])
        try await store.flush()
        let harPath = try TemporaryFolder.path("har", "charles.har")
        try HARTestSupport.fixture("charles.har").write(to: URL(fileURLWithPath: harPath))
        try await ImportCommand.parse([harPath, "--session", session]).run()
        #expect(try await SQLiteFlowStore(path: session).count() == 3)
    }

    @Test func exportSelectsFlowsById() async throws {
        let session = try TemporaryFolder.path("har", "select.sqlite")
        let store = try SQLiteFlowStore(path: session)
        let flows = HARTestSupport.kagamiFlows()
        for flow in flows { store.record(flow) }
        try await store.flush()
        let output = try TemporaryFolder.path("har", "some.har")
        try await ExportCommand.parse(["--session", session, "--id", flows[3].id.uuidString, "--id", flows[1].id.uuidString, "-o", output]).run()
        let exported = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(exported["log"]?["entries"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == [flows[3].id.uuidString, flows[1].id.uuidString])
        await #expect(throws: (any Error).self) {
            try await ExportCommand.parse(["--session", session, "--id", UUID().uuidString]).run()
        }
    }

    /// A session larger than a page of the store is exported whole, page after page, into a
    /// file only its owner reads; `--limit` takes the oldest; /dev/null works as a destination.
    @Test func exportReadsTheSessionPageByPage() async throws {
        let session = try TemporaryFolder.path("har", "big.sqlite")
        let store = try SQLiteFlowStore(path: session)
        let flows = (0..<1_234).map { FlowFixtures.getJSON(url: "/items/\($0)", start: Date(timeIntervalSince1970: 1_780_000_000 + Double($0))) }
        for flow in flows { store.record(flow) }
        try await store.flush()
        let output = try TemporaryFolder.path("har", "all.har")
        try await ExportCommand.parse(["--session", session, "-o", output]).run()
        let exported = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(exported["log"]?["entries"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == flows.map(\.id.uuidString))
        let mode = try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)

        try await ExportCommand.parse(["--session", session, "--limit", "501", "-o", output]).run()
        let first = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(first["log"]?["entries"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == flows.prefix(501).map(\.id.uuidString))
        try await ExportCommand.parse(["--session", session, "-o", "/dev/null"]).run()
        // Written to, not replaced by a file of the export.
        let null = try FileManager.default.attributesOfItem(atPath: "/dev/null")
        #expect(null[.type] as? FileAttributeType == .typeCharacterSpecial)
        #expect((null[.posixPermissions] as? NSNumber)?.intValue == 0o666)
        await #expect(throws: (any Error).self) {
            try await ExportCommand.parse(["--session", session, "--limit", "0"]).run()
        }
    }

    /// A long export or import shows how far it has got on a terminal (a pseudo-terminal of
    /// `script` here), and writes nothing of it to a pipe.
    @Test func exportAndImportShowTheirProgressOnATerminal() async throws {
        let session = try TemporaryFolder.path("har", "progress.sqlite")
        let store = try SQLiteFlowStore(path: session)
        for index in 0..<1_234 { store.record(FlowFixtures.getJSON(url: "/items/\(index)")) }
        try await store.flush()
        let kagami = try CommandLineClient.kagamiPath()
        let archive = try TemporaryFolder.path("har", "progress.har")
        let exported = try await CommandLineClient("/usr/bin/script").run(["-qec", "\(kagami) export --session \(session) -o \(archive)", "/dev/null"])
        #expect(exported.status == 0, "\(exported.stdoutText)")
        #expect(exported.stdoutText.contains("Exporting \(session) [########------------] 40% 500 of 1234"), "\(exported.stdoutText)")
        #expect(exported.stdoutText.contains("\u{1B}[K"), "the line is cleared at the end")
        let imported = try await CommandLineClient("/usr/bin/script").run(["-qec", "\(kagami) import \(archive) --session \(session)-copy", "/dev/null"])
        #expect(imported.stdoutText.contains("Importing \(archive): 1 exchanges…"), "\(imported.stdoutText)")
        #expect(imported.stdoutText.contains("Imported 1234 exchanges"), "\(imported.stdoutText)")
        let piped = try await CommandLineClient.kagami().run(["export", "--session", session, "-o", archive])
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
        #expect(ExchangeCountDisplay.text("Exporting s", count: 3, total: nil) == "Exporting s: 3 exchanges…")
        #expect(ExchangeCountDisplay.text("Exporting s", count: 10, total: 10) == "Exporting s [####################] 100% 10 of 10")
    }

    /// An archive Kagami exported (entries first, then the log's pages) imports whole: the
    /// pages travel on its first flow and export again.
    @Test func pagesAfterTheEntriesAreKept() async throws {
        let harPath = try TemporaryFolder.path("har", "chrome.har")
        try HARTestSupport.fixture("chrome-devtools.har").write(to: URL(fileURLWithPath: harPath))
        let first = try TemporaryFolder.path("har", "first.sqlite")
        try await ImportCommand.parse([harPath, "--session", first]).run()
        let exported = try TemporaryFolder.path("har", "exported.har")
        try await ExportCommand.parse(["--session", first, "-o", exported]).run()
        let text = try String(contentsOfFile: exported, encoding: .utf8)
        let entries = try #require(text.range(of: "\"entries\""))
        let pages = try #require(text.range(of: "\"pages\""))
        #expect(entries.lowerBound < pages.lowerBound)

        let second = try TemporaryFolder.path("har", "second.sqlite")
        try await ImportCommand.parse([exported, "--session", second]).run()
        let again = try TemporaryFolder.path("har", "again.har")
        try await ExportCommand.parse(["--session", second, "-o", again]).run()
        let a = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: exported)))
        let b = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: again)))
        #expect(HARTestSupport.differences(a, b) == [])
        #expect(b["log"]?["pages"]?.arrayValue?.isEmpty == false)
    }

    /// JSON broken partway (a file cut short) keeps the entries read before the break.
    @Test func jsonBrokenPartwayKeepsTheEntriesBeforeIt() async throws {
        let flows = HARTestSupport.kagamiFlows()
        let text = HARExport.archive(flows, creatorVersion: "0.1.0").serialized()
        let secondEntry = try #require(text.range(of: "\"startedDateTime\"", range: text.index(after: text.range(of: "\"startedDateTime\"")!.upperBound)..<text.endIndex))
        let harPath = try TemporaryFolder.path("har", "cut.har")
        try Data(text[..<text.index(secondEntry.lowerBound, offsetBy: 30)].utf8).write(to: URL(fileURLWithPath: harPath))
        let session = try TemporaryFolder.path("har", "cut.sqlite")
        await #expect(throws: ExitCode(2)) {
            try await ImportCommand.parse([harPath, "--session", session]).run()
        }
        #expect(try await SQLiteFlowStore(path: session).allFlows().map(\.id) == [flows[0].id])
    }
}
