// `kagami mock --session FILE` and `--har FILE` as a user runs them: traffic recorded through a
// real `kagami proxy` by curl against a local origin, then answered back by the built binary.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

@Suite(.serialized) struct ReplayCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Kagami's folder for the mock's own session: a temporary one, never the user's.
    static func environment(home: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["KAGAMI_HOME": home]) { _, new in new }
    }

    /// `curl -s` printing the body, then a line with the status.
    static func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
        let result = try await CommandLineClient.curl.run(["-s", "-w", "\n%{http_code}"] + arguments)
        let text = result.stdoutText
        guard let split = text.range(of: "\n", options: .backwards) else { return (0, text) }
        return (Int(text[split.upperBound...]) ?? 0, String(text[..<split.lowerBound]))
    }

    struct Recorded {
        var session: String
        var firstEcho: String
        var secondEcho: String
        var order: String
    }

    /// Four exchanges through `kagami proxy`: one call twice (the origin echoes each request, so
    /// the two answers differ), an order placed with a JSON body, a 404.
    static func record(into folder: String) async throws -> Recorded {
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let session = folder + "/recorded.sqlite"
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        defer { proxy.stop() }
        let via = ["-x", "http://127.0.0.1:\(proxy.port)"]
        let first = try await Self.curl(via + ["-H", "X-Call: first", origin.baseURL + "/echo?b=2&a=1"])
        let second = try await Self.curl(via + ["-H", "X-Call: second", origin.baseURL + "/echo?b=2&a=1"])
        let order = try await Self.curl(via + ["-H", "Content-Type: application/json", "--data", #"{"sku":"A-1","quantity":2}"#, origin.baseURL + "/echo/orders"])
        let missing = try await Self.curl(via + [origin.baseURL + "/status/404"])
        let statuses: [Int] = [first.status, second.status, order.status, missing.status]
        #expect(statuses == [200, 200, 200, 404])
        #expect(first.body.contains("first") && second.body.contains("second"))
        return Recorded(session: session, firstEcho: first.body, secondEcho: second.body, order: order.body)
    }

    @Test func recordedSessionAnswersInRecordedOrderAndLeavesTheRecordingAsItWas() async throws {
        let folder = try TemporaryFolder.make("replay").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorded = try await Self.record(into: folder)

        let mock = try await KagamiProcess.start(["mock", "--port", "0", "--session", recorded.session], environment: Self.environment(home: folder + "/home"))
        let url = "http://127.0.0.1:\(mock.port)"
        #expect(mock.output.contains("Replaying: \(recorded.session) (4 exchanges)"), "\(mock.output)")
        // The query's pairs in another order are the same call; the third call repeats the last answer.
        let replies = [
            try await Self.curl([url + "/echo?a=1&b=2"]), try await Self.curl([url + "/echo?a=1&b=2"]), try await Self.curl([url + "/echo?b=2&a=1"]),
        ]
        #expect(replies.map(\.status) == [200, 200, 200])
        #expect(replies.map(\.body) == [recorded.firstEcho, recorded.secondEcho, recorded.secondEcho])
        // Another body still answers with the recorded order: bodies count only with --match-body.
        let order = try await Self.curl(["-H", "Content-Type: application/json", "--data", #"{"sku":"Z-9"}"#, url + "/echo/orders"])
        #expect(order.status == 200 && order.body == recorded.order)
        let missing = try await Self.curl([url + "/status/404"])
        #expect(missing.status == 404 && missing.body == "status 404\n")

        // Never recorded: a 404 naming the closest recorded requests.
        let unknown = try await Self.curl(["-D", "-", url + "/echo/profile"])
        #expect(unknown.status == 404)
        #expect(unknown.body.contains("application/problem+json"))
        let problem = try JSONValue(parsing: String(unknown.body[(unknown.body.range(of: "\r\n\r\n")?.upperBound ?? unknown.body.startIndex)...]))
        #expect(problem["closestRecorded"] == ["GET /echo?b=2&a=1", "POST /echo/orders", "GET /status/404"])
        mock.stop()

        // The recording stays as recorded; the mock's six exchanges went to a session of their own.
        let kept = try SQLiteFlowStore(path: recorded.session)
        #expect(try await kept.count() == 4)
        await kept.close()
        let sessions = try FileManager.default.contentsOfDirectory(atPath: folder + "/home/sessions").filter { $0.hasSuffix(".sqlite") }
        #expect(sessions.count == 1)
        if let own = sessions.first {
            let store = try SQLiteFlowStore(path: folder + "/home/sessions/" + own)
            let flows = try await store.allFlows()
            #expect(flows.count == 6 && flows.allSatisfy { $0.mode == .mock })
            #expect(flows.first?.response?.headers["X-Kagami-Recorded"] != nil)
            await store.close()
        }
    }

    /// docs/MOCK.md's sequence for CI: an app's UI-test run recorded through the proxy, checked
    /// with `kagami validate`, then answering the next run as the mock. A Python script (the
    /// standard library's urllib, through `http_proxy` the first time) stands in for the app.
    @Test func aUITestRunRecordedValidatedAndReplayedAsTheMock() async throws {
        let folder = try TemporaryFolder.make("ui-test-run").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = Self.environment(home: folder + "/home").merging(["no_proxy": "", "NO_PROXY": ""]) { _, new in new }
        let app = """
            import json, sys, urllib.error, urllib.request
            base = sys.argv[1]
            for number, path in enumerate(["/echo/feed", "/echo/feed", "/status/404"]):
                request = urllib.request.Request(base + path, headers={"X-Call": str(number)})
                try:
                    with urllib.request.urlopen(request) as response:
                        print(json.dumps([response.status, response.read().decode()]))
                except urllib.error.HTTPError as error:
                    print(json.dumps([error.code, error.read().decode()]))
            """
        let python = CommandLineClient("/usr/bin/python3")

        // 1. Recorded through the proxy.
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let session = folder + "/ui-test-run.sqlite"
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session], environment: environment)
        let recorded = try await python.run(
            ["-c", app, origin.baseURL], environment: environment.merging(["http_proxy": "http://127.0.0.1:\(proxy.port)"]) { _, new in new })
        proxy.stop()
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let lines = recorded.stdoutText.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        #expect(lines.map { $0[0] } == [200, 200, 404])
        // The origin echoes each call's own X-Call: the two feeds differ, so their order shows.
        #expect(lines.count == 3 && lines[0][1] != lines[1][1])

        // 2. Checked against the description: JUnit for the CI's report, exit 0 when it holds.
        let description = folder + "/api.yaml"
        try """
            openapi: 3.1.0
            info: {title: Origin, version: "1"}
            paths:
              /echo/feed:
                get:
                  responses:
                    "200":
                      description: the request, echoed
                      content: {application/json: {schema: {type: object, required: [method, uri, headers]}}}
              /status/{code}:
                get:
                  parameters: [{name: code, in: path, required: true, schema: {type: integer}}]
                  responses:
                    "404": {description: not found}
            """.write(toFile: description, atomically: true, encoding: .utf8)
        let kagami = try CommandLineClient.kagami()
        let report = folder + "/contract.xml"
        let validated = try await kagami.run(
            ["validate", "--contract", "\(description)=\(origin.baseURL)", "--session", session, "--format", "junit", "--output", report], environment: environment)
        #expect(validated.status == 0, "\(validated.stdoutText) \(validated.stderr)")
        let junit = try String(contentsOfFile: report, encoding: .utf8)
        #expect(junit.contains("<testsuite") && junit.contains(#"failures="0""#), "\(junit)")

        // 3. The next run answered by the recording: the same statuses and bodies, in order.
        let mock = try await KagamiProcess.start(["mock", "--port", "0", "--session", session], environment: environment)
        defer { mock.stop() }
        let replayed = try await python.run(["-c", app, "http://127.0.0.1:\(mock.port)"], environment: environment)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdoutText == recorded.stdoutText)
    }

    @Test func matchBodyComparesJSONStructurally() async throws {
        let folder = try TemporaryFolder.make("replay-body").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorded = try await Self.record(into: folder)
        let mock = try await KagamiProcess.start(
            ["mock", "--port", "0", "--session", recorded.session, "--match-body"], environment: Self.environment(home: folder + "/home"))
        defer { mock.stop() }
        let url = "http://127.0.0.1:\(mock.port)"
        let same = try await Self.curl(["-H", "Content-Type: application/json", "--data", #"{ "quantity": 2, "sku": "A-1" }"#, url + "/echo/orders"])
        #expect(same.status == 200 && same.body == recorded.order)
        let other = try await Self.curl(["-H", "Content-Type: application/json", "--data", #"{"sku":"A-1","quantity":3}"#, url + "/echo/orders"])
        #expect(other.status == 404)
    }

    @Test func unmatchedRequestGoesToTheFallbackServer() async throws {
        let folder = try TemporaryFolder.make("replay-fallback").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorded = try await Self.record(into: folder)
        let live = try await OriginServer.start()
        defer { Task { try await live.stop() } }
        let mock = try await KagamiProcess.start(
            ["mock", "--port", "0", "--session", recorded.session, "--fallback", live.baseURL], environment: Self.environment(home: folder + "/home"))
        defer { mock.stop() }
        let url = "http://127.0.0.1:\(mock.port)"
        #expect(try await Self.curl([url + "/echo?a=1&b=2"]).body == recorded.firstEcho)
        #expect(live.received.isEmpty)
        let fresh = try await Self.curl(["-H", "X-Call: live", "--data", "hello", url + "/echo/profile?x=1"])
        #expect(fresh.status == 200)
        let echoed = try JSONValue(parsing: fresh.body)
        #expect(echoed["uri"] == "/echo/profile?x=1" && echoed["method"] == "POST" && echoed["bodySize"] == 5)
        #expect(live.received.map(\.uri) == ["/echo/profile?x=1"])
        // The server's own 404 comes back as it is.
        let gone = try await Self.curl([url + "/status/410"])
        #expect(gone.status == 410 && gone.body == "status 410\n")
    }

    @Test func harFromMitmproxyAndChromiumIsAnsweredBack() async throws {
        let folder = try TemporaryFolder.make("replay-har").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixtures = Self.root.appendingPathComponent("Tests/KagamiHARTests/Fixtures").path
        let mitmproxy = try await KagamiProcess.start(
            ["mock", "--port", "0", "--har", fixtures + "/mitmproxy-11.har"], environment: Self.environment(home: folder))
        let url = "http://127.0.0.1:\(mitmproxy.port)"
        let user = try await Self.curl([url + "/users/1?fields=name"])
        #expect(user.status == 200 && user.body == #"{"id": 1, "name": "Ada"}"#)
        // The archive holds the gzip body decoded: it is sent as it is, with no Content-Encoding.
        let gzip = try await Self.curl(["--compressed", url + "/gzip"])
        #expect(gzip.status == 200 && gzip.body == #"{"compressed": true, "items": [1, 2, 3]}"#)
        // An entry that got no response answers nothing.
        #expect(try await Self.curl([url + "/refused"]).status == 404)
        mitmproxy.stop()

        let chrome = try await KagamiProcess.start(
            ["mock", "--port", "0", "--har", fixtures + "/chrome-devtools.har"], environment: Self.environment(home: folder))
        defer { chrome.stop() }
        let cart = try await Self.curl(["http://127.0.0.1:\(chrome.port)/cart?empty=&coupon=SUMMER+24&step=2"])
        #expect(cart.status == 200 && cart.body.hasPrefix("<!doctype html><title>Cart</title>"))
    }

    @Test func recordingWithNoExchangesIsRefusedNamingTheFile() async throws {
        let folder = try TemporaryFolder.make("replay-empty").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let empty = folder + "/empty.sqlite"
        let store = try SQLiteFlowStore(path: empty)
        await store.close()
        let result = try await CommandLineClient.kagami().run(["mock", "--port", "0", "--session", empty], environment: Self.environment(home: folder))
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(empty) holds no recorded exchange"), "\(result.stderr)")
        let nothing = try await CommandLineClient.kagami().run(["mock", "--port", "0"], environment: Self.environment(home: folder))
        #expect(nothing.status != 0 && nothing.stderr.contains("--har FILE"), "\(nothing.stderr)")
    }
}
