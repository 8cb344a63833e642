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

    /// curl with the admin token, as a program that read it from Kagami's folder would send.
    static func curl(_ kagami: KagamiProcess, _ arguments: [String], stdin: Data? = nil) async throws -> (status: String, body: String) {
        try await curl(kagami.authorization + arguments, stdin: stdin)
    }

    static func curl(_ arguments: [String], stdin: Data? = nil) async throws -> (status: String, body: String) {
        let result = try await CommandLineClient.curl.run(["-s", "--max-time", "30", "-w", "\n%{http_code}"] + arguments, stdin: stdin)
        let text = result.stdoutText
        let split = text.range(of: "\n", options: .backwards)
        return (split.map { String(text[$0.upperBound...]) } ?? text, split.map { String(text[..<$0.lowerBound]) } ?? "")
    }

    /// This process's environment with Kagami's own folder moved to `home`.
    static func environment(home: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["KAGAMI_HOME": home]) { _, new in new }
    }

    static let replacement = #"{"blockList":[{"name":"replaced","locations":[{"path":"/x"}]}]}"#

    @Test func crossSiteRequestsChangeNothing() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let rules = "\(kagami.api)/rules"
        // What a form or fetch() on another site can send without a preflight.
        let textPlain = try await Self.curl(kagami, ["-X", "PUT", "-H", "Content-Type: text/plain", "--data-binary", Self.replacement, rules])
        #expect(textPlain.status == "403", "\(textPlain)")
        #expect(textPlain.body.contains("needs Content-Type: application/json"))
        let form = try await Self.curl(kagami, ["-X", "POST", "--data-binary", "{}", "\(kagami.api)/import.har"])
        #expect(form.status == "403")
        let otherOrigin = try await Self.curl(kagami, ["-X", "PUT", "-H", "Content-Type: application/json", "-H", "Origin: http://attacker.invalid", "--data-binary", Self.replacement, rules])
        #expect(otherOrigin.status == "403")
        #expect(otherOrigin.body.contains("from the page at http://attacker.invalid"))
        let crossSite = try await Self.curl(kagami, ["-X", "PUT", "-H", "Content-Type: application/json", "-H", "Sec-Fetch-Site: cross-site", "--data-binary", Self.replacement, rules])
        #expect(crossSite.status == "403")
        let nullOrigin = try await Self.curl(kagami, ["-X", "DELETE", "-H", "Origin: null", "\(kagami.api)/flows"])
        #expect(nullOrigin.status == "403")
        #expect(try await Self.curl(kagami, [rules]).body.contains(#""name": "ads""#))

        // The UI's own page and a program are let through.
        let ownPage = try await Self.curl(kagami, [
            "-X", "PUT", "-H", "Content-Type: application/json; charset=utf-8", "-H", "Origin: http://127.0.0.1:\(kagami.uiPort ?? 0)",
            "-H", "Sec-Fetch-Site: same-origin", "--data-binary", Self.replacement, rules,
        ])
        #expect(ownPage.status == "200", "\(ownPage)")
        #expect(try await Self.curl(kagami, [rules]).body.contains(#""name": "replaced""#))
    }

    @Test func onlyLoopbackNamesReachTheUI() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let status = "\(kagami.api)/status"
        for host in ["127.0.0.1.attacker.invalid", "attacker.invalid", "127.1", "0x7f000001"] {
            let answer = try await Self.curl(kagami, ["-H", "Host: \(host):\(kagami.uiPort ?? 0)", status])
            #expect(answer.status == "403", "\(host): \(answer)")
        }
        for host in ["localhost", "127.0.0.1", "127.0.0.2", "[::1]"] {
            let answer = try await Self.curl(kagami, ["-H", "Host: \(host):\(kagami.uiPort ?? 0)", status])
            #expect(answer.status == "200", "\(host): \(answer)")
        }
    }

    /// A device using the proxy asks it for the admin API at any address of this host: refused
    /// before anything is dialled, whatever the spelling, even with an allow list that admits
    /// the address and even carrying the token; a CONNECT to it is refused at the CONNECT (the
    /// finding that let a phone on the network read the CA key through Map Local).
    @Test func theAdminAPIIsNotReachableThroughTheProxyUnderAnyAddress() async throws {
        let directory = try temporaryFolder()
        try Self.rules.write(toFile: directory + "/rules.yaml", atomically: true, encoding: .utf8)
        // Every address here is this host's; the list admits them, so the own-listener check is
        // what refuses.
        let kagami = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--session", directory + "/session.sqlite", "--rules", directory + "/rules.yaml",
            "--upstream-allow", "loopback", "--upstream-allow", "0.0.0.0/8", "--upstream-allow", "::/128",
        ])
        defer { kagami.stop() }
        let uiPort = kagami.uiPort ?? 0
        let proxy = ["-x", "http://127.0.0.1:\(kagami.port)"] + kagami.authorization
        for host in [
            "127.0.0.1", "localhost", "[::1]", "0.0.0.0", "[::]", "127.9.9.9", "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]",
            "[0:0:0:0:0:0:0:1]", "api.localhost", "LOCALHOST",
        ] {
            let put = try await Self.curl(proxy + ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", Self.replacement, "http://\(host):\(uiPort)/api/rules"])
            #expect(put.status == "403", "\(host): \(put)")
            #expect(put.body.contains("is Kagami itself"), "\(host): \(put.body)")
        }
        // Names the list doesn't hold are refused before any lookup, Kagami's or not.
        for host in ["127.0.0.1.", "0", "2130706433", "0x7f.1"] {
            let put = try await Self.curl(proxy + ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", Self.replacement, "http://\(host):\(uiPort)/api/rules"])
            #expect(put.status == "403", "\(host): \(put)")
            #expect(put.body.contains("destination not allowed"), "\(host): \(put.body)")
        }
        for host in ["127.0.0.1", "0.0.0.0"] {
            let loop = try await Self.curl(proxy + ["http://\(host):\(kagami.port)/"])
            #expect(loop.status == "403", "\(host): \(loop)")
        }
        // CONNECT, relayed (plain bytes after it) and as the finding sent it.
        for authority in ["0.0.0.0:\(uiPort)", "127.0.0.1:\(uiPort)", "[::]:\(uiPort)", "localhost:\(kagami.port)"] {
            let request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\nGET /api/rules HTTP/1.1\r\nHost: 127.0.0.1:\(uiPort)\r\nAuthorization: Bearer \(kagami.uiToken ?? "")\r\n\r\n"
            let answer = try await RawConnection.exchange(port: kagami.port, send: Data(request.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(authority): \(answer)")
            #expect(!answer.contains("blockList"), "\(authority): the rules leaked")
        }
        #expect(try await Self.curl(kagami, ["\(kagami.api)/rules"]).body.contains(#""name": "ads""#))
    }

    /// The same with HTTPS interception on: a CONNECT to the admin API is refused with 403 at
    /// the CONNECT, not answered 200 and decrypted.
    @Test func anInterceptedConnectToTheAdminAPIIsRefusedAtTheConnect() async throws {
        let directory = try temporaryFolder()
        let kagami = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--session", directory + "/session.sqlite",
             "--upstream-allow", "loopback", "--upstream-allow", "0.0.0.0/8"],
            environment: Self.environment(home: directory + "/home"))
        defer { kagami.stop() }
        let uiPort = kagami.uiPort ?? 0
        for authority in ["0.0.0.0:\(uiPort)", "127.0.0.1:\(uiPort)", "10.0.0.1:443"] {
            let answer = try await RawConnection.exchange(
                port: kagami.port, send: Data("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n".utf8)) { $0.contains("\r\n\r\n") }
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(authority): \(answer)")
        }
    }

    /// Without the token nothing of the admin API answers, on loopback too: another user of
    /// the machine can't read files through Map Local or write them through a saved response.
    @Test func theAdminAPIWantsItsTokenOnLoopback() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        for path in ["/rules", "/flows", "/status", "/breakpoints", "/export.har"] {
            let answer = try await Self.curl(["\(kagami.api)\(path)"])
            #expect(answer.status == "401", "\(path): \(answer)")
        }
        let put = try await Self.curl(["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", Self.replacement, "\(kagami.api)/rules"])
        #expect(put.status == "401")
        #expect(try await Self.curl(kagami, ["\(kagami.api)/rules"]).body.contains(#""name": "ads""#))
    }

    /// Map Local through the admin API reads only below its folders: never the CA key or the
    /// admin token, never a file elsewhere, not through a link.
    @Test func mapLocalNeverServesKagamisOwnFilesOrFilesElsewhere() async throws {
        let directory = try temporaryFolder()
        let home = directory + "/home"
        let files = directory + "/mocks"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        try "{\"ok\": true}".write(toFile: files + "/user.json", atomically: true, encoding: .utf8)
        try "outside".write(toFile: directory + "/outside.txt", atomically: true, encoding: .utf8)
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let kagami = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--session", directory + "/session.sqlite", "--map-local-root", files],
            environment: Self.environment(home: home))
        defer { kagami.stop() }
        // kagami created its CA and token in its own folder.
        #expect(FileManager.default.fileExists(atPath: home + "/kagami-ca-key.pem"))
        #expect(FileManager.default.fileExists(atPath: home + "/admin-token"))
        try FileManager.default.createSymbolicLink(atPath: files + "/key.pem", withDestinationPath: home + "/kagami-ca-key.pem")
        func mapLocal(_ local: String) -> String {
            #"{"mapLocal":[{"name":"m","from":{"path":"/mapped/*"},"local":"\#(local)"}]}"#
        }
        for local in [home + "/kagami-ca-key.pem", home + "/admin-token", home, directory + "/outside.txt", "../outside.txt", "/etc/passwd"] {
            let put = try await Self.curl(kagami, ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", mapLocal(local), "\(kagami.api)/rules"])
            #expect(put.status == "400", "\(local): \(put)")
            #expect(put.body.contains("outside the folders Map Local may use"), "\(local): \(put.body)")
        }
        // A folder of its own works; a link in it pointing at the CA key is not followed.
        let put = try await Self.curl(kagami, ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", mapLocal(files), "\(kagami.api)/rules"])
        #expect(put.status == "200", "\(put)")
        let proxy = ["-s", "--max-time", "30", "-x", "http://127.0.0.1:\(kagami.port)"]
        let mapped = try await CommandLineClient.curl.run(proxy + ["\(origin.baseURL)/mapped/user.json"]).stdoutText
        #expect(mapped == "{\"ok\": true}")
        let key = try await CommandLineClient.curl.run(proxy + ["\(origin.baseURL)/mapped/key.pem"]).stdoutText
        #expect(!key.contains("PRIVATE KEY"), "the CA key was served: \(key.prefix(60))")
        let traversal = try await CommandLineClient.curl.run(proxy + ["--path-as-is", "\(origin.baseURL)/mapped/../../home/kagami-ca-key.pem"]).stdoutText
        #expect(!traversal.contains("PRIVATE KEY"))
        // --map-local-root inside Kagami's own folder is refused at start (a proxy that started
        // anyway is stopped by the time limit, and the test fails rather than hangs).
        let refused = try await CommandLineClient("/usr/bin/timeout").run(
            ["60", try CommandLineClient.kagamiPath(), "proxy", "--port", "0", "--no-ui", "--session", directory + "/other.sqlite",
             "--map-local-root", home],
            environment: Self.environment(home: home))
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("inside Kagami's own folder"), "\(refused.stderr)")
    }

    /// A repeat of an imported request aimed at the admin API is refused like any other request.
    @Test func aRepeatAimedAtTheAdminAPIIsRefused() async throws {
        let kagami = try await Self.start()
        defer { kagami.stop() }
        let uiPort = kagami.uiPort ?? 0
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
        let imported = try await Self.curl(kagami, ["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-", "\(kagami.api)/import.har"], stdin: Data(archive.serialized().utf8))
        #expect(imported.status == "200", "\(imported)")
        let id = try #require(try JSONValue(parsing: imported.body)["ids"]?.arrayValue?.first?.stringValue)
        let repeated = try await Self.curl(kagami, ["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", #"{"count":1}"#, "\(kagami.api)/flows/\(id)/repeat"])
        #expect(repeated.status == "200", "\(repeated)")
        #expect(try await Self.curl(kagami, ["\(kagami.api)/rules"]).body.contains(#""name": "ads""#))
    }
}
