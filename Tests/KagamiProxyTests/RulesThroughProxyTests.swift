import Foundation
import KagamiFlow
import KagamiProxy
import KagamiRules
import KagamiTesting
import KagamiMock
import KagamiJSON
import Testing

/// Charles's tools on live traffic: curl through the proxy, the testing origin behind it.
@Suite("Rules through the proxy")
struct RulesThroughProxyTests {
    /// Runs `body` with a proxy whose rules are `yaml` (relative paths from `directory`).
    static func with(_ yaml: String, directory: String = NSTemporaryDirectory(), _ body: (ProxyHarness) async throws -> Void) async throws {
        let rules = ActiveRules()
        try await ProxyHarness.with(rules: rules) { h in
            let text = yaml.replacingOccurrences(of: "ORIGIN_PORT", with: String(h.origin.port))
            rules.replace(with: try RulePipeline(try RuleSet(parsing: text, file: "rules.yaml"), mapLocalFolders: MapLocalFolders(base: directory, excluding: [])))
            try await body(h)
        }
    }

    @Test func mapLocalAnswersFromAFileAndFallsBackWhenMissing() async throws {
        let directory = NSTemporaryDirectory() + "kagami-maplocal-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/users", withIntermediateDirectories: true)
        try Data(#"{"id":7,"local":true}"#.utf8).write(to: URL(fileURLWithPath: directory + "/users/7.json"))
        try await Self.with("""
            mapLocal:
              - name: fixtures
                from: {host: 127.0.0.1, port: ORIGIN_PORT, path: /api/*}
                local: \(directory)
            """, directory: directory) { h in
            let local = try await h.curl(["-D", "-", "\(h.origin.baseURL)/api/users/7.json?ignored=1"])
            #expect(local.stdoutText.contains(#"{"id":7,"local":true}"#))
            #expect(local.stdoutText.lowercased().contains("content-type: application/json"))
            // No such file: the real server answers.
            let fallback = try await h.curl(["-w", " %{http_code}", "\(h.origin.baseURL)/api/users/8.json"])
            #expect(fallback.stdoutText == "no route /api/users/8.json\n 404")
            let flows = try await h.flows(count: 2)
            #expect(flows[0].appliedRules.first?.description == "mapped to local file users/7.json")
            #expect(flows[0].response?.status == 200)
            #expect(h.origin.received.map(\.uri) == ["/api/users/8.json"])
        }
    }

