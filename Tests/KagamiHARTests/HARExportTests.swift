import Foundation
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing
@testable import KagamiHAR

@Suite struct HARExportTests {
    let archive = HARExport.archive(HARTestSupport.kagamiFlows(), creatorVersion: "0.1.0")

    func entry(_ index: Int) -> JSONValue { archive["log"]?["entries"]?[index] ?? .null }

    @Test func exportIsValidHAR12() throws {
        let schema = try #require(HARTestSupport.schema)
        let result = schema.validate(archive)
        #expect(result.isValid, "\(result.errors.map(\.description))")
        #expect(archive["log"]?["entries"]?.arrayValue?.count == 6)
    }

    /// Written an entry at a time, an archive is the same JSON as the one made whole: for
    /// Kagami's flows, and for Chrome's archive read back (its pages and log fields gathered
    /// from the flows on the way); none, one or many entries.
    @Test(arguments: ["kagami", "chrome-devtools.har", "mitmproxy-11.har", "none"])
    func streamedArchiveIsTheArchive(_ source: String) throws {
        let flows: [Flow]
        switch source {
        case "kagami": flows = HARTestSupport.kagamiFlows()
        case "none": flows = []
        default: flows = try HARTestSupport.importAll(HARTestSupport.fixture(source))
        }
        var writer = HARStreamWriter(creatorVersion: "0.1.0")
        var text = writer.opening
        for flow in flows { text += writer.entry(flow) }
        text += writer.closing()
        let streamed = try JSONValue(parsing: String(decoding: text, as: UTF8.self))
        let whole = HARExport.archive(flows, creatorVersion: "0.1.0")
        #expect(HARTestSupport.differences(whole, streamed) == [])
        #expect(streamed.isJSONEqual(to: whole))
        if source == "chrome-devtools.har" { #expect(streamed["log"]?["pages"]?.arrayValue?.isEmpty == false) }
    }

    @Test func schemaRejectsWhatHARForbids() throws {
        let schema = try #require(HARTestSupport.schema)
        var broken = archive
        broken.replace(at: ["log", "entries"], with: [entry(0).replacing(["timings", "send"], with: -1)])
        #expect(!schema.isValid(broken))
        broken = archive
        broken.replace(at: ["log", "entries"], with: [entry(0).replacing(["request", "headers"], with: [["name": "a"]])])
        #expect(!schema.isValid(broken))
    }

    @Test func timingsAddUpToTime() throws {
        for index in 0..<6 {
            let timings = try #require(entry(index)["timings"]?.objectValue)
            let phases = ["blocked", "dns", "connect", "send", "wait", "receive"].compactMap { timings[$0]?.doubleValue }.filter { $0 >= 0 }
            let time = try #require(entry(index)["time"]?.doubleValue)
            #expect(abs(phases.reduce(0, +) - time) < 0.0001, "entry \(index)")
        }
        let tls = try #require(entry(1)["timings"])
        #expect(tls["blocked"] == -1 && tls["dns"] == -1 && tls["ssl"] == -1)
        #expect(tls["connect"]?.doubleValue == 20.5)
        #expect(tls["send"]?.doubleValue == 0.5)
        #expect(tls["wait"]?.doubleValue == 59.1)
        #expect(tls["receive"]?.doubleValue == 1.1)
        #expect(entry(1)["time"]?.doubleValue == 81.2)
        // Only start and end known: the whole time is the receive phase, not lost.
        #expect(entry(5)["timings"]?["receive"]?.doubleValue == 1)
    }

    @Test func cookiesQueryAndFormParameters() throws {
        let request = try #require(entry(1)["request"])
        #expect(request["cookies"] == [["name": "a", "value": "1"], ["name": "b", "value": "2"]])
        #expect(request["queryString"] == [["name": "next", "value": "/home"], ["name": "x", "value": "a b"]])
        #expect(request["postData"]?["params"] == [["name": "user", "value": "ada"], ["name": "pass", "value": "p&ss w=rd"]])
        #expect(request["postData"]?["mimeType"] == "application/x-www-form-urlencoded")
        let cookies = try #require(entry(1)["response"]?["cookies"])
        #expect(cookies.isJSONEqual(to: [
            ["name": "sid", "value": "xyz", "path": "/", "domain": "example.com", "expires": "2026-10-21T07:28:00.000Z",
             "secure": true, "httpOnly": true, "sameSite": "Lax"],
            ["name": "theme", "value": "dark"],
        ]))
        #expect(entry(1)["response"]?["redirectURL"] == "/home")
        let multipart = try #require(entry(2)["request"]?["postData"]?["params"])
        #expect(multipart == [
            ["name": "title", "value": "Hello \"world\""],
            ["name": "file", "fileName": "a.bin", "contentType": "application/octet-stream", "value": "rawbytes"],
        ])
    }

    @Test func binaryBodiesAreBase64AndSizesAreReal() throws {
        let binary = FlowFixtures.postBinary()
        let content = try #require(entry(3)["response"]?["content"])
        #expect(content["encoding"] == "base64")
        #expect(content["text"]?.stringValue.flatMap { Data(base64Encoded: $0) } == binary.response?.body.data)
        #expect(entry(3)["request"]?["postData"]?["_encoding"] == "base64")
        #expect(entry(3)["request"]?["bodySize"] == 1024)
        let truncated = try #require(entry(2)["response"]?["content"])
        #expect(truncated["size"] == 1_000_000 && truncated["_truncated"] == true && truncated["text"] == "first part")
        #expect(entry(2)["response"]?["bodySize"] == 1_000_000)
        // "GET /users/1 HTTP/1.1\r\n" + fields + "\r\n"
        let getJSON = FlowFixtures.getJSON()
        #expect(entry(0)["request"]?["headersSize"]?.intValue == 23 + getJSON.request.headers.wireSize + 2)
    }

    /// HAR viewers and browsers read `content.text` as the page saw it: a gzip body is exported
    /// decoded, with the bytes as sent kept in `_encodedText`, and imported back byte for byte.
    @Test func encodedBodiesAreExportedDecodedAndImportedAsSent() async throws {
        let json = #"{"items":[1,2,3],"note":"compressed on the wire"}"#
        let gzip = try await CommandLineClient("/bin/gzip").run(["-c", "-n"], stdin: Data(json.utf8))
        #expect(gzip.status == 0 && gzip.stdout.count > 10)
        var flow = FlowFixtures.getJSON(body: "")
        flow.response?.headers.add("Content-Encoding", "gzip")
        flow.response?.body = FlowBody(data: gzip.stdout)
        let archive = HARExport.archive([flow], creatorVersion: "test")
        let content = try #require(archive["log"]?["entries"]?[0]?["response"]?["content"])
        #expect(content["text"] == .string(json))
        #expect(content["encoding"] == nil)
        #expect(content["size"] == .integer(json.utf8.count))
        #expect(content["compression"] == .integer(json.utf8.count - gzip.stdout.count))
        #expect(content["_encodedText"] == .string(gzip.stdout.base64EncodedString()))
        #expect(archive["log"]?["entries"]?[0]?["response"]?["bodySize"] == .integer(gzip.stdout.count))
        let schema = try #require(HARTestSupport.schema)
        #expect(schema.isValid(archive))
        let imported = try HARTestSupport.importAll(Array(archive.serialized().utf8))
        #expect(imported.first?.response?.body.data == gzip.stdout)
        #expect(imported.first?.archiveFields == nil)
    }

    @Test func kagamiFieldsServerAddressTLSAndErrors() throws {
        let tls = entry(1)
        #expect(tls["serverIPAddress"] == "2001:db8::1")
        #expect(tls["connection"] == "50123")
        #expect(tls["_mode"] == "forward")
        #expect(tls["_tls"]?["version"] == "TLSv1.3")
        #expect(tls["_tls"]?["cipherSuite"] == "TLS_AES_128_GCM_SHA256")
        #expect(tls["_contractViolations"]?.isJSONEqual(to: [["kind": "undocumented-status", "severity": "warning", "side": "response", "location": "status", "message": "302 is not documented"]]) == true)
        #expect(entry(5)["_error"]?.isJSONEqual(to: ["kind": "connectionRefused", "message": "connection refused by 127.0.0.1:1"]) == true)
        let tunnel = entry(4)
        #expect(tunnel["request"]?["method"] == "CONNECT")
        #expect(tunnel["request"]?["url"] == "https://secure.example.com:443")
        #expect(tunnel["_mode"] == "tunnel")
        #expect(tunnel["request"]?["bodySize"] == 517 && tunnel["response"]?["bodySize"] == 4096)
        #expect(tunnel["response"]?["content"]?["text"] == nil)
    }

    /// As Chrome DevTools writes a WebSocket: `_resourceType` and `_webSocketMessages` with
    /// type, time in seconds since 1970, opcode, and data (text as is, binary in base64).
    @Test func webSocketEntriesAsChromeWritesThem() throws {
        let flow = FlowFixtures.webSocket()
        let archive = HARExport.archive([FlowFixtures.getJSON(), flow], webSocketMessages: [flow.id: FlowFixtures.webSocketMessages()], creatorVersion: "0.1.0")
        let schema = try #require(HARTestSupport.schema)
        #expect(schema.validate(archive).isValid)
        let plain = try #require(archive["log"]?["entries"]?[0])
        #expect(plain["_resourceType"] == nil && plain["_webSocketMessages"] == nil)
        let entry = try #require(archive["log"]?["entries"]?[1])
        #expect(entry["_resourceType"] == "websocket")
        #expect(entry["response"]?["status"] == 101)
        let messages = try #require(entry["_webSocketMessages"]?.arrayValue)
        #expect(messages.count == 6)
        #expect(messages[0] == ["type": "send", "time": .number(1_780_000_003.25), "opcode": 1, "data": "hello 👋"])
        #expect(messages[1]["type"] == "receive")
        #expect(messages[2]["opcode"] == 2)
        #expect(messages[2]["data"] == .string(Data([0x00, 0xFF, 0x10]).base64EncodedString()))
        #expect(messages[5]["opcode"] == 8)
        #expect(messages.map { $0["time"]?.doubleValue ?? 0 } == [0.25, 0.5, 0.75, 1, 1.25, 2].map { 1_780_000_003 + $0 })
    }
}

