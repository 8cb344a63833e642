import Foundation
import KagamiFlow
import Testing
@testable import KagamiRules

@Suite struct MapRemoteTests {
    @Test func httpToHTTPSWithDirectoryMapping() throws {
        let rules = try pipeline("""
            mapRemote:
              - name: staging
                from: {protocol: http, host: api.example.com, path: /v1/*}
                to: {protocol: https, host: staging.example.com, path: /v2/*}
            """)
        let verdict = rules.processRequest(request("http://api.example.com/v1/users/7?expand=1"))
        let forwarded = try #require(verdict.forwarded)
        #expect(forwarded.scheme == "https")
        #expect(forwarded.port == 443)
        #expect(forwarded.host == "staging.example.com")
        #expect(forwarded.target == "/v2/users/7?expand=1")
        #expect(forwarded.headers["Host"] == "staging.example.com")
        #expect(verdict.applications == [
            RuleApplication(name: "Map Remote 'staging'", description: "mapped to https://staging.example.com/v2/users/7?expand=1")
        ])
        #expect(rules.processRequest(request("http://api.example.com/v3/users")).forwarded?.host == "api.example.com")
    }

    @Test func fileToFileWithPortQueryAndPreservedHost() throws {
        let rules = try pipeline("""
            mapRemote:
              - name: local backend
                from: {host: api.example.com, path: /config.json}
                to: {host: 127.0.0.1, port: 9000, path: /fixtures/config-v2.json, query: "env=test"}
                preserveHost: true
            """)
        let forwarded = try #require(rules.processRequest(request("https://api.example.com/config.json?x=1")).forwarded)
        #expect(forwarded.url == "https://127.0.0.1:9000/fixtures/config-v2.json?env=test")
        #expect(forwarded.headers["Host"] == "api.example.com")
    }

    @Test func blankDestinationFieldsKeepTheOriginal() throws {
        let rules = try pipeline("""
            mapRemote:
              - name: port only
                from: {host: "*.example.com"}
                to: {port: 8081}
            """)
        let forwarded = try #require(rules.processRequest(request("http://a.example.com/p/q?r=s")).forwarded)
        #expect(forwarded.url == "http://a.example.com:8081/p/q?r=s")
    }

    @Test func firstEnabledMappingWins() throws {
        let rules = try pipeline("""
            mapRemote:
              - {name: off, enabled: false, from: {host: a.example}, to: {host: off.example}}
              - {name: one, from: {host: a.example}, to: {host: one.example}}
              - {name: two, from: {host: a.example}, to: {host: two.example}}
            """)
        #expect(rules.processRequest(request("http://a.example/")).forwarded?.host == "one.example")
    }
}

