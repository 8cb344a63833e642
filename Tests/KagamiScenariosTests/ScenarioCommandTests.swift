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
              - operation: GET /bytes/{size}
                state: offline
                offline: reset-mid-body
          - name: slow
            states:
              - operation: GET /echo/feed
                state: loading
                seconds: 0.5
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

        // A broken file doesn't load: the scenario in force stays, the error says where.
        try Self.scenarios.replacingOccurrences(of: "state: loading", with: "state: lodaing").write(toFile: file, atomically: true, encoding: .utf8)
        let reload = try await kagami.run(["scenario", "reload"] + admin, environment: environment)
        #expect(reload.status == 1 && reload.stderr.contains(#"scenarios.yaml:19:9: scenarios[1].states[0].state: unknown state "lodaing""#), "\(reload.stderr)")
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
        try """
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
            """.write(toFile: description, atomically: true, encoding: .utf8)
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
    }
}