    @Test func blockListDropsOrForbidsAndAllowListBlocksTheRest() async throws {
        try await Self.with("""
            blockList:
              - name: ads
                locations: [{path: /ads/*}]
                action: "403"
              - name: tracking
                locations: [{path: /track/*}]
                action: drop
            allowList:
              - name: ours
                locations: [{host: 127.0.0.1}]
            """) { h in
            let forbidden = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/ads/banner"])
            #expect(forbidden.stdoutText == " 403")
            let dropped = try await h.curl(["\(h.origin.baseURL)/track/pixel"])
            #expect(dropped.status == 52)  // empty reply from server
            let allowed = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(allowed.stdoutText == " 200")
            let other = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "http://localhost:\(h.origin.port)/echo"])
            #expect(other.stdoutText == " 403")
            #expect(h.origin.received.map(\.uri) == ["/echo"])
            let flows = try await h.flows(count: 4)
            #expect(flows.contains { $0.error?.kind == .aborted && $0.request.path == "/track/pixel" })
        }
    }

    /// A CONNECT goes through the same hooks as a request: a Block List location naming a whole
    /// host refuses the tunnel at the CONNECT (403, or the connection dropped), one naming paths
    /// leaves it alone, and an Allow List refuses tunnels to hosts it doesn't name.
    @Test func blockAndAllowListsSeeTunnels() async throws {
        try await Self.with("""
            blockList:
              - name: whole host
                locations: [{host: localhost, port: ORIGIN_PORT}]
                action: "403"
              - name: paths only
                locations: [{host: 127.0.0.1, path: /ads/*}]
                action: drop
            """) { h in
            // curl -p: the request goes inside a CONNECT tunnel, relayed untouched.
            let blocked = try await h.curl(["-p", "-w", "%{http_connect}", "-o", "/dev/null", "http://localhost:\(h.origin.port)/echo"])
            #expect(blocked.status == 56, "CONNECT refused: \(blocked.stderr)")
            #expect(blocked.stdoutText == "403")
            let relayed = try await h.curl(["-p", "-w", "%{http_connect} %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/ads/banner"])
            #expect(relayed.stdoutText == "200 404", "a tunnel's requests are not seen unless intercepted: \(relayed.stderr)")
            let flows = try await h.flows(count: 2)
            let refused = try #require(flows.first { $0.request.host == "localhost" })
            #expect(refused.mode == .tunnel)
            #expect(refused.response?.status == 403)
            #expect(refused.appliedRules.map(\.name) == ["Block List 'whole host'"])
            #expect(h.origin.received.map(\.uri) == ["/ads/banner"])
        }
        try await Self.with("""
            blockList:
              - name: drop it
                locations: [{host: localhost}]
                action: drop
            allowList:
              - name: ours
                locations: [{host: 127.0.0.1, path: /only/*}]
            """) { h in
            let dropped = try await h.curl(["-p", "-o", "/dev/null", "http://localhost:\(h.origin.port)/echo"])
            #expect(dropped.status != 0)
            let allowed = try await h.curl(["-p", "-w", "%{http_connect}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(allowed.stdoutText == "200", "the Allow List names the host: the tunnel opens")
            let flows = try await h.flows(count: 2)
            let aborted = try #require(flows.first { $0.request.host == "localhost" })
            #expect(aborted.error?.kind == .aborted)
            #expect(aborted.appliedRules.map(\.name) == ["Block List 'drop it'"])
        }
    }

    @Test func rewriteChangesRequestAndResponse() async throws {
        try await Self.with("""
            rewrite:
              - name: debug
                locations: [{path: /echo}]
                rules:
                  - type: Add Header
                    replace: {name: X-Debug, value: "1"}
                  - type: Modify Header
                    match: {name: Authorization, value: "Bearer (.*)", regex: true}
                    replace: {value: "Token $1"}
                  - type: Add Query Param
                    replace: {name: from, value: kagami}
                  - type: Response Status
                    match: {value: "200"}
                    replace: {value: "201"}
                  - type: Body
                    where: response
                    match: {value: '"method":"GET"'}
                    replace: {value: '"method":"REWRITTEN"'}
            """) { h in
            let result = try await h.curl(["-w", "\n%{http_code}", "-H", "Authorization: Bearer abc", "\(h.origin.baseURL)/echo"])
            let lines = result.stdoutText.split(separator: "\n")
            #expect(lines.last == "201")
            #expect(result.stdoutText.contains(#""method":"REWRITTEN""#))
            let received = try #require(h.origin.received.first)
            #expect(received.uri == "/echo?from=kagami")
            #expect(received.headers.contains { $0.name == "X-Debug" && $0.value == "1" })
            #expect(received.headers.contains { $0.name == "Authorization" && $0.value == "Token abc" })
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.appliedRules.count >= 4)
            #expect(flow.response?.status == 201)
            #expect(flow.request.target == "/echo?from=kagami")
        }
    }

    /// A status rewritten with its own reason keeps that reason on the wire (RULES.md's example),
    /// streamed or collected for a Body rule.
    @Test func rewrittenStatusKeepsItsReason() async throws {
        try await Self.with("""
            rewrite:
              - name: maintenance
                locations: [{path: /status/*}]
                rules:
                  - type: Response Status
                    match: {value: "200"}
                    replace: {value: "503 Down For Maintenance"}
              - name: body too
                locations: [{path: /echo}]
                rules:
                  - type: Response Status
                    match: {value: "200"}
                    replace: {value: "299 Fine Enough"}
                  - type: Body
                    where: response
                    match: {value: GET}
                    replace: {value: TEG}
            """) { h in
            let streamed = try await h.curl(["-i", "\(h.origin.baseURL)/status/200"])
            #expect(streamed.stdoutText.hasPrefix("HTTP/1.1 503 Down For Maintenance\r\n"), "\(streamed.stdoutText.prefix(80))")
            let collected = try await h.curl(["-i", "\(h.origin.baseURL)/echo"])
            #expect(collected.stdoutText.hasPrefix("HTTP/1.1 299 Fine Enough\r\n"), "\(collected.stdoutText.prefix(80))")
            #expect(collected.stdoutText.contains("TEG"))
            let flows = try await h.flows(count: 2)
            #expect(Set(flows.compactMap { $0.response.map { "\($0.status) \($0.reason)" } }) == ["503 Down For Maintenance", "299 Fine Enough"])
        }
    }

    /// A Rewrite Body rule holds request bodies to rewrite them, but never more than 32 MB:
    /// a larger upload streams on unchanged and the flow says why.
    @Test func requestBodiesTooLargeToRewriteStreamOnUnchanged() async throws {
        try await Self.with("""
            rewrite:
              - name: scrub
                locations: [{path: /echo}]
                rules:
                  - type: Body
                    match: {value: "secret"}
                    replace: {value: "******"}
            """) { h in
            let (path, data) = try randomFile(size: 40 << 20, seed: 7)
            let result = try await h.curl(["--data-binary", "@\(path)", "-H", "Expect:", "\(h.origin.baseURL)/echo"])
            let echo = try Echo(result.stdout)
            #expect(echo.bodySize == data.count)
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.appliedRules.map(\.description).contains("request body over 32 MB: passed on unchanged"))
            // Small bodies are still rewritten.
            let small = try await h.curl(["--data-binary", "a secret", "\(h.origin.baseURL)/echo"])
            #expect(try Echo(small.stdout).bodySHA256 == OriginServer.sha256Hex(Data("a ******".utf8)))
        }
    }

    /// The Apiary workflow: the app keeps calling the real API's address, and Map Remote sends
    /// those calls to a mock served from the description.
    @Test func mapRemoteSendsAnAPIToItsMock() async throws {
        let mock = try await MockServer.start(text: """
            FORMAT: 1A
            # Notes API
            ## Note [/notes/{id}]
            ### Retrieve a Note [GET]
            + Response 200 (application/json)

                    {"id": 1, "title": "Buy milk"}
            """)
        let port = mock.port
        try await Self.with("""
            mapRemote:
              - name: to the mock
                from: {host: api.example.com}
                to: {protocol: http, host: 127.0.0.1, port: \(port)}
            """) { h in
            let result = try await h.curl(["-w", "\n%{http_code}", "http://api.example.com/notes/7"])
            #expect(result.stdoutText.hasSuffix("\n200"), "\(result.stdoutText)")
            let body = try JSONValue(parsing: String(result.stdoutText.dropLast(4)))
            #expect(body.isJSONEqual(to: ["id": 1, "title": "Buy milk"]))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.appliedRules.first?.description == "mapped to http://127.0.0.1:\(port)/notes/7")
        }
        try await mock.stop()
    }

    @Test func mapRemoteSendsTheRequestElsewhere() async throws {
        let other = try await OriginServer.start()
        try await Self.with("""
            mapRemote:
              - name: to other
                from: {host: api.invalid, path: /v1/*}
                to: {host: 127.0.0.1, port: \(other.port), path: /echo/*}
            """) { h in
            let result = try await h.curl(["http://api.invalid/v1/users?x=1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Echo(result.stdout).uri == "/echo/users?x=1")
            #expect(other.received.count == 1)
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.url == "\(other.baseURL)/echo/users?x=1")
            #expect(flow.appliedRules.first?.name == "Map Remote 'to other'")
        }
        try await other.stop()
    }

    @Test func noCachingStripsValidatorsBothWays() async throws {
        try await Self.with("""
            noCaching:
              - name: all
            """) { h in
            let result = try await h.curl(["-D", "-", "-o", "/dev/null", "-H", #"If-None-Match: "v1""#, "\(h.origin.baseURL)/status/304"])
            let received = try #require(h.origin.received.first)
            #expect(!received.headers.contains { $0.name.lowercased() == "if-none-match" })
            #expect(received.headers.contains { $0.name.lowercased() == "cache-control" && $0.value == "no-cache" })
            #expect(!result.stdoutText.lowercased().contains("etag:"))
            #expect(result.stdoutText.lowercased().contains("expires: 0"))
        }
    }

    @Test func replacedRulesApplyToTheNextRequest() async throws {
        let rules = ActiveRules()
        try await ProxyHarness.with(rules: rules) { h in
            #expect(try await h.curl(["-w", "%{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"]).stdoutText == "200")
            rules.replace(with: try RulePipeline(try RuleSet(parsing: "blockList: [{name: all, locations: [{path: /echo}]}]")))
            #expect(try await h.curl(["-w", "%{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"]).stdoutText == "403")
            rules.replace(with: nil)
            #expect(try await h.curl(["-w", "%{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"]).stdoutText == "200")
        }
    }
}