@Suite struct MapLocalTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "kagami-maplocal-\(UUID().uuidString)"
        let files = FileManager.default
        try files.createDirectory(atPath: directory + "/docs/users", withIntermediateDirectories: true)
        try Data("{\"id\": 7}".utf8).write(to: URL(fileURLWithPath: directory + "/docs/user.json"))
        try Data("[1, 2]".utf8).write(to: URL(fileURLWithPath: directory + "/docs/users/list.json"))
        try Data("<h1>hi</h1>".utf8).write(to: URL(fileURLWithPath: directory + "/docs/index.html"))
    }

    @Test func singleFile() throws {
        let rules = try pipeline("""
            mapLocal:
              - name: user
                from: {host: api.example.com, path: /v1/user}
                local: docs/user.json
            """, baseDirectory: directory)
        let verdict = rules.processRequest(request("https://api.example.com/v1/user?fresh=1"))
        let local = try #require(verdict.local)
        #expect(local.status == 200)
        #expect(local.headers["Content-Type"] == "application/json")
        #expect(local.headers["Content-Length"] == "9")
        #expect(local.loaded()?.body.data == Data("{\"id\": 7}".utf8))
        #expect(verdict.applications == [RuleApplication(name: "Map Local 'user'", description: "mapped to local file docs/user.json")])
    }

    @Test func directoryLookupIgnoresQuery() throws {
        let rules = try pipeline("""
            mapLocal:
              - name: docs
                from: {path: /api/*}
                local: \(directory)/docs
            """, baseDirectory: directory)
        let local = try #require(rules.processRequest(request("http://x.example/api/users/list.json?page=2")).local)
        #expect(local.filePath == directory + "/docs/users/list.json")
        #expect(local.headers["Content-Length"] == "6")
        let index = try #require(rules.processRequest(request("http://x.example/api/")).local)
        #expect(index.headers["Content-Type"] == "text/html; charset=utf-8")
    }

    @Test func missingFileGoesToTheRealServer() throws {
        let rules = try pipeline("""
            mapLocal:
              - name: docs
                from: {path: /api/*}
                local: docs
            mapRemote:
              - name: after
                from: {path: /api/*}
                to: {host: real.example}
            """, baseDirectory: directory)
        let verdict = rules.processRequest(request("http://x.example/api/users/missing.json"))
        #expect(verdict.forwarded?.host == "real.example")
        #expect(verdict.applications.map(\.name) == ["Map Remote 'after'"])
        #expect(rules.processRequest(request("http://x.example/api/../../etc/passwd")).local == nil)
        #expect(rules.processRequest(request("http://x.example/api/users")).local == nil, "a directory is not a file")
    }

    /// Map Local answers only from its folders: a rule pointing elsewhere is refused when the
    /// rules are read (with its field), and a link inside a folder that leads out of it, or to
    /// Kagami's own folder, is never followed.
    @Test func onlyFilesInsideTheFoldersAnswer() throws {
        let home = directory + "/home"
        try FileManager.default.createDirectory(atPath: home + "/map-local", withIntermediateDirectories: true)
        try Data("-----BEGIN PRIVATE KEY-----".utf8).write(to: URL(fileURLWithPath: home + "/kagami-ca-key.pem"))
        try Data("saved".utf8).write(to: URL(fileURLWithPath: home + "/map-local/saved.json"))
        try FileManager.default.createSymbolicLink(atPath: directory + "/docs/key.pem", withDestinationPath: home + "/kagami-ca-key.pem")
        try FileManager.default.createSymbolicLink(atPath: directory + "/docs/out", withDestinationPath: "/etc")
        let folders = MapLocalFolders(base: directory + "/docs", roots: [home + "/map-local"], excluding: [home])
        func compiled(_ local: String) throws(RuleDocumentError) -> RulePipeline {
            try RulePipeline(
                RuleSet(mapLocal: [MapLocalRule(name: "m", from: Location(path: "/m/*"), localPath: local)]), mapLocalFolders: folders)
        }
        for outside in ["/etc/passwd", "../../", home + "/kagami-ca-key.pem", home, "../home/kagami-ca-key.pem", "key.pem", "out/passwd"] {
            #expect(throws: RuleDocumentError.self, "\(outside)") { try compiled(outside) }
        }
        do {
            _ = try compiled("/etc/hostname")
        } catch {
            #expect(error.field == "mapLocal[0].local")
            #expect(error.message.contains("outside the folders Map Local may use"))
        }
        // A folder of the rules and the one open inside Kagami's own folder answer; links out don't.
        let rules = try compiled(".")
        #expect(rules.processRequest(request("http://x.example/m/user.json")).local != nil)
        #expect(rules.processRequest(request("http://x.example/m/key.pem")).local == nil)
        #expect(rules.processRequest(request("http://x.example/m/out/passwd")).local == nil)
        let saved = try compiled(home + "/map-local/saved.json")
        #expect(saved.processRequest(request("http://x.example/m/x")).local?.loaded()?.body.data == Data("saved".utf8))
        // Saving: below the folders only, with links resolved.
        #expect((try? folders.writable("new/answer.json").get()) == directory + "/docs/new/answer.json")
        #expect((try? folders.writable(home + "/map-local/answer.json").get()) != nil)
        for refused in ["/etc/x", "../escape.json", home + "/admin-token", "out/passwd", "a/../../b"] {
            #expect((try? folders.writable(refused).get()) == nil, "\(refused)")
        }
        #expect(MapLocalFolders(base: directory, roots: [home + "/sessions"], excluding: [home]).closedRoots == [home + "/sessions"])
        #expect(MapLocalFolders(base: home, excluding: [home]).closedRoots == [home])
        #expect(MapLocalFolders(base: home + "/map-local", excluding: [home]).closedRoots.isEmpty)
    }
}
