// Scenarios as a user runs them: `kagami proxy --scenarios` and `kagami mock --scenarios` with
// curl against a local origin, switched live with `kagami scenario`.
import Foundation
import KagamiJSON
import KagamiTesting
import Testing

@Suite(.serialized) struct ScenarioCommandTests {
    static let scenarios = """
        # what the app's screens must handle
        scenarios:
          - name: broken
            states:
              - operation: GET /echo/feed
                state: empty
              - operation: GET /echo/profile
                state: error
                status: 503
                body: '{"message": "maintenance"}'
              - operation: GET /echo/gone
                state: offline
              - operation: GET /echo/silent
                state: offline
                offline: timeout
              - operation: GET /echo/down
                state: error
                status: 503
              - operation: GET /bytes/{size}
                state: offline
                offline: reset-mid-body
          - name: slow
            states:
              - operation: GET /echo/feed
                state: loading
                seconds: 0.5
              - operation: GET /bytes/{size}
                state: slow
                profile: {downloadKbps: 64, uploadKbps: 0, latencyMs: 200}
        """

    static let description = """
            openapi: 3.1.0
            info: {title: Feed, version: "1"}
            paths:
              /echo/feed:
                get:
                  responses:
                    "200":
                      description: the feed
                      content:
                        application/json:
                          example: {"items": [{"id": 1}], "next": "b"}
              /echo/profile:
                get:
                  responses:
                    "200": {description: a profile, content: {application/json: {example: {"name": "Ada"}}}}
              /echo/gone:
                get:
                  responses:
                    "200": {description: ok}
              /echo/silent:
                get:
                  responses:
                    "200": {description: ok}
              /echo/down:
                get:
                  responses:
                    "200": {description: ok}
                    "503": {description: maintenance, content: {application/json: {example: {"retryAfter": 60}}}}
              /bytes/{size}:
                get:
                  parameters: [{name: size, in: path, required: true, schema: {type: integer}}]
                  responses:
                    "200": {description: bytes, content: {text/plain: {example: \(String(repeating: "k", count: 8000))}}}
            """