extension JSONValue {
    func replacing(_ path: [String], with value: JSONValue) -> JSONValue {
        var copy = self
        copy.replace(at: path[...], with: value)
        return copy
    }
}

extension HARExportTests {
    @Test func repeatOfSurvivesHARExportAndImport() throws {
        var flow = FlowFixtures.getJSON()
        let original = UUID()
        flow.repeatOf = original
        let archive = HARExport.archive([flow], creatorVersion: "0.1.0")
        #expect(archive["log"]?["entries"]?[0]?["_repeatOf"] == .string(original.uuidString))
        let imported = try HARTestSupport.importAll(Array(archive.serialized().utf8))
        #expect(imported.first?.repeatOf == original)
        #expect(imported.first?.archiveFields == nil)
    }

    @Test func theScenarioThatAnsweredAndTheRulesThatActedSurviveExportAndImport() throws {
        var flow = FlowFixtures.getJSON()
        flow.appliedRules = [
            RuleApplication(name: "Rewrite 'auth'", description: "added header X-Token"),
            .scenario("checkout-fails", operation: "POST /checkout", state: "error 503"),
        ]
        let archive = HARExport.archive([flow, FlowFixtures.getJSON()], creatorVersion: "0.1.0")
        let entry = archive["log"]?["entries"]?[0]
        let scenario = entry?["_scenario"]
        #expect(scenario?["name"] == "checkout-fails" && scenario?["operation"] == "POST /checkout" && scenario?["state"] == "error 503")
        let mark = entry?["_appliedRules"]?[1]
        #expect(mark?["name"] == "Scenario 'checkout-fails'" && mark?["description"] == "POST /checkout: error 503")
        // An exchange nothing acted on carries neither.
        #expect(archive["log"]?["entries"]?[1]?["_appliedRules"] == nil && archive["log"]?["entries"]?[1]?["_scenario"] == nil)
        let imported = try HARTestSupport.importAll(Array(archive.serialized().utf8))
        #expect(imported.first?.appliedRules == flow.appliedRules)
        #expect(imported.first?.archiveFields == nil)
    }
}

