import Foundation
import KagamiFlow
import KagamiRecording
import KagamiJSON
import KagamiStore
import KagamiTesting
import KagamiUI
import Testing

/// A UI server on port 0 over a fresh session file, driven with curl as a script would.
struct RunningUI {
    let server: UIServer
    let store: SQLiteFlowStore
    let hub: FlowHub
    /// What the proxy would record into: the store, then the live views.
    let recorder: RecordingChain
    let port: Int
    let directory: URL

    static func start(host: String = "127.0.0.1", heartbeat: Double = 15, wrongTokenWindow: Duration = .seconds(60)) async throws -> RunningUI {
        let directory = try TemporaryFolder.make("ui")
        let store = try SQLiteFlowStore(path: directory.appendingPathComponent("session.sqlite").path)
        let hub = FlowHub()
        let recorder = Recording(store: store, hub: hub).chain
        let server = try UIServer(
            configuration: .init(
                host: host, port: 0, proxyAddress: "http://127.0.0.1:8888", sessionPath: "session.sqlite", version: "test", heartbeatInterval: heartbeat,
                wrongTokenWindow: wrongTokenWindow),
            store: store, hub: hub, recorder: recorder
        )
        let port = try await server.start()
        return RunningUI(server: server, store: store, hub: hub, recorder: recorder, port: port, directory: directory)
    }

    func stop() async {
        await server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// curl with the UI's token, as a script that read it from the admin token file would send.
    func curl(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await anonymousCurl(["-H", "Authorization: Bearer \(server.token)"] + arguments)
    }

    /// curl without the token.
    func anonymousCurl(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "60"] + arguments)
    }

    func json(_ path: String) async throws -> JSONValue {
        let result = try await curl([url(path)])
        return try JSONValue(parsing: result.stdoutText)
    }
}

