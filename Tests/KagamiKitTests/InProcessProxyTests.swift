import Foundation
import KagamiKit
import KagamiTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct InProcessProxyTests {
    /// GETs `url` through the proxy with curl (plain HTTP in absolute form, as a proxied
    /// client sends it).
    private func get(_ url: String, through proxy: KagamiProxyServer) async throws -> (status: Int, body: String) {
        let result = try await CommandLineClient.curl.run([
            "-sS", "--max-time", "60", "-x", proxy.proxyURL.absoluteString, "-o", "-", "-w", "\n%{http_code}", url,
        ])
        #expect(result.status == 0, "curl: \(result.stderr)")
        var lines = result.stdoutText.components(separatedBy: "\n")
        let status = Int(lines.removeLast()) ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    @Test func recordsFlowsAndAppliesRulesReplacedWhileRunning() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let directory = try TemporaryFolder.make("kit")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"mapped": true}"#.utf8).write(to: directory.appendingPathComponent("user.json"))
        let session = directory.appendingPathComponent("session.kagami").path

        try await withKagamiProxy(configuration: .init(rulesDirectory: directory.path, recording: .sessionFile(path: session))) { proxy in
            #expect(proxy.proxyURL.absoluteString == "http://127.0.0.1:\(proxy.port)")
            let updates = proxy.newFlows
            let plain = try await get("\(origin.baseURL)/echo", through: proxy)
            #expect(plain.status == 200)
            #expect(origin.received.count == 1)
            var iterator = updates.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first?.request.path == "/echo")
            #expect(first?.response?.status == 200)

            try proxy.setRules(document: """
                blockList:
                  - name: no tracking
                    locations: [{path: "/track/*"}]
                    action: "403"
                mapLocal:
                  - name: user
                    from: {host: 127.0.0.1, path: /v1/user}
                    local: user.json
                """)
            #expect(proxy.rules.blockList.count == 1)
            let blocked = try await get("\(origin.baseURL)/track/page", through: proxy)
            #expect(blocked.status == 403)
            let mapped = try await get("\(origin.baseURL)/v1/user", through: proxy)
            #expect(mapped.status == 200)
            #expect(mapped.body == #"{"mapped": true}"#)
            // Neither reached the origin.
            #expect(origin.received.count == 1)

            let flows = try await proxy.flows(count: 3)
            #expect(flows.map(\.request.path) == ["/echo", "/track/page", "/v1/user"])
            #expect(flows[1].appliedRules.map(\.name).contains { $0.contains("no tracking") })
            #expect(flows[2].appliedRules.map(\.name).contains { $0.contains("user") })

            try proxy.setRules(RuleSet())
            #expect(try await get("\(origin.baseURL)/track/page", through: proxy).status == 404)
        }
        // The session file holds what was recorded, for `kagami open` or the web UI.
        #expect(FileManager.default.fileExists(atPath: session))
    }

    @Test func withScenarioAnswersInTheScenariosStateForOneScope() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let directory = try TemporaryFolder.make("kit-proxy-scenarios")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios.yaml").path
        try """
            scenarios:
              - name: profile-fails
                states:
                  - operation: GET /echo/profile
                    state: error
                    status: 503
                    body: '{"message": "maintenance"}'
            """.write(toFile: scenarios, atomically: true, encoding: .utf8)
        try await withKagamiProxy(configuration: .init(scenarios: scenarios)) { proxy in
            #expect(try await get(origin.baseURL + "/echo/profile", through: proxy).status == 200)
            try await proxy.withScenario("profile-fails") {
                let failed = try await get(origin.baseURL + "/echo/profile", through: proxy)
                #expect(failed.status == 503 && failed.body == #"{"message": "maintenance"}"#)
                #expect(try await get(origin.baseURL + "/echo/other", through: proxy).status == 200)
            }
            #expect(try await get(origin.baseURL + "/echo/profile", through: proxy).status == 200)
            let flows = try await proxy.flows(count: 4)
            #expect(flows.map { $0.appliedRules.map(\.name) } == [[], ["Scenario 'profile-fails'"], [], []])
        }
        // A file that doesn't read is refused at start, naming the line and field.
        try "scenarios:\n  - name: a\n    states:\n      - {operation: GET /a, state: lodaing}\n".write(toFile: scenarios, atomically: true, encoding: .utf8)
        await #expect {
            try await withKagamiProxy(configuration: .init(scenarios: scenarios)) { _ in }
        } throws: { error in
            "\(error)".contains("scenarios.yaml:4:") && "\(error)".contains("unknown state \"lodaing\"")
        }
    }

    /// Through the proxy too: a loading request waits, listed, until the test releases it, and
    /// curl then gets the origin's real answer.
    @Test func aLoadingRequestGoesToItsServerOnceReleased() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let directory = try TemporaryFolder.make("kit-proxy-loading")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios.yaml").path
        try "scenarios:\n  - name: feed-loading\n    states:\n      - {operation: GET /echo/feed, state: loading}\n"
            .write(toFile: scenarios, atomically: true, encoding: .utf8)
        try await withKagamiProxy(configuration: .init(scenarios: scenarios)) { proxy in
            try await proxy.withScenario("feed-loading") {
                let answer = Task { try await get(origin.baseURL + "/echo/feed", through: proxy) }
                var waited = 0
                while proxy.loadingRequests.isEmpty, waited < 400 {
                    try await Task.sleep(for: .milliseconds(25))
                    waited += 1
                }
                #expect(proxy.loadingRequests.map(\.path) == ["/echo/feed"])
                #expect(origin.received.isEmpty)
                #expect(proxy.releaseLoading() == 1)
                let released = try await answer.value
                let echoed = try JSONSerialization.jsonObject(with: Data(released.body.utf8)) as? [String: Any]
                #expect(released.status == 200 && echoed?["uri"] as? String == "/echo/feed", "\(released.body)")
                #expect(origin.received.count == 1 && proxy.loadingRequests.isEmpty)
            }
        }
    }

    @Test func throttlesAsTheProfileSays() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let profile = ThrottleProfile(name: "Test link", downloadKbps: 800, uploadKbps: 0, utilisation: 100, latencyMs: 0)
        var rules = RuleSet()
        rules.throttling = ThrottleSettings(isEnabled: true, profile: profile)
        let size = 40_000

        // The engine paces bytes with the same shaper on its event loop's clock; on an injected
        // clock it says exactly when the last byte of the body may leave.
        var shaper = ThrottleShaper(profile: profile, direction: .download, clock: ManualClock())
        let releases = shaper.schedule(byteCount: size)
        let last = try #require(releases.last).releaseAt.offset
        #expect(releases.reduce(0) { $0 + $1.byteCount } == size)
        #expect(last >= .milliseconds(390) && last <= .milliseconds(400), "last byte at \(last)")

        try await withKagamiProxy(configuration: .init(rules: rules)) { proxy in
            let response = try await get("\(origin.baseURL)/bytes/\(size)", through: proxy)
            #expect(response.status == 200)
            let flow = try #require(try await proxy.flows(count: 1).first)
            #expect(flow.appliedRules.map(\.name).contains("Throttling"))
            // A lower bound only: a busy machine makes the exchange slower, never faster.
            let duration = try #require(flow.duration)
            #expect(duration >= 0.3, "took \(duration) s")
        }
    }

    @Test func reportsContractViolationsForEachFlow() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let contract = "\(Fixture.path("origin.apib"))=\(origin.baseURL)"
        try await withKagamiProxy(configuration: .init(contracts: [contract])) { proxy in
            #expect(try await get("\(origin.baseURL)/status/200", through: proxy).status == 200)
            #expect(try await get("\(origin.baseURL)/status/503", through: proxy).status == 503)
            let flows = try await proxy.flows(count: 2)
            #expect(flows[0].violations.isEmpty, "\(flows[0].violations)")
            #expect(!flows[1].violations.isEmpty)
        }
    }

    @Test func anUnusableSettingIsRefusedWithWhatAndWhere() async throws {
        await #expect(throws: KagamiSetupError.self) {
            try await withKagamiProxy(configuration: .init(upstreamAllow: ["not a host/99"])) { _ in }
        }
        await #expect(throws: KagamiSetupError.self) {
            try await withKagamiProxy { proxy in
                try proxy.setRules(document: "blockList: 3\n")
            }
        }
    }

    @Test func routesAURLSessionConfigurationThroughItself() async throws {
        try await withKagamiProxy { proxy in
            let configuration = proxy.routing(.ephemeral)
            let settings = try #require(configuration.connectionProxyDictionary)
            #expect(settings["HTTPProxy"] as? String == "127.0.0.1")
            #expect(settings["HTTPPort"] as? Int == proxy.port)
            #expect(settings["HTTPSPort"] as? Int == proxy.port)
        }
    }
}
