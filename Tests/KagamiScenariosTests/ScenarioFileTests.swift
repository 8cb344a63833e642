// Scenario files read with positioned errors; which state a request gets; the error and empty answers.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiRules
import KagamiScenarios
import KagamiTesting
import Testing

@Suite struct ScenarioFileTests {
    static let text = """
        scenarios:
          - name: empty-feed
            states:
              - operation: GET /feed
                state: empty
              - operation: GET /users/{id}
                host: api.example.com
                state: loading
                seconds: 2.5
          - name: checkout-fails
            states:
              - operation: POST /checkout
                state: error
                status: 503
              - location: {host: "*.example.com", path: "/search*"}
                state: offline
                offline: reset-mid-body
              - operation: GET /spinner
                state: loading
        """

    static func request(_ method: String, _ target: String, host: String = "api.example.com") -> FlowRequest {
        FlowRequest(method: method, scheme: "http", host: host, port: 80, target: target)
    }

    @Test func readsNamedScenariosAndPicksTheFirstMatchingState() throws {
        let file = try ScenarioFile(parsing: Self.text, file: "scenarios.yaml")
        #expect(file.scenarios.map(\.name) == ["empty-feed", "checkout-fails"])
        let feed = try #require(file.scenario(named: "empty-feed"))
        #expect(feed.state(for: Self.request("GET", "/feed?page=2"))?.state == .empty)
        #expect(feed.state(for: Self.request("POST", "/feed")) == nil)
        #expect(feed.state(for: Self.request("GET", "/users/7"))?.state == .loading(.milliseconds(2500)))
        // The host is part of the operation when given; a proxy's absolute-form target too.
        #expect(feed.state(for: Self.request("GET", "/users/7", host: "other.test")) == nil)
        #expect(feed.state(for: Self.request("GET", "http://api.example.com/users/7"))?.state == .loading(.milliseconds(2500)))
        let checkout = try #require(file.scenario(named: "checkout-fails"))
        #expect(checkout.state(for: Self.request("POST", "/checkout"))?.state == .error(status: 503, body: nil, contentType: nil))
        #expect(checkout.state(for: Self.request("GET", "/search?q=a", host: "www.example.com"))?.state == .offline(.resetMidBody))
        #expect(checkout.state(for: Self.request("GET", "/search", host: "example.org")) == nil)
        #expect(checkout.state(for: Self.request("GET", "/spinner"))?.state == .loading(nil))
    }