/// Time held at breakpoints is not network time in HAR either.
@Suite struct HARHeldTimeTests {
    @Test func aRequestHeldAtABreakpointIsBlockedNotConnecting() throws {
        let start = Date(timeIntervalSinceReferenceDate: 1_000)
        let timings = FlowTimings(
            start: start, connected: start + 5.04, requestSent: start + 5.05, firstByte: start + 5.10, end: start + 7.2,
            heldAtRequest: 5.0, heldAtResponse: 2.0)
        let har = HARTimings(timings)
        #expect(har.blocked == 5000)
        #expect(abs(har.connect - 40) < 0.01)
        #expect(abs(har.wait - 50) < 0.01)
        #expect(abs(har.receive - 2100) < 0.01)
        func json(_ timings: HARTimings) -> JSONValue {
            var writer = JSONTextWriter()
            timings.write(to: &writer)
            return (try? JSONValue(parsing: writer.bytes)) ?? .null
        }
        guard case .object(let object) = json(har) else {
            Issue.record("timings are an object")
            return
        }
        #expect(object["_heldAtRequest"] == .integer(5000))
        #expect(object["_heldAtResponse"] == .integer(2000))
        #expect(json(HARTimings(FlowTimings(start: start, connected: start + 1))).objectValue?["_heldAtRequest"] == nil)
    }
}
