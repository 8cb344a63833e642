import AsyncHTTPClient
import Foundation
import KagamiFlow
import KagamiRecording
import KagamiJSON
import KagamiControl
import KagamiProxy
import KagamiRepeat
import KagamiRules
import KagamiStore
import KagamiTesting
@testable import KagamiCLI
import KagamiUI
import NIOCore
import NIOHTTP1
import Testing

/// A proxy with its admin API in one process, as `kagami proxy` runs them, with the testing
/// origin behind it: curl is the app, AsyncHTTPClient is the UI.
struct LiveSetup {
    let origin: OriginServer
    let proxy: ProxyServer
    let ui: UIServer
    let store: SQLiteFlowStore
    let hub: FlowHub
    let breakpoints: Breakpoints
    let proxyPort: Int
    let uiPort: Int
    let directory: URL
    let client: HTTPClient

    static func with(_ body: (LiveSetup) async throws -> Void) async throws {
        let directory = try TemporaryFolder.make("tools")
        let origin = try await OriginServer.start()
        let store = try SQLiteFlowStore(path: directory.appendingPathComponent("session.sqlite").path)
        let hub = FlowHub()
        let recorder = Recording(store: store, hub: hub).chain
        let breakpoints = Breakpoints()
        let proxy = try ProxyServer(options: ProxyOptions(host: "127.0.0.1", port: 0, upstreamAllow: ["loopback"]), sink: recorder, breakpoints: breakpoints)
        let proxyPort = try await proxy.start().port ?? 0
        // Map Local's folder, inside a stand-in for Kagami's own folder as by default.
        let mapLocalFolders = MapLocalFolders(base: directory.appendingPathComponent("home/map-local").path, excluding: [directory.appendingPathComponent("home").path])
        let ui = try UIServer(
            configuration: .init(host: "127.0.0.1", port: 0, proxyAddress: "http://127.0.0.1:\(proxyPort)", sessionPath: "session.sqlite", version: "test"),
            store: store, hub: hub, recorder: recorder,
            liveProxy: LiveProxy(proxy: proxy, repeatRoute: .forwardProxy(host: "127.0.0.1", port: proxyPort)),
            rules: RulesControl(
                current: { proxy.rules.current?.rules ?? RuleSet() },
                replace: { proxy.rules.replace(with: try RulePipeline($0, mapLocalFolders: mapLocalFolders)) },
                mapLocalFolders: mapLocalFolders))
        let uiPort = try await ui.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let setup = LiveSetup(
            origin: origin, proxy: proxy, ui: ui, store: store, hub: hub, breakpoints: breakpoints, proxyPort: proxyPort, uiPort: uiPort,
            directory: directory, client: client)
        do {
            try await body(setup)
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    func stop() async {
        try? await client.shutdown()
        await ui.stop()
        try? await proxy.stop()
        try? await origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// curl through the proxy, as an app would send.
    func curl(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "30", "-x", "http://127.0.0.1:\(proxyPort)"] + arguments)
    }

    /// An admin API call; the status and the body as text.
    func api(_ method: HTTPMethod = .GET, _ path: String, body: String? = nil) async throws -> (status: Int, text: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(uiPort)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(ui.token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), String(buffer: buffer))
    }

    func json(_ method: HTTPMethod = .GET, _ path: String, body: String? = nil) async throws -> JSONValue {
        try JSONValue(parsing: try await api(method, path, body: body).text)
    }

    /// `GET /api/breakpoints/held` once it lists `count`, failing after five seconds.
    func held(count: Int) async throws -> [JSONValue] {
        let list = try await eventually(attempts: 250, every: .milliseconds(20)) {
            let list = try await json(.GET, "/api/breakpoints/held")["held"]?.arrayValue ?? []
            return list.count >= count ? list : nil
        }
        if let list { return list }
        Issue.record("the API never listed \(count) held exchanges")
        return []
    }
}

