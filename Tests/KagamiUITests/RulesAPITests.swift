import Foundation
import KagamiTesting
import Testing

/// `kagami proxy --rules FILE` as a user runs it: rules read and replaced through the admin API
/// with curl, proxied curl requests seeing the change on the next request.
@Suite("Rules admin API")
struct RulesAPITests {
    static func curl(_ arguments: [String], stdin: Data? = nil) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "30"] + arguments, stdin: stdin)
    }

    @Test func putRulesAppliesToTheNextRequestAndBadDocumentsChangeNothing() async throws {
        let origin = try await OriginServer.start()
        let directory = try temporaryFolder()
        let rulesFile = directory + "/rules.yaml"
        try Data(#"{"local":true}"#.utf8).write(to: URL(fileURLWithPath: directory + "/user.json"))
        try """
            # blocks the ads
            blockList:
              - name: ads
                locations: [{path: /ads/*}]
                action: "403"
            """.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        let kagami = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", directory + "/session.sqlite", "--rules", rulesFile,
        ])
        defer { kagami.stop() }
        let proxy = ["-x", "http://127.0.0.1:\(kagami.port)"]

        let initial = try await Self.curl(kagami.authorization + ["\(kagami.api)/rules"])
        #expect(initial.stdoutText.contains(#""name": "ads""#))
        #expect(try await Self.curl(proxy + ["-o", "/dev/null", "-w", "%{http_code}", "\(origin.baseURL)/ads/1"]).stdoutText == "403")
        #expect(try await Self.curl(proxy + ["\(origin.baseURL)/user"]).stdoutText == "no route /user\n")

        // Map Local in, the block out: the very next request is answered from the file.
        let replacement = #"{"mapLocal": [{"name": "user", "from": {"path": "/user"}, "local": "user.json"}]}"#
        let put = try await Self.curl(kagami.authorization + ["-X", "PUT", "-H", "Content-Type: application/yaml", "-w", "\n%{http_code}", "--data-binary", "@-", "\(kagami.api)/rules"], stdin: Data(replacement.utf8))
        #expect(put.stdoutText.hasSuffix("\n200"))
        #expect(put.stdoutText.contains(#""local": "user.json""#))
        #expect(try await Self.curl(proxy + ["\(origin.baseURL)/user"]).stdoutText == #"{"local":true}"#)
        #expect(try await Self.curl(proxy + ["-o", "/dev/null", "-w", "%{http_code}", "\(origin.baseURL)/ads/1"]).stdoutText == "404")
        // Saved over the file it came from, still YAML, and readable again.
        let saved = try String(contentsOfFile: rulesFile, encoding: .utf8)
        #expect(saved.contains("mapLocal:") && saved.contains("user.json") && !saved.contains("ads"))

        // A typo in a field: refused with where and what; the rules in force stay.
        let typo = """
            mapLocal:
              - name: user
                from: {pth: /user}
                local: other.json
            """
        let refused = try await Self.curl(kagami.authorization + ["-X", "PUT", "-H", "Content-Type: application/yaml", "-w", "\n%{http_code}", "--data-binary", "@-", "\(kagami.api)/rules"], stdin: Data(typo.utf8))
        #expect(refused.stdoutText.hasSuffix("\n400"))
        #expect(refused.stdoutText.contains(#""field":"mapLocal[0].from.pth""#))
        #expect(refused.stdoutText.contains(#""line":3"#))
        #expect(refused.stdoutText.contains("unknown field"))
        #expect(try await Self.curl(proxy + ["\(origin.baseURL)/user"]).stdoutText == #"{"local":true}"#)
        #expect(try String(contentsOfFile: rulesFile, encoding: .utf8) == saved)
        let after = try await Self.curl(kagami.authorization + ["\(kagami.api)/rules"])
        #expect(after.stdoutText.contains(#""local": "user.json""#) && !after.stdoutText.contains("other.json"))
        try await origin.stop()
    }

    @Test func keepRulesFileLeavesTheFileAloneAndBadPatternsAreNamed() async throws {
        let directory = try temporaryFolder()
        let rulesFile = directory + "/rules.yaml"
        let original = "noCaching:\n  - name: fresh\n"
        try original.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        let kagami = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", directory + "/session.sqlite",
            "--rules", rulesFile, "--keep-rules-file",
        ])
        defer { kagami.stop() }
        let put = try await Self.curl(
            kagami.authorization + ["-X", "PUT", "-H", "Content-Type: application/yaml", "-w", "\n%{http_code}", "--data-binary", "@-", "\(kagami.api)/rules"],
            stdin: Data(#"{"blockList": [{"name": "ads", "locations": [{"path": "/ads/*"}]}]}"#.utf8))
        #expect(put.stdoutText.hasSuffix("\n200"))
        #expect(try String(contentsOfFile: rulesFile, encoding: .utf8) == original)
        let badPattern = #"{"rewrite": [{"name": "r", "rules": [{"type": "Body", "match": {"value": "(", "regex": true}}]}]}"#
        let refused = try await Self.curl(
            kagami.authorization + ["-X", "PUT", "-H", "Content-Type: application/yaml", "-w", "\n%{http_code}", "--data-binary", "@-", "\(kagami.api)/rules"], stdin: Data(badPattern.utf8))
        #expect(refused.stdoutText.hasSuffix("\n400"))
        #expect(refused.stdoutText.contains(#""field":"rewrite[0].rules[0].match.value""#))
        #expect(refused.stdoutText.contains("invalid regular expression"))
        #expect(try await Self.curl(kagami.authorization + ["\(kagami.api)/rules"]).stdoutText.contains(#""name": "ads""#))
    }

    @Test func presetsListsBuiltInAndCustomProfilesWithTheirFigures() async throws {
        let directory = try temporaryFolder()
        let rulesFile = directory + "/rules.json"
        try #"{"throttling": {"presets": [{"name": "Hotel WiFi", "downloadKbps": 900, "uploadKbps": 120.5}]}}"#
            .write(toFile: rulesFile, atomically: true, encoding: .utf8)
        let kagami = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", directory + "/session.sqlite", "--rules", rulesFile,
        ])
        defer { kagami.stop() }
        let presets = try await Self.curl(kagami.authorization + ["\(kagami.api)/throttle/presets"]).stdoutText
        #expect(presets.contains(#"{"name":"3G","downloadKbps":780,"uploadKbps":330,"utilisation":100,"latencyMs":200,"mtu":1500,"#))
        #expect(presets.contains(#"{"name":"Hotel WiFi","downloadKbps":900,"uploadKbps":120.5,"#))
        #expect(presets.contains(#""builtIn":false"#))
        #expect(presets.components(separatedBy: #""builtIn":true"#).count - 1 == 18)
    }
}

/// A fresh folder for one `kagami proxy` run's session and documents.
func temporaryFolder() throws -> String {
    let folder = NSTemporaryDirectory() + "kagami-ui-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}
