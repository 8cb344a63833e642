import Foundation
import KagamiTesting
import Synchronization
import Testing

/// `kagami serve --store postgres://…` over sessions a running `kagami proxy` records into:
/// the list of sessions, one session's UI API, its live event stream fed by the proxy's
/// commits (LISTEN/NOTIFY, across processes), HAR export, Copy cURL, the link per exchange;
/// and `kagami flows`/`export` reading the same session with `--store`.
@Suite struct ServeTests {
    @Test func serveShowsASessionLiveWhileAProxyRecordsIt() async throws {
        let url = try KagamiProcess.postgresURL()
        let origin = try await OriginServer.start()
        let name = "serve-" + UUID().uuidString
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", url, "--session", name])
        defer { proxy.stop() }
        let through = ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}\n"]
        for index in 1...3 {
            // Credentials are redacted before they reach the shared store (the origin still gets them).
            let request = ["-H", "Authorization: Bearer s3cret-\(index)", "\(origin.baseURL)/echo?before=\(index)"]
            #expect(try await CommandLineClient.curl.run(through + request).stdoutText == "200\n")
        }
        let serve = try await KagamiProcess.start(["serve", "--store", url, "--port", "0"])
        defer { serve.stop() }
        let base = "http://127.0.0.1:\(serve.port)"
        func get(_ path: String, _ options: [String] = []) async throws -> String {
            try await CommandLineClient.curl.run(["-s"] + serve.authorization + options + [base + path]).stdoutText
        }
        // On loopback too, nothing without the token.
        #expect(try await CommandLineClient.curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/api/sessions"]).stdoutText == "401")

        let sessions = try JSONSerialization.jsonObject(with: Data(try await get("/api/sessions").utf8)) as? [String: Any]
        let listed = (sessions?["sessions"] as? [[String: Any]])?.first { $0["name"] as? String == name }
        #expect(listed?["flows"] as? Int == 3)
        #expect((listed?["recordedBy"] as? String)?.contains("@") == true)
        #expect(listed?["createdAt"] is String)
        #expect(try await get("/").contains(">\(name)</a>"))

        // The stream of the session, while the proxy goes on recording into it.
        let path = "/sessions/\(name)/api/events"
        let finished = StreamEnded()
        let listener = Task {
            defer { finished.value.store(true, ordering: .relaxed) }
            return try await RawConnection.exchange(
                port: serve.port, send: Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(serve.port)\r\nAuthorization: Bearer \(serve.uiToken ?? "")\r\n\r\n".utf8),
                timeout: .seconds(60),
                until: { $0.contains("\"query\":\"live=") })
        }
        // Until the stream has one: requests sent before it subscribed are not in it.
        var sent = 0
        while sent < 100, !finished.value.load(ordering: .relaxed) {
            sent += 1
            _ = try await CommandLineClient.curl.run(through + ["\(origin.baseURL)/echo?live=\(sent)"])
            try await Task.sleep(for: .milliseconds(300))
        }
        let stream = try await listener.value
        #expect(stream.contains("event: hello"))
        #expect(stream.contains("event: flow\ndata: {"))
        #expect(stream.contains("\"path\":\"/echo\",\"query\":\"live="))

        let list = try JSONSerialization.jsonObject(with: Data(try await get("/sessions/\(name)/api/flows").utf8)) as? [String: Any]
        let flows = list?["flows"] as? [[String: Any]] ?? []
        #expect(list?["total"] as? Int == 3 + sent)
        let id = try #require(flows.first?["id"] as? String)
        let har = try JSONSerialization.jsonObject(with: Data(try await get("/sessions/\(name)/api/export.har").utf8)) as? [String: Any]
        #expect(((har?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 3 + sent)
        #expect(try await get("/sessions/\(name)/api/flows/\(id)/curl").contains("/echo?before=1"))
        #expect(try await get("/sessions/\(name)/").contains("<script type=\"module\" src=\"main.js\">"))
        let link = try await get("/sessions/\(name)/flows/\(id)", ["-o", "/dev/null", "-w", "%{http_code} %{redirect_url}"])
        #expect(link == "302 \(base)/sessions/\(name)/#flow=\(id)")
        #expect(try await get("/sessions/no-such-session-\(UUID().uuidString)/api/flows", ["-o", "/dev/null", "-w", "%{http_code}"]) == "404")
        // Repeat needs a proxy in the process: serve has none.
        #expect(try await get("/sessions/\(name)/api/flows/\(id)/repeat", ["-X", "POST", "-H", "Content-Type: application/json", "-d", "{}", "-o", "/dev/null", "-w", "%{http_code}"]) == "503")

        // The command line reads the same session.
        let binary = try CommandLineClient.kagamiPath()
        let lines = try await CommandLineClient(binary).run(["flows", "--store", url, "--session", name]).stdoutText
        #expect(lines.split(separator: "\n").count == 3 + sent)
        let exported = try await CommandLineClient(binary).run(["export", "--store", url, "--session", name, "--format", "har"]).stdout
        let archive = try JSONSerialization.jsonObject(with: exported) as? [String: Any]
        // (The echo server's response body repeats the header: bodies are not redacted.)
        let entries = (archive?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let credentials = entries.flatMap { entry in
            ((entry["request"] as? [String: Any])?["headers"] as? [[String: Any]] ?? [])
                .filter { ($0["name"] as? String)?.lowercased() == "authorization" }
                .compactMap { $0["value"] as? String }
        }
        #expect(credentials == Array(repeating: "[redacted by Kagami]", count: 3))
        #expect(((archive?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 3 + sent)
        let missing = try await CommandLineClient(binary).run(["flows", "--store", url, "--session", "no-such-\(UUID().uuidString)"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no session named"))
        try await origin.stop()
    }
}

final class StreamEnded: Sendable {
    let value = Atomic<Bool>(false)
}
