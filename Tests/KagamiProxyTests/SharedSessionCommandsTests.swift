import Foundation
import KagamiPostgresStore
import KagamiStore
import KagamiTesting
import Testing

/// The commands that read a session (`validate`, `infer`) reading a named session of the shared
/// store that a running `kagami proxy --store` recorded, as they read a session file.
@Suite struct SharedSessionCommandsTests {
    @Test func validateAndInferReadASessionOfTheSharedStore() async throws {
        let origin = try await OriginServer.start()
        let (url, name) = try await KagamiProcess.recordSession(origin, requests: ["/echo?page=1", "/echo?page=2"])
        let folder = NSTemporaryDirectory() + "kagami-commands-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The echo origin answers `"bodySize":0`: a description saying it is a string fails
        // each recorded exchange.
        let contract = folder + "/echo.yaml"
        try Data("""
            openapi: 3.1.0
            info: {title: echo, version: "1"}
            servers: [{url: "\(origin.baseURL)"}]
            paths:
              /echo:
                get:
                  responses:
                    "200":
                      description: the request as received
                      content:
                        application/json:
                          schema:
                            type: object
                            required: [method, bodySize]
                            properties:
                              method: {type: string}
                              bodySize: {type: string}

            """.utf8).write(to: URL(fileURLWithPath: contract))
        let kagami = try CommandLineClient.kagami()

        let checked = try await kagami.run(["validate", "--contract", contract, "--store", url, "--session", name, "--format", "json"])
        #expect(checked.status == 1, "\(checked.stderr)")
        let report = try JSONSerialization.jsonObject(with: checked.stdout) as? [String: Any]
        let text = String(decoding: checked.stdout, as: UTF8.self)
        #expect(report != nil)
        #expect(text.contains("bodySize"))
        #expect(text.components(separatedBy: "/echo?page=").count - 1 >= 2)

        let drafted = try await kagami.run(["infer", "--store", url, "--session", name])
        #expect(drafted.status == 0, "\(drafted.stderr)")
        #expect(drafted.stdoutText.contains("  /echo:\n"))
        #expect(drafted.stdoutText.contains("name: page"))
        #expect(drafted.stdoutText.contains("- url: \"\(origin.baseURL)\""))

        // A session the store doesn't hold: the reason, and validate's "unreadable input" status.
        let missing = "no-such-\(UUID().uuidString)"
        let notThere = try await kagami.run(["validate", "--contract", contract, "--store", url, "--session", missing])
        #expect(notThere.status == 2)
        #expect(notThere.stderr.contains("no session named \(missing)"))
        let inferMissing = try await kagami.run(["infer", "--store", url, "--session", missing])
        #expect(inferMissing.status != 0)
        #expect(inferMissing.stderr.contains("no session named \(missing)"))
        // --store names a session: without one, or with a HAR file instead, the usage error says so.
        let noSession = try await kagami.run(["infer", "--store", url])
        #expect(noSession.status != 0)
        #expect(noSession.stderr.contains("--store URL --session NAME"))
        try await origin.stop()
    }
}

/// `curl`, `repeat` and `import` on a named session of the shared store, as on a session file.
@Suite struct SharedSessionRequestCommandsTests {
    @Test func curlPrintsACommandThatSendsTheRecordedRequestAgain() async throws {
        let origin = try await OriginServer.start()
        let (url, name) = try await KagamiProcess.recordSession(origin, requests: ["/echo?copy=1"])
        let kagami = try CommandLineClient.kagami()
        let id = try await Self.firstID(url: url, name: name)

        let printed = try await kagami.run(["curl", "--store", url, "--session", name, id])
        #expect(printed.status == 0, "\(printed.stderr)")
        let before = origin.received.count
        let sent = try await CommandLineClient("/bin/bash").run(
            ["-c", printed.stdoutText.trimmingCharacters(in: .newlines) + " --silent --show-error --output /dev/null"])
        #expect(sent.status == 0, "\(sent.stderr)\n\(printed.stdoutText)")
        #expect(origin.received.count == before + 1)
        #expect(origin.received.last?.method == "GET")
        #expect(origin.received.last?.uri == "/echo?copy=1")

        // An id the session doesn't hold: the error names the session in its database.
        let unknown = UUID().uuidString
        let missing = try await kagami.run(["curl", "--store", url, "--session", name, unknown])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no exchange \(unknown) in \(name) in postgres://"))
        let noSession = try await kagami.run(["curl", "--store", url, id])
        #expect(noSession.status != 0)
        #expect(noSession.stderr.contains("give --session NAME"))
        try await origin.stop()
    }