@Suite struct UIServerTests {
    @Test func listsFlowsAsSummariesInCaptureOrder() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let json = FlowFixtures.getJSON()
        let refused = FlowFixtures.refused()
        ui.recorder.record(json)
        ui.recorder.record(refused)
        let list = try await ui.json("/api/flows?limit=10")
        #expect(list["total"] == 2)
        guard case .array(let flows)? = list["flows"] else { Issue.record("no flows in \(list)"); return }
        #expect(flows.count == 2)
        #expect(flows[0]["id"] == .string(json.id.uuidString))
        #expect(flows[0]["method"] == "GET")
        #expect(flows[0]["host"] == "api.example.com")
        #expect(flows[0]["path"] == "/users/1")
        #expect(flows[0]["status"] == 200)
        #expect(flows[0]["type"] == "application/json")
        #expect(flows[0]["duration"]?.isJSONEqual(to: 60) == true)
        #expect(flows[1]["error"] == "connection refused by 127.0.0.1:1")
        let first = try await ui.json("/api/flows?limit=1")
        #expect(first["flows"]?[0]?["id"] == .string(json.id.uuidString))
        guard case .string(let next)? = first["next"] else { Issue.record("no next in \(first)"); return }
        let page = try await ui.json("/api/flows?limit=1&after=\(next)")
        #expect(page["flows"]?[0]?["id"] == .string(refused.id.uuidString))
        #expect(page["next"] == .null)
        let newest = try await ui.json("/api/flows?order=newest&filter=host:example%20type:json")
        #expect(newest["flows"]?[0]?["id"] == .string(json.id.uuidString))
        #expect(newest["unapplied"] == ["type:json"])
        let bad = try await ui.curl(["-w", " %{http_code}", ui.url("/api/flows?order=sideways")]).stdoutText
        #expect(bad.hasSuffix(" 400"))
        #expect(bad.contains("order=sideways"))
    }

    @Test func detailHasHeadersAndTimingsButNoBodyBytes() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let flow = FlowFixtures.getJSON()
        ui.recorder.record(flow)
        let detail = try await ui.json("/api/flows/\(flow.id.uuidString)")
        #expect(detail["url"] == "http://api.example.com/users/1")
        #expect(detail["request"]?["headers"]?[2] == ["Cookie", "session=abc; theme=dark"])
        #expect(detail["response"]?["body"]?["size"] == .integer(flow.response?.body.size ?? -1))
        #expect(detail["response"]?["body"]?["data"] == nil)
        let firstByte = ((flow.timings.start.timeIntervalSince1970 + 0.05) * 1000).rounded()
        #expect(detail["timings"]?["firstByte"]?.isJSONEqual(to: .number(firstByte)) == true)
        let missing = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", ui.url("/api/flows/\(UUID().uuidString)")])
        #expect(missing.stdoutText == "404")
    }

    @Test func bodiesAsReceivedAndDecoded() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let text = String(repeating: "{\"kagami\":true}\n", count: 200)
        let gzip = try await CommandLineClient("/usr/bin/gzip").run(["-c"], stdin: Data(text.utf8))
        var flow = FlowFixtures.getJSON()
        flow.response?.headers.add("Content-Encoding", "gzip")
        flow.response?.body = FlowBody(data: gzip.stdout)
        ui.recorder.record(flow)
        let raw = try await ui.curl([ui.url("/api/flows/\(flow.id.uuidString)/response/body")])
        #expect(raw.stdout == gzip.stdout)
        let decoded = try await ui.curl(["-D", "-", ui.url("/api/flows/\(flow.id.uuidString)/response/body?decode=1")])
        #expect(decoded.stdoutText.hasSuffix(text))
        #expect(decoded.stdoutText.lowercased().contains("x-kagami-decoded: gzip"))
        #expect(decoded.stdoutText.lowercased().contains("content-security-policy: sandbox"))

        var brotli = FlowFixtures.getJSON()
        brotli.response?.headers.add("Content-Encoding", "br")
        ui.recorder.record(brotli)
        let undecoded = try await ui.curl(["-D", "-", ui.url("/api/flows/\(brotli.id.uuidString)/response/body?decode=1")])
        #expect(undecoded.stdoutText.lowercased().contains("x-kagami-decode-error: br bodies are shown as received"))
        let request = try await ui.curl([ui.url("/api/flows/\(flow.id.uuidString)/request/body")])
        #expect(request.stdout.isEmpty)
    }

    @Test func eventsStreamEachNewFlow() async throws {
        let ui = try await RunningUI.start(heartbeat: 0.3)
        defer { Task { await ui.stop() } }
        let flow = FlowFixtures.getJSON(url: "/live")
        let id = flow.id.uuidString
        // Read the stream until the flow and a heartbeat have come, however long a busy machine
        // takes to send them (the time limit only stops a test that would otherwise hang).
        let listener = Task {
            try await RawConnection.exchange(
                port: ui.port, send: Data("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(ui.port)\r\nAuthorization: Bearer \(ui.server.token)\r\n\r\n".utf8),
                timeout: .seconds(30),
                until: { $0.contains(id) && $0.contains(": heartbeat") })
        }
        // Wait until the stream is subscribed before recording.
        for _ in 0..<500 where ui.hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(20)) }
        ui.recorder.record(flow)
        let output = try await listener.value
        #expect(output.contains("event: hello"))
        #expect(output.contains("event: flow\ndata: {"))
        #expect(output.contains("\"id\":\"\(id)\""))
        #expect(output.contains(": heartbeat"))
    }

    @Test func clearEmptiesTheSession() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        ui.recorder.record(FlowFixtures.getJSON())
        _ = try await ui.curl(["-X", "DELETE", ui.url("/api/flows")])
        #expect(try await ui.store.count() == 0)
        let list = try await ui.json("/api/flows")
        #expect(list["total"] == 0)
    }

    @Test func servesThePageAndStatus() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let page = try await ui.curl([ui.url("/")])
        #expect(page.stdoutText.contains("<script type=\"module\" src=\"main.js\">"))
        let script = try await ui.curl(["-D", "-", ui.url("/main.js")])
        #expect(script.stdoutText.lowercased().contains("content-type: text/javascript"))
        let status = try await ui.json("/api/status")
        #expect(status["caURL"] == "http://kagami.ssl/")
        #expect(status["proxy"] == "http://127.0.0.1:8888")
        let traversal = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", ui.url("/..%2FPackage.swift")])
        #expect(traversal.stdoutText == "404")
    }

    /// Every error has the same body, whoever answers it: a route, or the router for a path no route has.
    @Test func errorsAreJSONWithTheirMessage() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let noRoute = try await ui.curl(["-w", "\n%{http_code}", ui.url("/api/no/such/route")])
        #expect(noRoute.stdoutText.hasSuffix("\n404"))
        #expect(try JSONValue(parsing: String(noRoute.stdoutText.dropLast(4)))["error"] == "404 Not Found: /api/no/such/route")
        let noProxy = try await ui.curl(["-w", "\n%{http_code}", ui.url("/api/breakpoints")])
        #expect(noProxy.stdoutText.hasSuffix("\n503"))
        #expect(try JSONValue(parsing: String(noProxy.stdoutText.dropLast(4)))["error"]?.stringValue?.hasPrefix("no proxy runs") == true)
    }

    /// The Messages tab's source: a WebSocket's messages in order, text as text, binary in
    /// base64, close code and reason split out; and the HAR export carries them.
    @Test func webSocketMessagesInOrder() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        let flow = FlowFixtures.webSocket()
        ui.recorder.record(flow)
        // The last two sent compressed: 70,000 characters in 85 bytes, and one kept in part.
        let long = WebSocketMessage(
            direction: .receive, time: Date(timeIntervalSince1970: 1_780_000_009), opcode: .text,
            data: Data(String(repeating: "a", count: 70_000).utf8), size: 85, isCompressed: true)
        let cut = WebSocketMessage(
            direction: .receive, time: Date(timeIntervalSince1970: 1_780_000_010), opcode: .text,
            data: Data("a".utf8), size: 90, isTruncated: true, isCompressed: true)
        ui.recorder.record(messages: FlowFixtures.webSocketMessages() + [long, cut], of: flow.id)
        ui.recorder.record(FlowFixtures.getJSON())
        try await ui.store.flush()
        let all = try await ui.json("/api/flows/\(flow.id.uuidString)/messages")
        guard case .array(let messages)? = all["messages"] else { Issue.record("no messages in \(all)"); return }
        #expect(messages.map { $0["type"]?.stringValue ?? "" } == ["send", "receive", "send", "send", "receive", "send", "receive", "receive"])
        #expect(messages[0]["payloadSize"] == nil)
        #expect(messages[6]["size"] == 85 && messages[6]["payloadSize"] == 70_000)
        #expect(messages[7]["payloadSize"] == .null)
        #expect(messages[0]["text"] == "hello 👋")
        #expect(messages[2]["base64"] == .string(Data([0x00, 0xFF, 0x10]).base64EncodedString()))
        #expect(messages[5]["closeCode"] == 1000 && messages[5]["closeReason"] == "bye")
        let page = try await ui.json("/api/flows/\(flow.id.uuidString)/messages?offset=4&limit=1")
        #expect(page["messages"]?.arrayValue?.count == 1)
        #expect(page["messages"]?[0]?["opcode"] == 10)
        let har = try await ui.json("/api/export.har")
        #expect(har["log"]?["entries"]?[0]?["_webSocketMessages"]?.arrayValue?.count == 8)
        #expect(har["log"]?["entries"]?[1]?["_webSocketMessages"] == nil)
        let missing = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", ui.url("/api/flows/\(UUID().uuidString)/messages")])
        #expect(missing.stdoutText == "404")
    }

    /// The gRPC view's source: each side split into its length-prefixed messages, decoded as
    /// Protocol Buffers without a .proto, 64-bit values as strings; 404 for a call that isn't gRPC.
    @Test func grpcMessagesDecodedWithoutAProto() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        // Int64Value(value: -2) as Python's protobuf writes it, then an empty message.
        let payload: [UInt8] = [0x08, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        let body = Data([0, 0, 0, 0, UInt8(payload.count)] + payload + [0, 0, 0, 0, 0])
        var flow = FlowFixtures.getJSON()
        flow.request.method = "POST"
        flow.request.headers = HeaderFields([("content-type", "application/grpc"), ("te", "trailers")])
        flow.request.body = FlowBody(data: Data([0, 0, 0, 0, 4, 0x0a, 0x02, 0x68, 0x69]))
        flow.response?.headers = HeaderFields([("content-type", "application/grpc"), ("grpc-status", "0")])
        flow.response?.body = FlowBody(data: body)
        ui.recorder.record(flow)
        let plain = FlowFixtures.getJSON()
        ui.recorder.record(plain)
        try await ui.store.flush()
        let grpc = try await ui.json("/api/flows/\(flow.id.uuidString)/grpc")
        #expect(grpc["status"]?["name"] == "OK")
        #expect(grpc["request"]?["messages"]?[0]?["fields"]?[0]?["value"] == "hi")
        let first = grpc["response"]?["messages"]?[0]?["fields"]?[0]
        #expect(first?["kind"] == "varint")
        #expect(first?["value"] == "18446744073709551614")
        #expect(first?["int64"] == "-2")
        #expect(grpc["response"]?["messages"]?[1]?["fields"]?.arrayValue == [])
        let notGRPC = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", ui.url("/api/flows/\(plain.id.uuidString)/grpc")])
        #expect(notGRPC.stdoutText == "404")
    }

    @Test func harExportHasEveryExchange() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        ui.recorder.record(FlowFixtures.getJSON())
        ui.recorder.record(FlowFixtures.postBinary())
        let har = try await ui.json("/api/export.har")
        guard case .array(let entries)? = har["log"]?["entries"] else { Issue.record("no entries"); return }
        #expect(entries.count == 2)
    }

    @Test func loopbackRefusesForeignHostNames() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        // Even with the token: a page elsewhere can't point its DNS name at the UI.
        let rebound = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: evil.example", ui.url("/api/status")])
        #expect(rebound.stdoutText == "403")
    }

    @Test(arguments: ["127.0.0.1", "0.0.0.0"])
    func theTokenIsRequiredOnLoopbackToo(host: String) async throws {
        let ui = try await RunningUI.start(host: host)
        defer { Task { await ui.stop() } }
        let token = ui.server.token
        for path in ["/api/status", "/api/flows", "/api/rules", "/"] {
            let refused = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", ui.url(path)])
            #expect(refused.stdoutText == "401", "\(path) without the token")
        }
        let bearer = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", ui.url("/api/status")])
        #expect(bearer.stdoutText == "200")
        let jar = ui.directory.appendingPathComponent("cookies").path
        let first = try await ui.anonymousCurl(["-D", "-", "-o", "/dev/null", "-c", jar, ui.url("/?token=\(token)")])
        #expect(first.stdoutText.hasPrefix("HTTP/1.1 200"))
        #expect(first.stdoutText.lowercased().contains("set-cookie: kagami_token=\(token)"))
        #expect(first.stdoutText.contains("HttpOnly") && first.stdoutText.contains("SameSite=Strict"))
        let withCookie = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", "-b", jar, ui.url("/api/flows")])
        #expect(withCookie.stdoutText == "200")
        let wrong = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", ui.url("/api/flows?token=nope")])
        #expect(wrong.stdoutText == "401")
        // One character changed (a token ending in 0 gets a 1 there, any other a 0).
        let wrongToken = token.dropLast() + (token.hasSuffix("0") ? "1" : "0")
        let wrongBearer = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(wrongToken)", ui.url("/api/flows")])
        #expect(wrongBearer.stdoutText == "401")
    }

    @Test func wrongTokensAreLimitedPerAddressAndTheRightOneStillWorks() async throws {
        // Remembered for an hour: however slowly a busy machine runs thirty curls, they all count.
        let ui = try await RunningUI.start(wrongTokenWindow: .seconds(3600))
        defer { Task { await ui.stop() } }
        var statuses: [String] = []
        for guess in 0..<30 {
            let answer = try await ui.anonymousCurl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer guess\(guess)", ui.url("/api/status")])
            statuses.append(answer.stdoutText)
        }
        #expect(statuses.prefix(20).allSatisfy { $0 == "401" })
        #expect(statuses.suffix(10).allSatisfy { $0 == "429" })
        let limited = try await ui.anonymousCurl(["-w", "\n%{http_code}", ui.url("/api/status")])
        #expect(limited.stdoutText.hasSuffix("429"))
        #expect(limited.stdoutText.contains("wrong tokens from 127.0.0.1"))
        let owner = try await ui.curl(["-o", "/dev/null", "-w", "%{http_code}", ui.url("/api/status")])
        #expect(owner.stdoutText == "200")
    }
}