@Suite("Breakpoints and tools through the admin API")
struct ToolsAPITests {
    @Test func breakpointListIsReadAndReplacedAtRuntime() async throws {
        try await LiveSetup.with { live in
            #expect(try await live.json(.GET, "/api/breakpoints").isJSONEqual(to: ["breakpoints": [], "enabled": true]))
            let replaced = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/echo"},"response":true}],"autoContinue":30}"#)
            #expect(replaced.status == 200)
            // Named after its location, as none was given.
            #expect(live.breakpoints.settings.breakpoints == [Breakpoint(name: "*://*/echo", location: Location(path: "/echo"), request: true, response: true)])
            #expect(live.breakpoints.settings.autoContinueSeconds == 30)
            let read = try await live.json(.GET, "/api/breakpoints")
            #expect(read["breakpoints"]?[0]?["location"]?["path"] == "/echo")
            #expect(read["breakpoints"]?[0]?["response"] == true)
            let refused = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"locaton":{}}]}"#)
            #expect(refused.status == 400)
            #expect(refused.text.contains("breakpoints[0].locaton"))
            #expect(live.breakpoints.settings.breakpoints.count == 1)
        }
    }

    @Test func breakpointNamesAreKeptMadeWhenAbsentAndUnique() async throws {
        try await LiveSetup.with { live in
            _ = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"name":"users","location":{"path":"/users"}},{"location":{"path":"/echo"}}]}"#)
            // What a client sends back after reading keeps every name, the one the proxy made too.
            var document = try await live.json(.GET, "/api/breakpoints")
            #expect(document["breakpoints"]?[0]?["name"] == "users")
            #expect(document["breakpoints"]?[1]?["name"] == "*://*/echo")
            guard case .object(var object) = document, case .array(var list)? = object["breakpoints"] else {
                Issue.record("no breakpoints in \(document)"); return
            }
            list.append(["location": ["path": "/echo"], "response": true])
            object["breakpoints"] = .array(list)
            document = .object(object)
            _ = try await live.api(.PUT, "/api/breakpoints", body: document.serialized())
            #expect(live.breakpoints.settings.breakpoints.map(\.name) == ["users", "*://*/echo", "*://*/echo (2)"])
            let twice = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"name":"a","location":{}},{"name":"a","location":{}}]}"#)
            #expect(twice.status == 400)
            #expect(twice.text.contains("breakpoints[1].name"), "\(twice.text)")
            #expect(live.breakpoints.settings.breakpoints.count == 3)
        }
    }

    @Test func heldRequestIsListedEditedAndExecutedOverHTTP() async throws {
        try await LiveSetup.with { live in
            _ = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/echo"}}]}"#)
            async let answer = live.curl(["--data-binary", "from the app", "-H", "Content-Type: text/plain", "\(live.origin.baseURL)/echo"])
            let held = try #require(try await live.held(count: 1).first)
            #expect(held["phase"] == "request")
            #expect(held["request"]?["method"] == "POST")
            #expect(held["request"]?["url"] == .string("\(live.origin.baseURL)/echo"))
            #expect(held["request"]?["body"] == "from the app")
            #expect(held["request"]?["bodyEncoding"] == "text")
            let id = try #require(held["id"]?.stringValue)

            let badEdit = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: #"{"action":"execute","request":{"headers":[["Bad Name","x"]]}}"#)
            #expect(badEdit.status == 400)
            #expect(badEdit.text.contains("request.headers[0]"))

            let edit = #"{"action":"execute","request":{"url":"\#(live.origin.baseURL)/echo?edited=yes","headers":[["Host","127.0.0.1:\#(live.origin.port)"],["X-From","ui"]],"body":"AAEC/w==","bodyEncoding":"base64"}}"#
            let decided = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: edit)
            #expect(decided.status == 200)
            let echo = try JSONValue(parsing: try await answer.stdoutText)
            #expect(echo["uri"] == "/echo?edited=yes")
            #expect(echo["bodySize"] == 4)
            let received = try #require(live.origin.received.last)
            #expect(received.body == Data([0, 1, 2, 255]))
            #expect(received.headers.map(\.name) == ["Host", "X-From", "Content-Length"])
            #expect(try await live.json(.GET, "/api/breakpoints/held")["held"] == [])

            let again = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: #"{"action":"cancel"}"#)
            #expect(again.status == 404)
        }
    }

    @Test func heldResponseIsEditedAndAbortIsAnErrorOverHTTP() async throws {
        try await LiveSetup.with { live in
            _ = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/status/*"},"request":false,"response":true}]}"#)
            async let edited = live.curl(["-w", " %{http_code}", "\(live.origin.baseURL)/status/201"])
            let held = try #require(try await live.held(count: 1).first)
            #expect(held["phase"] == "response")
            #expect(held["response"]?["status"] == 201)
            #expect(held["response"]?["body"] == "status 201\n")
            let id = try #require(held["id"]?.stringValue)
            let wrongPart = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: #"{"action":"execute","request":{}}"#)
            #expect(wrongPart.status == 400)
            _ = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: #"{"action":"execute","response":{"status":503,"body":"edited in the UI"}}"#)
            #expect(try await edited.stdoutText == "edited in the UI 503")

            async let aborted = live.curl(["-w", " %{http_code}", "\(live.origin.baseURL)/status/200"])
            let second = try #require(try await live.held(count: 1).first?["id"]?.stringValue)
            let decided = try await live.json(.POST, "/api/breakpoints/held/\(second)", body: #"{"action":"abort"}"#)
            #expect(decided["action"] == "abort")
            #expect(try await aborted.stdoutText.hasSuffix(" 502"))
            try await live.store.flush()
            let flows = try await live.store.allFlows()
            #expect(flows.map(\.response?.status) == [503, 502])
            #expect(flows.last?.error?.kind == .aborted)
        }
    }

    @Test func eventStreamAnnouncesHeldAndReleasedExchanges() async throws {
        try await LiveSetup.with { live in
            _ = try await live.api(.PUT, "/api/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/echo"}}]}"#)
            // The stream is read until the release and the flow have come (the time limit only
            // stops a test that would otherwise hang).
            async let stream = RawConnection.exchange(
                port: live.uiPort, send: Data("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(live.uiPort)\r\nAuthorization: Bearer \(live.ui.token)\r\n\r\n".utf8),
                timeout: .seconds(30),
                until: { $0.contains("event: released") && $0.contains("event: flow") })
            try await eventually(every: .milliseconds(20)) { live.hub.subscriberCount > 0 }
            async let answer = live.curl(["\(live.origin.baseURL)/echo"])
            let held = try #require(try await live.held(count: 1).first)
            let id = try #require(held["id"]?.stringValue)
            _ = try await live.api(.POST, "/api/breakpoints/held/\(id)", body: #"{"action":"cancel"}"#)
            _ = try await answer
            let text = try await stream
            let heldAt = try #require(text.range(of: "event: held\ndata: "))
            let releasedAt = try #require(text.range(of: "event: released\ndata: "))
            #expect(heldAt.lowerBound < releasedAt.lowerBound)
            let heldEvent = try JSONValue(parsing: String(text[heldAt.upperBound...].prefix { $0 != "\n" }))
            #expect(heldEvent["id"] == .string(id))
            #expect(heldEvent["request"]?["url"] == .string("\(live.origin.baseURL)/echo"))
            #expect(heldEvent["request"]?["bodySize"] == 0)
            #expect(heldEvent["request"]?["body"] == nil)
            #expect(text.contains("event: flow\ndata: "))
            #expect(text.contains(#""how":"cancel""#))
            #expect(text.contains(#""id":"\#(id)""#))
        }
    }

    @Test func curlEndpointGivesACommandThatReproducesTheRequest() async throws {
        try await LiveSetup.with { live in
            _ = try await live.curl(["-X", "PATCH", "-H", "X-Quote: it's \"quoted\"", "--data-binary", "a'b\"c", "\(live.origin.baseURL)/echo?x=1&y=%20"])
            try await live.store.flush()
            let flow = try #require(try await live.store.allFlows().first)
            let command = try await live.api(.GET, "/api/flows/\(flow.id.uuidString)/curl")
            #expect(command.status == 200)
            #expect(command.text.hasPrefix("curl "))
            let run = try await CommandLineClient("/bin/bash").run(["-c", command.text.trimmingCharacters(in: .newlines) + " -s -x http://127.0.0.1:\(live.proxyPort)"])
            #expect(run.status == 0)
            let first = live.origin.received[0]
            let second = live.origin.received[1]
            #expect(second.method == first.method)
            #expect(second.uri == first.uri)
            #expect(second.body == first.body)
            #expect(second.headers.map { "\($0.name): \($0.value)" } == first.headers.map { "\($0.name): \($0.value)" })
            let missing = try await live.api(.GET, "/api/flows/\(UUID().uuidString)/curl")
            #expect(missing.status == 404)
        }
    }

    @Test func responseBodyEndpointServesTheBodyAsReceived() async throws {
        try await LiveSetup.with { live in
            _ = try await live.curl(["\(live.origin.baseURL)/bytes/300"])
            try await live.store.flush()
            let flow = try #require(try await live.store.allFlows().first)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(live.uiPort)/api/flows/\(flow.id.uuidString)/response/body")
            request.method = .GET
            request.headers.add(name: "Authorization", value: "Bearer \(live.ui.token)")
            let response = try await live.client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(Array(body.readableBytesView) == OriginServer.bytes(300))
        }
    }

    @Test func repeatAdvancedThroughTheAPIStoresEveryRepeatAndSummarises() async throws {
        try await LiveSetup.with { live in
            _ = try await live.curl(["--data-binary", "again", "\(live.origin.baseURL)/echo?r=1"])
            try await live.store.flush()
            let original = try #require(try await live.store.allFlows().first)
            let summary = try await live.json(.POST, "/api/flows/\(original.id.uuidString)/repeat", body: #"{"count":100,"concurrency":8}"#)
            #expect(summary["sent"] == 100)
            #expect(summary["statuses"] == ["200": 100])
            #expect(summary["failed"] == 0)
            let durations = try #require(summary["durationMs"])
            let low = try #require(durations["min"]?.doubleValue)
            let middle = try #require(durations["median"]?.doubleValue)
            let high = try #require(durations["max"]?.doubleValue)
            #expect(low <= middle && middle <= high)
            let repeats = try await live.store.repeats(of: original.id)
            #expect(repeats.count == 100)
            #expect(repeats.allSatisfy { $0.request.target == "/echo?r=1" && $0.request.body.size == 5 && $0.response?.status == 200 })
            #expect(live.origin.received.count == 101)
            let refused = try await live.api(.POST, "/api/flows/\(original.id.uuidString)/repeat", body: #"{"count":1,"concurrency":100}"#)
            #expect(refused.status == 400)
            #expect(refused.text.contains("concurrency must be between 1 and 64"))
        }
    }

    /// Every route that needs the proxy answers its absence the same way: 503.
    @Test func endpointsNeedAProxyInTheProcess() async throws {
        let ui = try await RunningUI.start()
        defer { Task { await ui.stop() } }
        for path in ["/api/breakpoints/held", "/api/rules", "/api/ssl-proxying"] {
            let result = try await ui.curl(["-w", " %{http_code}", ui.url(path)])
            #expect(result.stdoutText.hasSuffix(" 503"), "\(path): \(result.stdoutText)")
            #expect(result.stdoutText.contains("no proxy runs in this process"), "\(path)")
        }
    }
}