    @Test func repeatRecordsEachSendAsARepeatInTheSameSession() async throws {
        let origin = try await OriginServer.start()
        let (url, name) = try await KagamiProcess.recordSession(origin, requests: ["/echo?again=1"])
        let kagami = try CommandLineClient.kagami()
        let id = try await Self.firstID(url: url, name: name)
        let before = origin.received.count

        let repeated = try await kagami.run(["repeat", "--store", url, "--session", name, id, "--count", "2"])
        #expect(repeated.status == 0, "\(repeated.stderr)")
        #expect(origin.received.count == before + 2)
        let store = try #require(try await PostgresFlowStore.openExisting(try PostgresLocation(url: url), session: name))
        let repeats = try await store.repeats(of: try #require(UUID(uuidString: id)))
        #expect(repeats.count == 2)
        #expect(repeats.allSatisfy { $0.response?.status == 200 && $0.request.target == "/echo?again=1" })
        #expect(try await store.count() == 3)
        await store.close()
        try await origin.stop()
    }

    @Test func importReadsAnArchiveIntoASessionOfTheSharedStore() async throws {
        let url = try KagamiProcess.postgresURL()
        let folder = try TemporaryFolder.make("import")
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("two.har").path
        try Data(Self.archive.utf8).write(to: URL(fileURLWithPath: archive))
        let name = "import-" + UUID().uuidString
        let kagami = try CommandLineClient.kagami()

        let imported = try await kagami.run(["import", archive, "--store", url, "--session", name])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdoutText.contains("Imported 2 exchanges into \(name) in postgres://"))
        let listed = try await kagami.run(["flows", "--store", url, "--session", name])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdoutText.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("GET 200 https://api.example.com/v1/items?page=2") == true)
        #expect(lines.last?.contains("POST 201 https://api.example.com/v1/items") == true)

        // Bodies byte for byte; credentials redacted as `proxy --store` redacts them.
        let store = try #require(try await PostgresFlowStore.openExisting(try PostgresLocation(url: url), session: name))
        let flows = try await store.allFlows(includeBodies: true)
        #expect(flows.map { $0.response?.body.data } == [Data(#"{"items":[]}"#.utf8), Data(#"{"id":7}"#.utf8)])
        #expect(flows.last?.request.body.data == Data(#"{"name":"seven"}"#.utf8))
        #expect(flows.first?.request.headers.values(for: "Authorization") == ["[redacted by Kagami]"])
        await store.close()

        // Into the same session again: appended, as into a session file.
        let again = try await kagami.run(["import", archive, "--store", url, "--session", name])
        #expect(again.status == 0, "\(again.stderr)")
        let relisted = try await kagami.run(["flows", "--store", url, "--session", name])
        #expect(relisted.stdoutText.split(separator: "\n").count == 4)
    }

    /// The id of the session's first exchange, as `kagami flows --ids` prints it.
    static func firstID(url: String, name: String) async throws -> String {
        let listed = try await CommandLineClient.kagami().run(["flows", "--store", url, "--session", name, "--ids"])
        let line = try #require(listed.stdoutText.split(separator: "\n").first, "\(listed.stderr)")
        return String(line.prefix(36))
    }

    static let archive = """
        {"log": {"version": "1.2", "creator": {"name": "tests", "version": "1"}, "entries": [
          {"startedDateTime": "2026-11-20T10:41:07.512Z", "time": 12,
           "request": {"method": "GET", "url": "https://api.example.com/v1/items?page=2", "httpVersion": "HTTP/1.1",
             "cookies": [], "headers": [{"name": "Host", "value": "api.example.com"}, {"name": "Authorization", "value": "Bearer s3cret"}],
             "queryString": [{"name": "page", "value": "2"}], "headersSize": -1, "bodySize": 0},
           "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
             "headers": [{"name": "Content-Type", "value": "application/json"}],
             "content": {"size": 12, "mimeType": "application/json", "text": "{\\"items\\":[]}"},
             "redirectURL": "", "headersSize": -1, "bodySize": 12},
           "cache": {}, "timings": {"send": 1, "wait": 10, "receive": 1}},
          {"startedDateTime": "2026-11-20T10:41:08.000Z", "time": 20,
           "request": {"method": "POST", "url": "https://api.example.com/v1/items", "httpVersion": "HTTP/1.1",
             "cookies": [], "headers": [{"name": "Host", "value": "api.example.com"}, {"name": "Content-Type", "value": "application/json"}],
             "queryString": [], "postData": {"mimeType": "application/json", "text": "{\\"name\\":\\"seven\\"}"},
             "headersSize": -1, "bodySize": 16},
           "response": {"status": 201, "statusText": "Created", "httpVersion": "HTTP/1.1", "cookies": [],
             "headers": [{"name": "Content-Type", "value": "application/json"}],
             "content": {"size": 8, "mimeType": "application/json", "text": "{\\"id\\":7}"},
             "redirectURL": "", "headersSize": -1, "bodySize": 8},
           "cache": {}, "timings": {"send": 1, "wait": 18, "receive": 1}}
        ]}}
        """
}

