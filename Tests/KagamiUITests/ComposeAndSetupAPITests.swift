import Foundation
import KagamiJSON
import KagamiProxy
import KagamiRules
import Testing

@Suite("Compose, SSL Proxying, device setup and saving a response through the admin API")
struct ComposeAndSetupAPITests {
    @Test func composedRequestGoesThroughTheProxyAndIsRecorded() async throws {
        try await LiveSetup.with { live in
            let body = #"{"method":"post","url":"\#(live.origin.baseURL)/echo?from=compose","headers":[["X-From","compose"],["Content-Type","text/plain"]],"body":"written in the page"}"#
            let answer = try await live.json(.POST, "/api/compose", body: body)
            let id = try #require(answer["flowId"]?.stringValue)
            #expect(answer["status"]?.intValue == 200)
            let flow = try await live.json(.GET, "/api/flows/\(id)")
            #expect(flow["method"] == "POST")
            #expect(flow["url"]?.stringValue == "\(live.origin.baseURL)/echo?from=compose")
            #expect(flow["request"]?["headers"]?.arrayValue?.contains(["X-From", "compose"]) == true)
            let sent = try await live.api(.GET, "/api/flows/\(id)/request/body")
            #expect(sent.text == "written in the page")
        }
    }

    @Test func composeNamesWhatItCantSend() async throws {
        try await LiveSetup.with { live in
            let ftp = try await live.api(.POST, "/api/compose", body: #"{"url":"ftp://127.0.0.1/file"}"#)
            #expect(ftp.status == 400)
            #expect(try JSONValue(parsing: ftp.text)["field"] == "url")
            let header = try await live.api(.POST, "/api/compose", body: #"{"url":"http://127.0.0.1/","headers":[["Bad Name","x"]]}"#)
            #expect(header.status == 400)
            #expect(try JSONValue(parsing: header.text)["field"] == "headers[0]")
        }
    }

    @Test func rulesSchemaListsEveryRewriteTypeWithItsFields() async throws {
        try await LiveSetup.with { live in
            let types = try #require(try await live.json(.GET, "/api/rules/schema")["rewriteTypes"]?.arrayValue)
            #expect(types.compactMap { $0["type"]?.stringValue } == RewriteRuleType.allCases.map(\.rawValue))
            let add = try #require(types.first { $0["type"] == "Add Header" })
            #expect(add["where"] == ["request", "response", "both"])
            #expect(add["named"] == true && add["match"] == false && add["replace"] == true)
            let status = try #require(types.first { $0["type"] == "Response Status" })
            #expect(status["where"] == ["response"])
            #expect(status["named"] == false)
            let remove = try #require(types.first { $0["type"] == "Remove Query Param" })
            #expect(remove["where"] == ["request"] && remove["replace"] == false)
        }
    }

    @Test func sslProxyingListIsReplacedWhileRunning() async throws {
        try await LiveSetup.with { live in
            let start = try await live.json(.GET, "/api/ssl-proxying")
            #expect(start["include"] == [] && start["exclude"] == [])
            #expect(start["intercepting"] == false)
            let replaced = try await live.api(.PUT, "/api/ssl-proxying", body: #"{"include":["*.example.com","api.test:8443"],"exclude":["bank.example.com"]}"#)
            #expect(replaced.status == 200)
            #expect(live.proxy.sslProxying.current.intercepts(host: "a.example.com", port: 443))
            #expect(!live.proxy.sslProxying.current.intercepts(host: "bank.example.com", port: 443))
            #expect(!live.proxy.sslProxying.current.intercepts(host: "api.test", port: 443))
            let refused = try await live.api(.PUT, "/api/ssl-proxying", body: #"{"include":[],"exclude":["ok.example","host:99999"]}"#)
            #expect(refused.status == 400)
            #expect(try JSONValue(parsing: refused.text)["field"] == "exclude[1]")
            #expect(live.proxy.sslProxying.current.exclude.count == 1)
        }
    }

    @Test func deviceSetupSaysTheProxyListensOnLoopbackOnly() async throws {
        try await LiveSetup.with { live in
            let device = try await live.json(.GET, "/api/device")
            #expect(device["port"]?.intValue == live.proxyPort)
            #expect(device["listenHost"] == "127.0.0.1")
            #expect(device["listensOnNetwork"] == false)
            #expect(device["addresses"] == [])
            #expect(device["caURL"] == "http://kagami.ssl/")
        }
    }

    @Test func responseBodyIsSavedAsAFileOnce() async throws {
        try await LiveSetup.with { live in
            _ = try await live.curl(["\(live.origin.baseURL)/echo?saved=1"])
            let flows = try await live.json(.GET, "/api/flows")
            let id = try #require(flows["flows"]?[0]?["id"]?.stringValue)
            let folder = live.directory.appendingPathComponent("home/map-local").path
            let file = folder + "/nested/answer.txt"
            let saved = try await live.json(.POST, "/api/flows/\(id)/response/save", body: #"{"path":"\#(file)"}"#)
            let expected = try await live.api(.GET, "/api/flows/\(id)/response/body?decode=1").text
            #expect(saved["size"]?.intValue == expected.utf8.count)
            #expect(try String(contentsOfFile: file, encoding: .utf8) == expected)
            let again = try await live.api(.POST, "/api/flows/\(id)/response/save", body: #"{"path":"\#(file)"}"#)
            #expect(again.status == 409)
            // A relative path starts in the Map Local folder.
            let relative = try await live.json(.POST, "/api/flows/\(id)/response/save", body: #"{"path":"answer.txt"}"#)
            #expect(relative["path"]?.stringValue?.hasSuffix("/home/map-local/answer.txt") == true)
            #expect(FileManager.default.fileExists(atPath: folder + "/answer.txt"))
        }
    }

    /// A holder of the admin API writes no file outside the Map Local folders: not beside them,
    /// not up a `..`, not through a link, and nothing in Kagami's own folder around them.
    @Test func responseBodyIsNeverSavedOutsideTheMapLocalFolders() async throws {
        try await LiveSetup.with { live in
            _ = try await live.curl(["\(live.origin.baseURL)/echo?saved=1"])
            let id = try #require(try await live.json(.GET, "/api/flows")["flows"]?[0]?["id"]?.stringValue)
            let home = live.directory.appendingPathComponent("home").path
            try FileManager.default.createDirectory(atPath: home + "/map-local", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: home + "/map-local/out", withDestinationPath: live.directory.path)
            for path in [
                live.directory.appendingPathComponent("outside.txt").path, "../kagami-ca-key.pem", home + "/admin-token",
                "out/through-a-link.txt", "/etc/kagami-test-never-written", "nested/../../escape.txt",
            ] {
                let answer = try await live.api(.POST, "/api/flows/\(id)/response/save", body: #"{"path":"\#(path)","overwrite":true}"#)
                #expect(answer.status == 403, "\(path): \(answer.text)")
                #expect(answer.text.contains("outside the folders Map Local may use"), "\(path)")
            }
            let written = try FileManager.default.subpathsOfDirectory(atPath: live.directory.path)
            #expect(!written.contains { $0.hasSuffix(".txt") || $0.hasSuffix(".pem") || $0.hasSuffix("admin-token") }, "\(written)")
            #expect(!FileManager.default.fileExists(atPath: "/etc/kagami-test-never-written"))
        }
    }
}