    static func environment(home: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["KAGAMI_HOME": home]) { _, new in new }
    }

    /// curl's exit status, the status line's code and the body.
    static func curl(_ arguments: [String]) async throws -> (exit: Int32, status: Int, body: String) {
        let result = try await CommandLineClient.curl.run(["-s", "-w", "\n%{http_code}"] + arguments)
        let text = result.stdoutText
        guard let split = text.range(of: "\n", options: .backwards) else { return (result.status, 0, text) }
        return (result.status, Int(text[split.upperBound...]) ?? 0, String(text[..<split.lowerBound]))
    }

    /// With `--contract`, an error state without a body of its own answers the error the
    /// description documents for the operation, as the mock does; elsewhere a problem document.
    @Test func proxyErrorStatesAnswerTheDocumentedError() async throws {
        let folder = try TemporaryFolder.make("scenario-documented").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try Self.scenarios.write(toFile: file, atomically: true, encoding: .utf8)
        let description = folder + "/api.yaml"
        try Self.description.write(toFile: description, atomically: true, encoding: .utf8)
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", folder + "/s.sqlite", "--contract", description,
             "--scenarios", file, "--scenario", "broken"],
            environment: Self.environment(home: folder + "/home"))
        defer { proxy.stop() }
        let via = ["-x", "http://127.0.0.1:\(proxy.port)"]
        let down = try await Self.curl(via + ["-D", "-", origin.baseURL + "/echo/down"])
        #expect(down.status == 503)
        #expect(down.body.lowercased().contains("content-type: application/json"), "\(down.body)")
        let body = try JSONValue(parsing: String(down.body[(down.body.range(of: "\r\n\r\n")?.upperBound ?? down.body.startIndex)...]))
        #expect(body == ["retryAfter": 60])
        // Its own body still wins.
        let profile = try await Self.curl(via + [origin.baseURL + "/echo/profile"])
        #expect(profile.status == 503 && profile.body == #"{"message": "maintenance"}"#)
    }

    @Test func proxyPutsOperationsInTheirStatesAndSwitchesLive() async throws {
        let folder = try TemporaryFolder.make("scenario-proxy").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try Self.scenarios.write(toFile: file, atomically: true, encoding: .utf8)
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let environment = Self.environment(home: folder + "/home")
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", folder + "/s.sqlite", "--scenarios", file, "--scenario", "broken"],
            environment: environment)
        defer { proxy.stop() }
        #expect(proxy.output.contains("Scenario: broken (scenarios.yaml: broken, slow)"), "\(proxy.output)")
        let via = ["-x", "http://127.0.0.1:\(proxy.port)"]

        // The origin's echo lists the request's headers: emptied, the rest of the object stays.
        let feed = try await Self.curl(via + [origin.baseURL + "/echo/feed"])
        #expect(feed.status == 200)
        let echoed = try JSONValue(parsing: feed.body)
        #expect(echoed["headers"] == [] && echoed["uri"] == "/echo/feed")
        let profile = try await Self.curl(via + [origin.baseURL + "/echo/profile"])
        #expect(profile.status == 503 && profile.body == #"{"message": "maintenance"}"#)
        // Offline: the connection reset before any answer (curl: 56, "Recv failure").
        let gone = try await Self.curl(via + [origin.baseURL + "/echo/gone"])
        #expect(gone.exit == 56 && gone.status == 0)
        // Offline as a timeout: nothing comes until curl's own limit (28, "Operation timed out").
        let silent = try await Self.curl(via + ["--max-time", "1", origin.baseURL + "/echo/silent"])
        #expect(silent.exit == 28 && silent.status == 0)
        // Reset mid-body: the head and half the body arrive, then the reset.
        let cut = try await Self.curl(via + ["-D", "-", origin.baseURL + "/bytes/4000"])
        #expect(cut.exit == 56 || cut.exit == 18, "curl exited \(cut.exit)")
        #expect(cut.body.hasPrefix("HTTP/1.1 200 "))
        // Another operation is as-is.
        #expect(try await Self.curl(via + [origin.baseURL + "/echo/other"]).status == 200)

        // Switched from the command line, with the installation's admin token.
        let kagami = try CommandLineClient.kagami()
        let admin = ["--proxy", "http://127.0.0.1:\(proxy.uiPort ?? 0)"]
        let listing = try await kagami.run(["scenario", "list"] + admin, environment: environment)
        #expect(listing.status == 0)
        #expect(listing.stdoutText.contains("* broken\n    GET /echo/feed: empty\n"), "\(listing.stdoutText)")
        let unknown = try await kagami.run(["scenario", "use", "missing"] + admin, environment: environment)
        #expect(unknown.status == 1 && unknown.stderr.contains(#"no scenario named "missing" (the file has "broken", "slow")"#), "\(unknown.stderr)")
        #expect(try await Self.curl(via + [origin.baseURL + "/echo/profile"]).status == 503)
        #expect(try await kagami.run(["scenario", "use", "slow"] + admin, environment: environment).status == 0)
        let started = ContinuousClock.now
        let slow = try await Self.curl(via + [origin.baseURL + "/echo/feed"])
        #expect(ContinuousClock.now - started >= .milliseconds(500))
        let slowBody = try JSONValue(parsing: slow.body)
        #expect(slow.status == 200 && slowBody["headers"] != [])
        #expect(try await Self.curl(via + [origin.baseURL + "/echo/profile"]).status == 200)
        // Slow: 8000 bytes at 64 kbps (8000 bytes a second) after 200 ms, whole.
        let throttledStart = ContinuousClock.now
        let throttled = try await CommandLineClient.curl.run(via + ["-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", origin.baseURL + "/bytes/8000"])
        #expect(ContinuousClock.now - throttledStart >= .milliseconds(1100))
        #expect(throttled.stdoutText == "200 8000")

        // A broken file doesn't load: the scenario in force stays, the error says where.
        try Self.scenarios.replacingOccurrences(of: "state: loading", with: "state: lodaing").write(toFile: file, atomically: true, encoding: .utf8)
        let reload = try await kagami.run(["scenario", "reload"] + admin, environment: environment)
        #expect(reload.status == 1 && reload.stderr.contains(#"scenarios.yaml:25:9: scenarios[1].states[0].state: unknown state "lodaing""#), "\(reload.stderr)")
        #expect(try await kagami.run(["scenario", "off"] + admin, environment: environment).status == 0)
        let api = try await CommandLineClient.curl.run(proxy.authorization + ["-s", "\(proxy.api)/scenarios"])
        #expect(try JSONValue(parsing: api.stdoutText)["active"] == .null)
        // Without the token the admin API refuses, as for every other endpoint.
        #expect(try await Self.curl(["-X", "PUT", "-H", "Content-Type: application/json", "--data", #"{"active":"broken"}"#, "\(proxy.api)/scenarios/active"]).status == 401)

        // Every exchange the scenario touched is marked in the session's rows.
        let rows = try await CommandLineClient.curl.run(proxy.authorization + ["-s", "\(proxy.api)/flows"])
        #expect(rows.stdoutText.contains("Scenario 'broken'"), "\(rows.stdoutText.prefix(400))")
    }

    @Test func mockAnswersInTheScenariosStates() async throws {
        let folder = try TemporaryFolder.make("scenario-mock").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try Self.scenarios.write(toFile: file, atomically: true, encoding: .utf8)
        let description = folder + "/api.yaml"
        try Self.description.write(toFile: description, atomically: true, encoding: .utf8)
        let mock = try await KagamiProcess.start(
            ["mock", description, "--port", "0", "--session", folder + "/m.sqlite", "--scenarios", file, "--scenario", "broken"],
            environment: Self.environment(home: folder + "/home"))
        defer { mock.stop() }
        let url = "http://127.0.0.1:\(mock.port)"
        let feed = try await Self.curl([url + "/echo/feed"])
        let mockFeed = try JSONValue(parsing: feed.body)
        #expect(feed.status == 200 && mockFeed == ["items": [], "next": "b"])
        let profile = try await Self.curl([url + "/echo/profile"])
        #expect(profile.status == 503 && profile.body == #"{"message": "maintenance"}"#)
        let gone = try await Self.curl([url + "/echo/gone"])
        #expect(gone.exit == 56 && gone.status == 0)
        let silent = try await Self.curl(["--max-time", "1", url + "/echo/silent"])
        #expect(silent.exit == 28 && silent.status == 0)
    }

    /// An empty state shaped by the description: a documented `204` answers for an operation
    /// that has one; else the JSON answer emptied as its schema says (arrays down to their
    /// `minItems`, a page's count at 0 and its next link null, a required list given as `[]`), by
    /// the mock from its example and by the proxy (`--contract`) from the server's answer.
    @Test func emptyStatesAnswerAsTheDescriptionShapesThem() async throws {
        let folder = try TemporaryFolder.make("scenario-empty").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try """
            scenarios:
              - name: empty
                states:
                  - {operation: GET /echo/page, state: empty}
                  - {operation: GET /echo/inbox, state: empty}
                  - {operation: GET /echo/plain, state: empty}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let description = folder + "/api.yaml"
        try """
            openapi: 3.0.3
            info: {title: Pages, version: "1"}
            paths:
              /echo/page:
                get:
                  responses:
                    "200":
                      description: a page
                      content:
                        application/json:
                          schema: {$ref: "#/components/schemas/Page"}
                          example: {"items": [{"id": 1}, {"id": 2}], "total": 2, "next": "c2", "pinned": [{"id": 9}, {"id": 8}], "owner": {"tags": ["a"]}}
              /echo/inbox:
                get:
                  responses:
                    "200": {description: messages, content: {application/json: {schema: {type: array, items: {type: object}}, example: [{"id": 1}]}}}
                    "204": {description: no messages}
              /echo/plain:
                get:
                  responses:
                    "200": {description: a list, content: {application/json: {example: {"rows": [1, 2], "total": 2}}}}
            components:
              schemas:
                Page:
                  type: object
                  required: [items, headers]
                  properties:
                    items: {type: array, items: {type: object}}
                    total: {type: integer}
                    next: {type: string, nullable: true}
                    pinned: {type: array, minItems: 1, items: {type: object}}
                    headers: {type: array, minItems: 1, items: {type: array}}
                    owner: {type: object, properties: {tags: {type: array, items: {type: string}}}}
            """.write(toFile: description, atomically: true, encoding: .utf8)
        let environment = Self.environment(home: folder + "/home")

        let mock = try await KagamiProcess.start(
            ["mock", description, "--port", "0", "--session", folder + "/m.sqlite", "--scenarios", file, "--scenario", "empty"],
            environment: environment)
        defer { mock.stop() }
        let url = "http://127.0.0.1:\(mock.port)"
        let page = try await Self.curl([url + "/echo/page"])
        #expect(page.status == 200)
        #expect(try JSONValue(parsing: page.body) == ["items": [], "next": nil, "owner": ["tags": []], "pinned": [["id": 9]], "total": 0], "\(page.body)")
        let inbox = try await Self.curl([url + "/echo/inbox"])
        #expect(inbox.status == 204 && inbox.body.isEmpty, "\(inbox)")
        // No schema: the lists emptied, the rest as it is.
        let plain = try await Self.curl([url + "/echo/plain"])
        #expect(try JSONValue(parsing: plain.body) == ["rows": [], "total": 2], "\(plain.body)")

        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", folder + "/s.sqlite",
             "--contract", description + "=" + origin.baseURL, "--scenarios", file, "--scenario", "empty"],
            environment: environment)
        defer { proxy.stop() }
        let via = ["-x", "http://127.0.0.1:\(proxy.port)"]
        // The origin's echo: its header list down to the one the schema asks at least, and the
        // required list it lacks given empty.
        let echoed = try await Self.curl(via + ["-H", "X-One: 1", "-H", "X-Two: 2", origin.baseURL + "/echo/page"])
        #expect(echoed.status == 200)
        let emptied = try JSONValue(parsing: echoed.body)
        #expect(emptied["headers"]?.arrayValue?.count == 1, "\(echoed.body)")
        #expect(emptied["items"] == [] && emptied["uri"] == "/echo/page", "\(echoed.body)")
        let proxiedInbox = try await Self.curl(via + [origin.baseURL + "/echo/inbox"])
        #expect(proxiedInbox.status == 204 && proxiedInbox.body.isEmpty, "\(proxiedInbox)")
    }

    /// The admin API's port from the mock's banner (`Admin API: http://127.0.0.1:PORT …`).
    static func adminPort(_ output: String) -> Int? {
        guard let range = output.range(of: #"Admin API: http://127\.0\.0\.1:\d+"#, options: .regularExpression) else { return nil }
        return Int(output[range].split(separator: ":").last ?? "")
    }

    @Test func runningMockIsSwitchedFromTheCommandLine() async throws {
        let folder = try TemporaryFolder.make("scenario-mock-admin").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try Self.scenarios.write(toFile: file, atomically: true, encoding: .utf8)
        let description = folder + "/api.yaml"
        try Self.description.write(toFile: description, atomically: true, encoding: .utf8)
        let environment = Self.environment(home: folder + "/home")
        // No scenario in force at start: the description's answers.
        let mock = try await KagamiProcess.start(
            ["mock", description, "--port", "0", "--session", folder + "/m.sqlite", "--scenarios", file], environment: environment)
        defer { mock.stop() }
        let adminPort = try #require(Self.adminPort(mock.output), "\(mock.output)")
        #expect(adminPort != mock.port)
        let url = "http://127.0.0.1:\(mock.port)"
        let kagami = try CommandLineClient.kagami()
        let admin = ["--mock", "http://127.0.0.1:\(adminPort)"]

        let listing = try await kagami.run(["scenario", "list"] + admin, environment: environment)
        #expect(listing.status == 0 && listing.stdoutText.contains("  broken\n    GET /echo/feed: empty\n"), "\(listing.stdoutText) \(listing.stderr)")
        #expect(listing.stdoutText.contains("(no scenario in force)"))

        // One client connection kept open across the switch (Python's http.client, keep-alive):
        // the first answer as described, then the scenario switched by `kagami scenario use`,
        // then the same connection's next request in the error state.
        let script = """
            import http.client, json, subprocess, sys
            connection = http.client.HTTPConnection("127.0.0.1", \(mock.port))
            def get(path):
                connection.request("GET", path)
                response = connection.getresponse()
                return response.status, response.read().decode()
            print(json.dumps(get("/echo/profile")))
            switched = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            print(json.dumps([switched.returncode, switched.stdout]))
            print(json.dumps(get("/echo/profile")))
            print(json.dumps(get("/echo/feed")))
            """
        let run = try await CommandLineClient("/usr/bin/python3").run(
            ["-c", script, try CommandLineClient.kagamiPath(), "scenario", "use", "broken"] + admin, environment: environment)
        let lines = run.stdoutText.split(separator: "\n").map { try? JSONValue(parsing: String($0)) }
        #expect(run.status == 0 && lines.count == 4, "\(run.stdoutText) \(run.stderr)")
        guard lines.count == 4 else { return }
        #expect(lines[0]?[0] == 200 && (try? JSONValue(parsing: lines[0]?[1]?.stringValue ?? "")) == ["name": "Ada"], "\(run.stdoutText)")
        #expect(lines[1] == [0, "Scenario broken in force\n"])
        #expect(lines[2] == [503, #"{"message": "maintenance"}"#])
        #expect(lines[3]?[0] == 200 && (try? JSONValue(parsing: lines[3]?[1]?.stringValue ?? "")) == ["items": [], "next": "b"])

        #expect(try await kagami.run(["scenario", "off"] + admin, environment: environment).status == 0)
        #expect(try await Self.curl([url + "/echo/profile"]).status == 200)
        let unknown = try await kagami.run(["scenario", "use", "missing"] + admin, environment: environment)
        #expect(unknown.status == 1 && unknown.stderr.contains(#"no scenario named "missing""#), "\(unknown.stderr)")

        // The admin API's rules: the token, loopback names, no cross-site change.
        let active = "http://127.0.0.1:\(adminPort)/api/scenarios/active"
        let put = ["-X", "PUT", "-H", "Content-Type: application/json", "--data", #"{"active":"broken"}"#]
        #expect(try await Self.curl(put + [active]).status == 401)
        let token = try #require(try String(contentsOfFile: folder + "/home/admin-token", encoding: .utf8).split(separator: "\n").first)
        let bearer = ["-H", "Authorization: Bearer \(token)"]
        #expect(try await Self.curl(put + bearer + ["-H", "Sec-Fetch-Site: cross-site", active]).status == 403)
        #expect(try await Self.curl(put + bearer + ["-H", "Host: mock.example", active]).status == 403)
        #expect(try await Self.curl(["-X", "PUT", "-H", "Content-Type: text/plain", "--data", #"{"active":"broken"}"#] + bearer + [active]).status == 403)
        #expect(try await Self.curl([url + "/echo/profile"]).status == 200)
        // Nothing of the admin API is on the port the app talks to.
        #expect(try await Self.curl(put + bearer + [url + "/api/scenarios/active"]).status == 404)
        #expect(try await Self.curl(put + bearer + [active]).status == 200)
        #expect(try await Self.curl([url + "/echo/profile"]).status == 503)

        // Slow, from the mock too: its 8000-byte example at 64 kbps after 200 ms, whole.
        #expect(try await kagami.run(["scenario", "use", "slow"] + admin, environment: environment).status == 0)
        let throttledStart = ContinuousClock.now
        let throttled = try await Self.curl([url + "/bytes/8000"])
        #expect(ContinuousClock.now - throttledStart >= .milliseconds(1100))
        #expect(throttled.status == 200 && throttled.body.trimmingCharacters(in: .newlines) == String(repeating: "k", count: 8000))

        // A shared capture says which scenario's state answered: the HAR's `_scenario`.
        mock.stop()
        let har = try await kagami.run(["export", "--session", folder + "/m.sqlite", "--format", "har"], environment: environment)
        let entries = try JSONValue(parsing: har.stdoutText)["log"]?["entries"]?.arrayValue ?? []
        let marked = entries.compactMap { $0["_scenario"] }
        #expect(marked.contains(["name": "broken", "operation": "GET /echo/profile", "state": "error 503"]), "\(marked)")
        #expect(marked.contains(["name": "slow", "operation": "GET /bytes/{size}", "state": "slow (64 kbps down, 200 ms)"]), "\(marked)")
        let profile = entries.first { $0["_scenario"]?["state"] == "error 503" }
        #expect(profile?["_appliedRules"]?.arrayValue?.count == 1)
        #expect(profile?["_appliedRules"]?[0]?["name"] == "Scenario 'broken'" && profile?["_appliedRules"]?[0]?["description"] == "GET /echo/profile: error 503")

    }

    static let loadingScenarios = """
        scenarios:
          - name: spinner
            states:
              - operation: GET /echo/feed
                state: loading
        """

    /// The requests held now, as the admin API at `admin` lists them (polled until `count` are,
    /// for at most ten seconds: the client's request is on its way).
    static func held(at admin: String, token: Substring, count: Int) async throws -> [JSONValue] {
        var held: [JSONValue] = []
        for _ in 0..<200 {
            let listed = try await curl(["-H", "Authorization: Bearer \(token)", admin + "/api/breakpoints/held"])
            held = try JSONValue(parsing: listed.body)["held"]?.arrayValue ?? []
            if held.count == count { return held }
            try await Task.sleep(for: .milliseconds(50))
        }
        return held
    }

    /// A loading request waits, listed by the admin API with its reason, until `kagami scenario
    /// release` lets it go: the client then gets the real answer (the origin's through the
    /// proxy, the description's from the mock). A client that gives up leaves the list.
    @Test func loadingIsHeldUntilReleasedFromTheCommandLine() async throws {
        let folder = try TemporaryFolder.make("scenario-release").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/scenarios.yaml"
        try Self.loadingScenarios.write(toFile: file, atomically: true, encoding: .utf8)
        let description = folder + "/api.yaml"
        try Self.description.write(toFile: description, atomically: true, encoding: .utf8)
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        let environment = Self.environment(home: folder + "/home")
        let kagami = try CommandLineClient.kagami()
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", folder + "/s.sqlite", "--scenarios", file, "--scenario", "spinner"],
            environment: environment)
        defer { proxy.stop() }
        let mock = try await KagamiProcess.start(
            ["mock", description, "--port", "0", "--admin-port", "0", "--session", folder + "/m.sqlite", "--scenarios", file, "--scenario", "spinner"],
            environment: environment)
        defer { mock.stop() }
        let token = try #require(try String(contentsOfFile: folder + "/home/admin-token", encoding: .utf8).split(separator: "\n").first)
        let mockAdmin = "http://127.0.0.1:\(try #require(Self.adminPort(mock.output), "\(mock.output)"))"
        let proxyAdmin = "http://127.0.0.1:\(try #require(proxy.uiPort))"

        for (admin, client) in [
            (proxyAdmin, ["-x", "http://127.0.0.1:\(proxy.port)", origin.baseURL + "/echo/feed"]),
            (mockAdmin, ["http://127.0.0.1:\(mock.port)/echo/feed"]),
        ] {
            let answer = Task { try await Self.curl(["--max-time", "30"] + client) }
            let held = try await Self.held(at: admin, token: token, count: 1)
            #expect(held.count == 1 && held.first?["reason"] == "scenario spinner: loading", "\(held)")
            #expect(held.first?["request"]?["method"] == "GET")
            let id = try #require(held.first?["id"]?.stringValue)
            let listing = try await kagami.run(["scenario", "release", "--proxy", admin], environment: environment)
            #expect(listing.status == 0 && listing.stdoutText.contains(id) && listing.stdoutText.contains("(scenario spinner: loading)"), "\(listing.stdoutText)")
            let released = try await kagami.run(["scenario", "release", "--all", "--proxy", admin], environment: environment)
            #expect(released.status == 0 && released.stdoutText == "Released \(id)\n", "\(released.stdoutText) \(released.stderr)")
            let result = try await answer.value
            #expect(result.exit == 0 && result.status == 200, "\(result)")
            let body = try JSONValue(parsing: result.body)
            // The origin echoes the request; the mock answers the description's example.
            #expect(body["uri"] == "/echo/feed" || body == ["items": [["id": 1]], "next": "b"], "\(result.body)")
            #expect(try await Self.held(at: admin, token: token, count: 0).isEmpty)
            let again = try await kagami.run(["scenario", "release", id, "--proxy", admin], environment: environment)
            #expect(again.status == 1 && again.stderr.contains("no exchange is held with id"), "\(again.stderr)")

            // A client that gives up is no longer listed.
            let impatient = try await Self.curl(["--max-time", "1"] + client)
            #expect(impatient.exit == 28)
            #expect(try await Self.held(at: admin, token: token, count: 0).isEmpty)
        }
    }

    /// A HAR (as a browser or `kagami export` writes one) with `GET /echo/feed` answered twice.
    static func feedArchive(host: String) -> String {
        func entry(_ body: String) -> String {
            let text = body.replacingOccurrences(of: "\"", with: "\\\"")
            return """
                {"startedDateTime": "2026-11-28T10:00:00.000Z", "time": 1,
                 "request": {"method": "GET", "url": "http://\(host)/echo/feed", "httpVersion": "HTTP/1.1", "headers": [], "queryString": [],
                             "cookies": [], "headersSize": -1, "bodySize": 0},
                 "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                              "headers": [{"name": "Content-Type", "value": "application/json"}], "cookies": [],
                              "content": {"size": \(body.utf8.count), "mimeType": "application/json", "text": "\(text)"},
                              "redirectURL": "", "headersSize": -1, "bodySize": \(body.utf8.count)},
                 "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
                """
        }
        return """
            {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                     "entries": [\(entry(#"{"items":["first"]}"#)), \(entry(#"{"items":["first","second"]}"#))]}}
            """
    }

    @Test func recordedStateAnswersFromARecordingThroughTheProxyAndTheMock() async throws {
        let folder = try TemporaryFolder.make("scenario-recorded").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let origin = try await OriginServer.start()
        defer { Task { try await origin.stop() } }
        try FileManager.default.createDirectory(atPath: folder + "/runs", withIntermediateDirectories: true)
        try Self.feedArchive(host: "127.0.0.1:\(origin.port)").write(toFile: folder + "/runs/feed.har", atomically: true, encoding: .utf8)
        let file = folder + "/scenarios.yaml"
        try """
            scenarios:
              - name: replayed
                states:
                  - operation: GET /echo/feed
                    state: recorded
                    recording: runs/feed.har
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let environment = Self.environment(home: folder + "/home")
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", folder + "/p.sqlite", "--scenarios", file, "--scenario", "replayed"],
            environment: environment)
        let via = ["-x", "http://127.0.0.1:\(proxy.port)"]
        // Recorded order, then the last again; the server is not asked.
        var bodies: [String] = []
        for _ in 0..<3 { bodies.append(try await Self.curl(via + [origin.baseURL + "/echo/feed"]).body) }
        #expect(bodies == [#"{"items":["first"]}"#, #"{"items":["first","second"]}"#, #"{"items":["first","second"]}"#])
        #expect(origin.received.filter { $0.uri.hasSuffix("/echo/feed") }.isEmpty)
        // A call the recording hasn't goes on to the server, unmarked.
        let other = try await Self.curl(via + [origin.baseURL + "/echo/feed?page=2"])
        let echoed = try JSONValue(parsing: other.body)
        #expect(other.status == 200 && echoed["uri"] == "/echo/feed?page=2")
        proxy.stop()
        let kagami = try CommandLineClient.kagami()
        let har = try await kagami.run(["export", "--session", folder + "/p.sqlite", "--format", "har"], environment: environment)
        let marks = (try JSONValue(parsing: har.stdoutText)["log"]?["entries"]?.arrayValue ?? []).map { $0["_scenario"]?["state"] }
        #expect(marks == [.string("recorded (feed.har)"), .string("recorded (feed.har)"), .string("recorded (feed.har)"), nil], "\(marks)")

        // The mock answers the call from the recording too, before its description.
        let description = folder + "/api.yaml"
        try Self.description.write(toFile: description, atomically: true, encoding: .utf8)
        let mock = try await KagamiProcess.start(
            ["mock", description, "--port", "0", "--session", folder + "/m.sqlite", "--scenarios", file, "--scenario", "replayed"], environment: environment)
        defer { mock.stop() }
        let replayed = try await Self.curl(["-D", "-", "http://127.0.0.1:\(mock.port)/echo/feed"])
        #expect(replayed.status == 200 && replayed.body.contains("X-Kagami-Recorded: ") && replayed.body.hasSuffix(#"{"items":["first"]}"#), "\(replayed.body)")
    }
}