/// `kagami push`: a session file a real proxy recorded, uploaded into a new session of the
/// shared store and read back with `flows --store` and the store itself.
@Suite struct PushTests {
    @Test func pushUploadsARecordedSessionRedacted() async throws {
        let url = try KagamiProcess.postgresURL()
        let origin = try await OriginServer.start()
        let echo = try PeerServer.webSocketEcho()
        defer { echo.stop() }
        let folder = NSTemporaryDirectory() + "kagami-push-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/checkout-bug-\(UUID().uuidString.prefix(8)).sqlite"

        // Recorded into a session file by a real proxy: two requests with credentials and a
        // body, and a WebSocket conversation.
        // (websockets goes through an HTTP proxy with CONNECT: the proxy looks inside, with a CA
        // of its own in a home folder of the test's.)
        var environment = ProcessInfo.processInfo.environment
        environment["KAGAMI_HOME"] = folder + "/home"
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--session", file], environment: environment)
        let through = ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer s3cret"]
        #expect(try await CommandLineClient.curl.run(through + ["\(origin.baseURL)/echo?n=1"]).stdoutText == "200")
        #expect(try await CommandLineClient.curl.run(through + ["-H", "Cookie: sid=abc", "--data-binary", "hello body", "\(origin.baseURL)/echo?n=2"]).stdoutText == "200")
        let run = try await WebSocketPeer.run(["client", "ws://127.0.0.1:\(echo.port)/chat", "--proxy", "http://127.0.0.1:\(proxy.port)", "--big", "100000"])
        #expect(run.status == 0, "\(run.stderr)")
        proxy.stop()
        let local = try SQLiteFlowStore(path: file)
        let recorded = try await local.allFlows(includeBodies: true)
        #expect(recorded.count == 3)
        let socket = try #require(recorded.first { $0.isWebSocket })
        let recordedMessages = try await local.messages(of: socket.id, offset: 0, limit: nil)
        #expect(recordedMessages.count >= 2)

        let kagami = try CommandLineClient.kagami()
        let name = (file as NSString).lastPathComponent.replacingOccurrences(of: ".sqlite", with: "")
        let pushed = try await kagami.run(["push", file, "--store", url])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stdoutText.contains("Pushed 3 exchanges and \(recordedMessages.count) WebSocket messages"))
        #expect(pushed.stdoutText.contains("to \(name) in postgres://"))

        // Read back through the command line, as a teammate would.
        let lines = try await kagami.run(["flows", "--store", url, "--session", name, "--ids"])
        #expect(lines.status == 0, "\(lines.stderr)")
        let listed = lines.stdoutText.split(separator: "\n")
        #expect(listed.count == 3)
        #expect(listed.map { String($0.prefix(36)) } == recorded.map(\.id.uuidString))
        #expect(listed.contains { $0.contains("POST 200 \(origin.baseURL)/echo?n=2") })

        // And through the store: bodies byte for byte, messages in order, credentials redacted.
        let remote = try #require(try await PostgresFlowStore.openExisting(try PostgresLocation(url: url), session: name))
        let stored = try await remote.allFlows(includeBodies: true)
        #expect(stored.map(\.request.body.data) == recorded.map(\.request.body.data))
        #expect(stored.map { $0.response?.body.data } == recorded.map { $0.response?.body.data })
        #expect(stored.contains { $0.request.body.data == Data("hello body".utf8) })
        let storedMessages = try await remote.messages(of: socket.id, offset: 0, limit: nil)
        #expect(storedMessages.map(\.data) == recordedMessages.map(\.data))
        #expect(storedMessages.map(\.direction) == recordedMessages.map(\.direction))
        for flow in stored where !flow.isWebSocket {
            #expect(flow.request.headers.values(for: "Authorization") == ["[redacted by Kagami]"])
        }
        #expect(stored.contains { $0.request.headers.values(for: "Cookie") == ["[redacted by Kagami]"] })
        await remote.close()