    @Test(arguments: [
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: broken\n",
         "scenarios.yaml:5:9: scenarios[0].states[0].state: unknown state \"broken\" (one of \"as-is\", \"empty\", \"loading\", \"error\", \"offline\", \"slow\", \"recorded\")"),
        ("scenarios:\n  - name: a\n    states:\n      - operation: /feed\n        state: empty\n",
         "scenarios.yaml:4:9: scenarios[0].states[0].operation: \"/feed\" is not an operation: write a method and a path template, e.g. \"GET /users/{id}\""),
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: error\n        status: 200\n",
         "scenarios.yaml:6:9: scenarios[0].states[0].status: an error's status is from 400 to 599, not 200"),
        ("scenarios:\n  - name: a\n    states: []\n  - name: a\n    states: []\n",
         "scenarios.yaml:4:5: scenarios[1].name: a second scenario named \"a\""),
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: offline\n        offline: unplugged\n",
         "scenarios.yaml:6:9: scenarios[0].states[0].offline: unknown way to be offline \"unplugged\" (one of \"reset\", \"reset-mid-body\", \"closed\", \"timeout\")"),
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: error\n        stauts: 503\n",
         "scenarios.yaml:6:9: scenarios[0].states[0].stauts: unknown field \"stauts\" (expected one of: operation, host, location, method, state, seconds, status, body, contentType, offline, profile, recording)"),
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: slow\n        profile: 5G\n",
         "scenarios.yaml:6:9: scenarios[0].states[0].profile: unknown throttling preset \"5G\" (one of " + ThrottleProfile.builtInPresets.map { "\"\($0.name)\"" }.joined(separator: ", ") + ")"),
        ("scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: slow\n        profile: {downloadKbps: -1, uploadKbps: 8}\n",
         "scenarios.yaml:6:19: scenarios[0].states[0].profile.downloadKbps: expected 0 (no limit) or more"),
    ])
    func refusesWhatItCannotReadNamingTheFileLineAndField(text: String, expected: String) {
        #expect(throws: RuleDocumentError.self) { try ScenarioFile(parsing: text, file: "scenarios.yaml") }
        do {
            _ = try ScenarioFile(parsing: text, file: "scenarios.yaml")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func aSlowStateNamesAPresetOrAProfileOfItsOwn() throws {
        let file = try ScenarioFile(parsing: """
            scenarios:
              - name: slow
                states:
                  - {operation: GET /feed, state: slow, profile: 3g}
                  - operation: GET /photos/{id}
                    state: slow
                    profile: {downloadKbps: 64, uploadKbps: 32, latencyMs: 300}
            """, file: "scenarios.yaml")
        let slow = try #require(file.scenario(named: "slow"))
        let feed = try #require(slow.state(for: Self.request("GET", "/feed")))
        #expect(feed.state == .slow(try #require(ThrottleProfile.builtInPresets.first { $0.name == "3G" })))
        #expect(feed.state.summary == "slow (3G)")
        let photo = try #require(slow.state(for: Self.request("GET", "/photos/7")))
        #expect(photo.state == .slow(ThrottleProfile(name: "Custom", downloadKbps: 64, uploadKbps: 32, latencyMs: 300)))
        #expect(photo.state.summary == "slow (64 kbps down, 32 kbps up, 300 ms)")
        // Without a network to imitate, the error says what to write.
        #expect {
            try ScenarioFile(parsing: "scenarios:\n  - name: a\n    states:\n      - operation: GET /feed\n        state: slow\n", file: "scenarios.yaml")
        } throws: { error in
            "\(error)".hasPrefix("scenarios.yaml:5:9: scenarios[0].states[0].state: a slow state names its network in profile: a preset (\"100% Loss\", \"3G\"")
        }
    }

    @Test func aRecordedStateAnswersFromItsRecordingInRecordedOrder() async throws {
        let folder = try TemporaryFolder.make("scenario-recorded").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/scenarios.yaml"
        try """
            scenarios:
              - name: replayed
                states:
                  - operation: GET /feed
                    state: recorded
                    recording: runs/feed.har
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let flows = [
            FlowFixtures.api("/feed", host: "api.example.com", response: #"{"items":[1]}"#),
            FlowFixtures.api("/feed", host: "api.example.com", response: #"{"items":[1,2]}"#),
            FlowFixtures.api("/profile", host: "api.example.com", response: #"{"name":"Ada"}"#),
        ]
        let active = try await ActiveScenario.load(path: path, active: "replayed") { recording in
            // Relative to the scenario file's folder.
            guard recording == folder + "/runs/feed.har" else { throw CocoaError(.fileNoSuchFile) }
            return flows
        }
        let feed = Self.request("GET", "/feed")
        let (scenario, rule) = try #require(active.state(for: feed))
        #expect(scenario == "replayed" && rule.state.summary == "recorded (feed.har)")
        guard case .recorded(let replay) = rule.state else { Issue.record("not recorded: \(rule.state)"); return }
        let bodies = (0..<3).map { _ in replay.reply(to: feed).map { String(decoding: $0.body.data, as: UTF8.self) } }
        #expect(bodies == [#"{"items":[1]}"#, #"{"items":[1,2]}"#, #"{"items":[1,2]}"#])
        #expect(replay.reply(to: feed)?.headers["X-Kagami-Recorded"] == flows[1].id.uuidString)
        // A call the recording hasn't is as-is, not a recorded state.
        #expect(active.state(for: Self.request("GET", "/feed?page=2")) == nil)

        // Read without a reader, or a recording that can't be read: the field says which, and its line.
        #expect {
            try ActiveScenario(path: path)
        } throws: { error in
            "\(error)" == "scenarios.yaml:6:9: scenarios[0].states[0].recording: a recorded state answers from its recording, which kagami proxy, kagami mock and KagamiKit read (--scenarios FILE)"
        }
        await #expect {
            try await ActiveScenario.load(path: path) { _ in [] }
        } throws: { error in
            "\(error)" == "scenarios.yaml:6:9: scenarios[0].states[0].recording: runs/feed.har holds no recorded exchange with a response to answer from"
        }
    }

    @Test func withScenarioPutsBackTheOneBefore() async throws {
        let active = try ActiveScenario(file: try ScenarioFile(parsing: Self.text, file: "scenarios.yaml"), active: "empty-feed")
        let inside = try await active.with("checkout-fails") { active.current?.name }
        #expect(inside == "checkout-fails" && active.current?.name == "empty-feed")
        active.off()
        await #expect(throws: ScenarioSwitchError.self) { try await active.with("nope") {} }
        #expect(active.current == nil)
    }

    @Test func marksNameTheScenarioOperationAndState() throws {
        let file = try ScenarioFile(parsing: Self.text, file: "scenarios.yaml")
        let rule = try #require(file.scenario(named: "checkout-fails")?.state(for: Self.request("POST", "/checkout")))
        let mark = ActiveScenario.mark(scenario: "checkout-fails", rule: rule)
        #expect(mark == RuleApplication(name: "Scenario 'checkout-fails'", description: "POST /checkout: error 503"))
        let read = try #require(mark.scenarioMark)
        #expect(read.scenario == "checkout-fails" && read.operation == "POST /checkout" && read.state == "error 503")
        #expect(RuleApplication(name: "Map Local 'user'", description: "answered from user.json").scenarioMark == nil)
    }

    @Test func switchingKeepsTheScenarioInForceWhenTheNameIsUnknown() throws {
        let active = try ActiveScenario(file: try ScenarioFile(parsing: Self.text, file: "scenarios.yaml"), active: "empty-feed")
        #expect(active.state(for: Self.request("GET", "/feed"))?.scenario == "empty-feed")
        #expect(throws: ScenarioSwitchError.unknownScenario("nope", known: ["empty-feed", "checkout-fails"])) { try active.use("nope") }
        #expect(active.current?.name == "empty-feed")
        try active.use("checkout-fails")
        #expect(active.state(for: Self.request("GET", "/feed")) == nil)
        active.off()
        #expect(active.state(for: Self.request("POST", "/checkout")) == nil)
    }

    @Test func reloadKeepsTheScenarioInForceWhenTheFileBreaks() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("scenarios.yaml").path
        try Self.text.write(toFile: path, atomically: true, encoding: .utf8)
        let active = try ActiveScenario(path: path, active: "checkout-fails")
        try "scenarios:\n  - name: checkout-fails\n    states:\n      - operation: POST /checkout\n        state: nap\n".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            try await active.reload()
            Issue.record("a broken file reloaded")
        } catch {
            #expect(error.description.hasPrefix("scenarios.yaml:5:9: scenarios[0].states[0].state: unknown state \"nap\""))
        }
        #expect(active.state(for: Self.request("POST", "/checkout"))?.rule.state == .error(status: 503, body: nil, contentType: nil))
        try "scenarios:\n  - name: checkout-fails\n    states:\n      - operation: POST /checkout\n        state: error\n        status: 502\n".write(toFile: path, atomically: true, encoding: .utf8)
        try await active.reload()
        #expect(active.state(for: Self.request("POST", "/checkout"))?.rule.state == .error(status: 502, body: nil, contentType: nil))
    }

    @Test func emptiedAnswersKeepTheirShapeWithEveryListEmpty() throws {
        let response = FlowResponse(
            status: 200, headers: HeaderFields([("Content-Type", "application/json"), ("Content-Length", "58")]),
            body: FlowBody(data: Data(#"{"items":[{"id":1,"tags":["a"]}],"page":{"next":"b","ids":[1]},"total":1}"#.utf8)))
        let emptied = ScenarioAnswers.emptied(response)
        #expect(String(decoding: emptied.body.data, as: UTF8.self) == #"{"items":[],"page":{"next":"b","ids":[]},"total":1}"#)
        #expect(emptied.headers["Content-Length"] == String(emptied.body.data.count))
        // A top-level list is emptied; a body that is not JSON becomes an empty 204; an error stays.
        let list = ScenarioAnswers.emptied(FlowResponse(status: 200, body: FlowBody(data: Data("[1,2]".utf8))))
        #expect(String(decoding: list.body.data, as: UTF8.self) == "[]")
        let page = ScenarioAnswers.emptied(FlowResponse(status: 200, headers: HeaderFields([("Content-Type", "text/html")]), body: FlowBody(data: Data("<ul><li>a</li></ul>".utf8))))
        #expect(page.status == 204 && page.body.data.isEmpty && page.headers["Content-Type"] == nil)
        let failed = FlowResponse(status: 500, body: FlowBody(data: Data("[1]".utf8)))
        #expect(ScenarioAnswers.emptied(failed) == failed)
    }

    @Test func errorAnswersAreProblemDocumentsNamingTheScenario() throws {
        let answer = ScenarioAnswers.error(status: 503, body: nil, contentType: nil, scenario: "checkout-fails", request: Self.request("POST", "http://api.example.com/checkout?x=1"))
        #expect(answer.status == 503 && answer.reason == "Service Unavailable")
        #expect(answer.headers["Content-Type"] == "application/problem+json")
        let problem = try JSONValue(parsing: Array(answer.body.data))
        #expect(problem["status"] == 503)
        #expect(problem["detail"] == "Scenario checkout-fails puts POST /checkout in its error state.")
        let own = ScenarioAnswers.error(status: 429, body: #"{"message":"slow down"}"#, contentType: nil, scenario: "s", request: Self.request("GET", "/"))
        #expect(own.headers["Content-Type"] == "application/json" && String(decoding: own.body.data, as: UTF8.self) == #"{"message":"slow down"}"#)
    }
}
