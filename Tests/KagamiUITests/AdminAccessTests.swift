import Foundation
import KagamiJSON
import KagamiTesting
import Testing

/// Who may change things through the admin API of a running `kagami proxy`: not a page on
/// another site (CSRF), not a name rebound to 127.0.0.1, not a device riding on the proxy.
@Suite("Admin API access")
struct AdminAccessTests {
    static let rules = """
        blockList:
          - name: ads
            locations: [{path: /ads/*}]
        """

    static func start() async throws -> KagamiProcess {
        let directory = try temporaryFolder()
        try rules.write(toFile: directory + "/rules.yaml", atomically: true, encoding: .utf8)
        return try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", directory + "/session.sqlite",
            "--rules", directory + "/rules.yaml",
        ])
    }

    static func curl(_ arguments: [String], stdin: Data? = nil) async throws -> (status: String, body: String) {
        let result = try await CommandLineClient.curl.run(["-s", "--max-time", "30", "-w", "\n%{http_code}"] + arguments, stdin: stdin)
        let text = result.stdoutText
        let split = text.range(of: "\n", options: .backwards)
        return (split.map { String(text[$0.upperBound...]) } ?? text, split.map { String(text[..<$0.lowerBound]) } ?? "")
    }

    static let replacement = #"{"blockList":[{"name":"replaced","locations":[{"path":"/x"}]}]}"#

    @Test func crossSiteRequestsChangeNothing() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let rules = "\(kagami.api)/rules"
        // What a form or fetch() on another site can send without a preflight.
        let textPlain = try await Self.curl(["-X", "PUT", "-H", "Content-Type: text/plain", "--data-binary", Self.replacement, rules])
        #expect(textPlain.status == "403", "\(textPlain)")
        #expect(textPlain.body.contains("needs Content-Type: application/json"))
        let form = try await Self.curl(["-X", "POST", "--data-binary", "{}", "\(kagami.api)/import.har"])
        #expect(form.status == "403")
        let otherOrigin = try await Self.curl(["-X", "PUT", "-H", "Content-Type: application/json", "-H", "Origin: http://attacker.invalid", "--data-binary", Self.replacement, rules])
        #expect(otherOrigin.status == "403")
        #expect(otherOrigin.body.contains("from the page at http://attacker.invalid"))
        let crossSite = try await Self.curl(["-X", "PUT", "-H", "Content-Type: application/json", "-H", "Sec-Fetch-Site: cross-site", "--data-binary", Self.replacement, rules])
        #expect(crossSite.status == "403")
        let nullOrigin = try await Self.curl(["-X", "DELETE", "-H", "Origin: null", "\(kagami.api)/flows"])
        #expect(nullOrigin.status == "403")
        #expect(try await Self.curl([rules]).body.contains(#""name": "ads""#))

        // The UI's own page and a program are let through.
        let ownPage = try await Self.curl([
            "-X", "PUT", "-H", "Content-Type: application/json; charset=utf-8", "-H", "Origin: http://127.0.0.1:\(kagami.uiPort ?? 0)",
            "-H", "Sec-Fetch-Site: same-origin", "--data-binary", Self.replacement, rules,
        ])
        #expect(ownPage.status == "200", "\(ownPage)")
        #expect(try await Self.curl([rules]).body.contains(#""name": "replaced""#))
    }

    @Test func onlyLoopbackNamesReachTheUI() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let status = "\(kagami.api)/status"
        for host in ["127.0.0.1.attacker.invalid", "attacker.invalid", "127.1", "0x7f000001"] {
            let answer = try await Self.curl(["-H", "Host: \(host):\(kagami.uiPort ?? 0)", status])
            #expect(answer.status == "403", "\(host): \(answer)")
        }
        for host in ["localhost", "127.0.0.1", "127.0.0.2", "[::1]"] {
            let answer = try await Self.curl(["-H", "Host: \(host):\(kagami.uiPort ?? 0)", status])
            #expect(answer.status == "200", "\(host): \(answer)")
        }
    }

    /// A device using the proxy asks it for the admin API on 127.0.0.1: refused, whatever the
    /// loopback name, and a repeat of an imported request aimed there is refused the same way.
    @Test func theAdminAPIIsNotReachableThroughTheProxy() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let uiPort = kagami.uiPort ?? 0
        let proxy = ["-x", "http://127.0.0.1:\(kagami.port)"]
        for host in ["127.0.0.1", "localhost", "127.0.0.1.", "[::1]"] {
            let put = try await Self.curl(proxy + ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", Self.replacement, "http://\(host):\(uiPort)/api/rules"])
            #expect(put.status == "403", "\(host): \(put)")
            #expect(put.body.contains("destination not allowed"), "\(host)")
        }
        let loop = try await Self.curl(proxy + ["http://127.0.0.1:\(kagami.port)/"])
        #expect(loop.status == "403")

        // The chain a page could try: import a HAR whose request is a PUT to the admin API,
        // then ask for it to be repeated through the proxy.
        let archive: JSONValue = ["log": ["version": "1.2", "creator": ["name": "t", "version": "1"], "entries": [[
            "startedDateTime": "2026-11-24T10:00:00.000Z", "time": 1,
            "request": [
                "method": "PUT", "url": .string("http://127.0.0.1:\(uiPort)/api/rules"), "httpVersion": "HTTP/1.1",
                "headers": [["name": "Content-Type", "value": "application/json"]], "queryString": [], "cookies": [],
                "headersSize": -1, "bodySize": .integer(Self.replacement.utf8.count),
                "postData": ["mimeType": "application/json", "text": .string(Self.replacement)],
            ],
            "response": [
                "status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                "content": ["size": 0, "mimeType": "text/plain"], "redirectURL": "", "headersSize": -1, "bodySize": 0,
            ],
            "cache": [:], "timings": ["send": 0, "wait": 1, "receive": 0],
        ]]]]
        let imported = try await Self.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-", "\(kagami.api)/import.har"], stdin: Data(archive.serialized().utf8))
        #expect(imported.status == "200", "\(imported)")
        let id = try #require(try JSONValue(parsing: imported.body)["ids"]?.arrayValue?.first?.stringValue)
        let repeated = try await Self.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", #"{"count":1}"#, "\(kagami.api)/flows/\(id)/repeat"])
        #expect(repeated.status == "200", "\(repeated)")
        #expect(try await Self.curl(["\(kagami.api)/rules"]).body.contains(#""name": "ads""#))
    }
}