        // The session now exists: pushing again is refused rather than mixed in.
        let again = try await kagami.run(["push", file, "--store", url])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already has a session named \(name)"))
        // Another name takes it again, with header values as they are.
        let copy = name + "-raw"
        let raw = try await kagami.run(["push", file, "--store", url, "--session", copy, "--no-redaction"])
        #expect(raw.status == 0, "\(raw.stderr)")
        let rawStore = try #require(try await PostgresFlowStore.openExisting(try PostgresLocation(url: url), session: copy))
        #expect(try await rawStore.allFlows(includeBodies: false).contains { $0.request.headers.values(for: "Authorization") == ["Bearer s3cret"] })
        await rawStore.close()
        let missing = try await kagami.run(["push", folder + "/none.sqlite", "--store", url])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no session file at"))
        try await origin.stop()
    }
}

/// Redaction of query parameters and JSON body fields by `kagami proxy --store`, from the rules
/// document and the options: the origin and the client see every value, the shared store none.
@Suite struct SharedStoreRedactionTests {
    @Test func queryParametersAndJSONFieldsNeverReachTheSharedStore() async throws {
        let url = try KagamiProcess.postgresURL()
        let origin = try await OriginServer.start()
        let folder = NSTemporaryDirectory() + "kagami-redact-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rules = folder + "/rules.yaml"
        try Data("""
            redaction:
              query: [api_key]
              jsonFields: [password, /uri]

            """.utf8).write(to: URL(fileURLWithPath: rules))
        let name = "redact-" + UUID().uuidString
        let proxy = try await KagamiProcess.start([
            "proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", url, "--session", name, "--rules", rules,
            "--redact-query", "sig", "--redact-json-field", "/headers",
        ])
        // The echo origin answers with the request's URI and headers in JSON.
        let answer = try await CommandLineClient.curl.run([
            "-s", "-x", "http://127.0.0.1:\(proxy.port)", "-H", "Content-Type: application/json", "-H", "Authorization: Bearer t0k3n-h3ader",
            "--data-binary", #"{"user":"ada","password":"hunter2-s3cret","remember":true}"#,
            "\(origin.baseURL)/echo?page=2&api_key=k3y-s3cret&sig=sig-s3cret",
        ])
        // Nothing changed on the wire.
        #expect(answer.stdoutText.contains("api_key=k3y-s3cret&sig=sig-s3cret"))
        #expect(answer.stdoutText.contains("t0k3n-h3ader"))
        #expect(origin.received.last?.body == Data(#"{"user":"ada","password":"hunter2-s3cret","remember":true}"#.utf8))
        proxy.stop()

        let kagami = try CommandLineClient.kagami()
        let exported = try await kagami.run(["export", "--store", url, "--session", name, "--format", "har"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let har = exported.stdoutText
        #expect(!har.contains("s3cret"))
        #expect(!har.contains("t0k3n-h3ader"))
        let archive = try JSONSerialization.jsonObject(with: exported.stdout) as? [String: Any]
        let entry = try #require(((archive?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let request = try #require(entry["request"] as? [String: Any])
        #expect(request["url"] as? String == "\(origin.baseURL)/echo?page=2&api_key=%5Bredacted%20by%20Kagami%5D&sig=%5Bredacted%20by%20Kagami%5D")
        let posted = (request["postData"] as? [String: Any])?["text"] as? String
        #expect(posted == #"{"user":"ada","password":"[redacted by Kagami]","remember":true}"#)
        let content = ((entry["response"] as? [String: Any])?["content"] as? [String: Any])?["text"] as? String
        let response = try JSONSerialization.jsonObject(with: Data((content ?? "").utf8)) as? [String: Any]
        #expect(response?["uri"] as? String == "[redacted by Kagami]")
        #expect(response?["headers"] as? String == "[redacted by Kagami]")
        #expect(response?["method"] as? String == "POST")

        // A rules document with a mistake in its redaction section is refused, saying where.
        try Data("redaction:\n  jsonFields: [\"\"]\n".utf8).write(to: URL(fileURLWithPath: rules))
        let refused = try await kagami.run(["proxy", "--port", "0", "--no-ui", "--store", url, "--session", name, "--rules", rules])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("redaction.jsonFields[0]"))
        try await origin.stop()
    }
}
