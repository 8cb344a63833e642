import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON
@testable import KagamiStore
import KagamiTesting
import Testing

/// Redaction beyond headers, on bodies as APIs send them: what a shared store would keep.
@Suite struct FlowRedactionTests {
    static let marker = FlowRedaction.defaultMarker

    /// An OAuth password grant and its token response (RFC 6749 §4.3), as a login sends them.
    static func login(requestBody: String, requestType: String, responseBody: Data, responseHeaders: [(String, String)]) -> Flow {
        var flow = FlowFixtures.getJSON(url: "/oauth/token?client_id=web&access_token=old-t0ken&scope=read")
        flow.request.method = "POST"
        flow.request.headers.add("Content-Type", requestType)
        flow.request.body = FlowBody(data: Data(requestBody.utf8))
        flow.response?.headers = HeaderFields(responseHeaders)
        flow.response?.body = FlowBody(data: responseBody)
        return flow
    }

    static let tokenResponse = """
        {
          "access_token": "2YotnFZFEjr1zCsicMWpAA",
          "token_type": "Bearer",
          "expires_in": 3600,
          "refresh_token": "tGzv3JOkF0XG5Qx2TlKWIA",
          "user": {"id": 42, "email": "ada@example.com", "profile": {"ssn": "078-05-1120", "city": "London"}},
          "sessions": [{"device": "phone", "access_token": "abc"}, {"device": "laptop", "access_token": "def"}]
        }
        """

    static func json(_ data: Data) throws -> JSONValue { try JSONValue(parsing: data) }

    @Test func namedFieldsAtAnyDepthAndPointersAreReplaced() throws {
        let flow = Self.login(
            requestBody: #"{"grant_type":"password","username":"ada","password":"hunter2"}"#, requestType: "application/json; charset=utf-8",
            responseBody: Data(Self.tokenResponse.utf8), responseHeaders: [("Content-Type", "application/json")])
        let redaction = FlowRedaction(
            queryParameters: ["access_token"],
            jsonFields: [try .init(parsing: "password"), try .init(parsing: "ACCESS_TOKEN"), try .init(parsing: "/user/profile/ssn"),
                         try .init(parsing: "/refresh_token"), try .init(parsing: "/no/such/field")])
        let redacted = redaction.apply(to: flow)

        let request = try Self.json(redacted.request.body.data)
        #expect(request == .object(["grant_type": "password", "username": "ada", "password": .string(Self.marker)]))
        let response = try Self.json(try #require(redacted.response?.body.data))
        let original = try Self.json(Data(Self.tokenResponse.utf8))
        #expect(response.objectValue?["access_token"] == .string(Self.marker))
        #expect(response.objectValue?["refresh_token"] == .string(Self.marker))
        #expect(response.objectValue?["token_type"] == "Bearer")
        #expect(response.objectValue?["expires_in"] == 3600)
        let user = response.objectValue?["user"]?.objectValue
        #expect(user?["email"] == "ada@example.com")
        #expect(user?["profile"]?.objectValue?["ssn"] == .string(Self.marker))
        #expect(user?["profile"]?.objectValue?["city"] == "London")
        #expect(response.objectValue?["sessions"]?.arrayValue?.map { $0.objectValue?["access_token"] } == [.string(Self.marker), .string(Self.marker)])
        #expect(response.objectValue?["sessions"]?.arrayValue?.map { $0.objectValue?["device"] } == ["phone", "laptop"])
        // Members keep their order; nothing else changed.
        #expect(response.objectValue?.keys.elementsEqual(original.objectValue?.keys ?? []) == true)
        let stored = String(decoding: try #require(redacted.response?.body.data), as: UTF8.self)
        #expect(!stored.contains("2YotnFZFEjr1zCsicMWpAA"))

        // The query parameter, in the target and so in the URL; the others as they were.
        #expect(redacted.request.target == "/oauth/token?client_id=web&access_token=%5Bredacted%20by%20Kagami%5D&scope=read")
        #expect(redacted.request.url.hasSuffix("access_token=%5Bredacted%20by%20Kagami%5D&scope=read"))
        // Headers: the default credentials.
        #expect(redacted.request.headers["Cookie"] == Self.marker)
    }

    @Test func aGzippedBodyIsRedactedAndStaysGzipped() throws {
        let gzipped = try ContentCoding.encode(Data(Self.tokenResponse.utf8), contentEncoding: "gzip")
        let flow = Self.login(
            requestBody: "", requestType: "application/json", responseBody: gzipped,
            responseHeaders: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        let redacted = FlowRedaction(jsonFields: [.name("refresh_token")]).apply(to: flow)
        let body = try #require(redacted.response?.body)
        #expect(body.data != gzipped)
        let decoded = try ContentCoding.decode(body.data, contentEncoding: "gzip")
        let response = try Self.json(decoded)
        #expect(response.objectValue?["refresh_token"] == .string(Self.marker))
        #expect(response.objectValue?["access_token"] == "2YotnFZFEjr1zCsicMWpAA")
        #expect(!body.isTruncated)
    }

    @Test func formBodiesLoseTheNamedQueryParameters() throws {
        let flow = Self.login(
            requestBody: "grant_type=password&username=ada&password=hunter2&client_secret=s%3Dcr3t",
            requestType: "application/x-www-form-urlencoded", responseBody: Data("{}".utf8), responseHeaders: [("Content-Type", "application/json")])
        let redacted = FlowRedaction(queryParameters: ["password", "Client_Secret"]).apply(to: flow)
        #expect(String(decoding: redacted.request.body.data, as: UTF8.self)
            == "grant_type=password&username=ada&password=%5Bredacted%20by%20Kagami%5D&client_secret=%5Bredacted%20by%20Kagami%5D")
        // No JSON field is configured: the JSON response is left byte for byte.
        #expect(redacted.response?.body.data == Data("{}".utf8))
    }

    @Test func bodiesWithoutAMatchKeepTheirBytes() throws {
        // Spacing, escapes and number spellings as the server wrote them.
        let text = "{ \"id\" : 1.50, \"name\":\"Ada \\u00e9\" }\n"
        let flow = Self.login(requestBody: "", requestType: "application/json", responseBody: Data(text.utf8), responseHeaders: [("Content-Type", "application/json")])
        let redacted = FlowRedaction(jsonFields: [.name("password"), .pointer(["user", "ssn"])]).apply(to: flow)
        #expect(redacted.response?.body.data == Data(text.utf8))
        // Not JSON by its type: not looked into.
        var html = flow
        html.response?.headers = HeaderFields([("Content-Type", "text/html")])
        html.response?.body = FlowBody(data: Data(#"<p>{"password":"x"}</p>"#.utf8))
        #expect(FlowRedaction(jsonFields: [.name("password")]).apply(to: html).response?.body == html.response?.body)
    }

    @Test func jsonThatCannotBeReadWholeIsNotStored() throws {
        let redaction = FlowRedaction(jsonFields: [.name("password")])
        // Cut at the body limit: the secret could be in what was kept.
        let cut = Data(#"{"user":"ada","password":"hunt"#.utf8)
        var truncated = Self.login(requestBody: "", requestType: "application/json", responseBody: cut, responseHeaders: [("Content-Type", "application/json")])
        truncated.response?.body = FlowBody(data: cut, size: 4096, isTruncated: true)
        let body = try #require(redaction.apply(to: truncated).response?.body)
        #expect(body.data.isEmpty)
        #expect(body.size == 4096)
        #expect(body.isTruncated)
        // Not valid JSON, or in a coding Kagami can't undo.
        let broken = Self.login(requestBody: "", requestType: "application/json", responseBody: Data(#"{"password": hunter2}"#.utf8), responseHeaders: [("Content-Type", "application/problem+json")])
        #expect(redaction.apply(to: broken).response?.body.data.isEmpty == true)
        let brotli = Self.login(requestBody: "", requestType: "application/json", responseBody: Data([0x1b, 0x03, 0x00]), responseHeaders: [("Content-Type", "application/json"), ("Content-Encoding", "br")])
        #expect(redaction.apply(to: brotli).response?.body.data.isEmpty == true)
    }

    @Test func fieldsAreParsedWithClearErrors() throws {
        #expect(try FlowRedaction.JSONField(parsing: "/items/0/a~1b") == .pointer(["items", "0", "a/b"]))
        #expect(try FlowRedaction.JSONField(parsing: "token") == .name("token"))
        #expect(throws: FlowRedaction.Invalid.self) { try FlowRedaction.JSONField(parsing: "") }
        let flow = FlowFixtures.getJSON()
        #expect(FlowRedaction.none.apply(to: flow) == flow)
    }
}

extension FlowRedactionTests {
    static func message(_ text: String, _ direction: WebSocketMessage.Direction = .send, opcode: WebSocketMessage.Opcode = .text,
                        truncatedFrom size: Int? = nil) -> WebSocketMessage {
        WebSocketMessage(direction: direction, time: Date(timeIntervalSince1970: 1_764_000_000), opcode: opcode, data: Data(text.utf8),
                         size: size ?? text.utf8.count, isTruncated: size != nil)
    }

    /// A chat over WebSocket as a shared store would keep it: a login, its answer, Socket.IO
    /// events, plain text and binary frames.
    @Test func jsonTextMessagesLoseTheNamedFields() throws {
        let redaction = FlowRedaction(jsonFields: [.name("password"), .name("token"), .pointer(["user", "ssn"])])
        let messages = [
            Self.message(#"{"type":"login","user":{"name":"ada","ssn":"078-05-1120"},"password":"hunter2"}"#),
            Self.message(#"[{"type":"welcome","token":"eyJhbGciOi"},{"type":"presence","count":3}]"#, .receive),
            Self.message(#"42["auth",{"token":"s3cret","room":"ops"}]"#),
            Self.message("password=hunter2 in plain text"),
            Self.message(#"{"type":"ping"}"#),
            Self.message(#"{"token":"binary frames are not read"}"#, opcode: .binary),
        ]
        let redacted = redaction.apply(to: messages)
        #expect(redacted.count == messages.count)

        let login = try Self.json(redacted[0].data).objectValue
        #expect(login?["password"] == .string(Self.marker))
        #expect(login?["user"]?.objectValue?["ssn"] == .string(Self.marker))
        #expect(login?["user"]?.objectValue?["name"] == "ada")
        let welcome = try Self.json(redacted[1].data).arrayValue
        #expect(welcome?.first?.objectValue?["token"] == .string(Self.marker))
        #expect(welcome?.last?.objectValue?["count"] == 3)
        // Socket.IO's packet type stays in front of its JSON.
        let event = String(decoding: redacted[2].data, as: UTF8.self)
        #expect(event.hasPrefix("42["))
        let arguments = try Self.json(Data(event.utf8).dropFirst(2)).arrayValue
        #expect(arguments?.last?.objectValue?["token"] == .string(Self.marker))
        #expect(arguments?.last?.objectValue?["room"] == "ops")
        // Nothing to redact, not JSON, not text: kept byte for byte.
        #expect(Array(redacted[3...]) == Array(messages[3...]))
        #expect(redacted.map(\.size) == messages.map(\.size))
        #expect(redacted.map(\.direction) == messages.map(\.direction))
        #expect(FlowRedaction().apply(to: messages) == messages, "no JSON field configured: messages untouched")
    }

    @Test func jsonMessagesThatCannotBeReadWholeAreNotStored() {
        let redaction = FlowRedaction(jsonFields: [.name("password")])
        let cut = Self.message(#"{"user":"ada","password":"hunt"#, truncatedFrom: 70_000)
        let broken = Self.message(#"{"password": hunter2}"#)
        let redacted = redaction.apply(to: [cut, broken])
        #expect(redacted.allSatisfy { $0.data.isEmpty && $0.isTruncated })
        #expect(redacted.map(\.size) == [70_000, broken.size])
    }
}

/// Where redaction applies: in every store, as a flow or a message is handed to it, the same
/// `FlowRedaction` for a shared store and a session file.
extension FlowRedactionTests {
    static let secrets = ["Bearer t0ken-8f3a", "x-secret-5d1e", "hunter2-9c4b"]
    static let redaction = FlowRedaction(headers: FlowRedaction.defaultHeaders + ["X-Secret"], jsonFields: [.name("password")])

    /// A login with credentials in its headers and a password in its JSON body: `padding`
    /// bytes of it make the body as large as asked (4 KB or more goes to a session's body log).
    static func loginWithSecrets(padding: Int = 0) -> Flow {
        var flow = login(
            requestBody: #"{"username":"ada","password":"\#(secrets[2])","padding":"\#(String(repeating: "p", count: padding))"}"#,
            requestType: "application/json", responseBody: Data(#"{"ok":true}"#.utf8),
            responseHeaders: [("Content-Type", "application/json"), ("Set-Cookie", "session=\(secrets[1])")])
        flow.request.headers.add("Authorization", secrets[0])
        flow.request.headers.add("X-Secret", secrets[1])
        return flow
    }

    static let chat = [message(#"{"type":"login","password":"\#(secrets[2])","room":"ops"}"#)]

    /// Both stores keep what the one redaction gives, flows (bodies in a session's body log
    /// too) and WebSocket messages alike.
    @Test(arguments: StoreDriver.allCases)
    func everyStoreKeepsWhatTheRedactionGives(driver: StoreDriver) async throws {
        let store = try await driver.newSession().open(redaction: Self.redaction)
        let small = Self.loginWithSecrets()
        let large = Self.loginWithSecrets(padding: 6_000)
        store.record(small) {}
        store.record(large)
        store.record(messages: Self.chat, of: small.id)
        try await store.flush()
        #expect(try await store.flow(id: small.id) == Self.redaction.apply(to: small))
        #expect(try await store.flow(id: large.id) == Self.redaction.apply(to: large))
        #expect(try await store.messages(of: small.id, offset: 0, limit: nil) == Self.redaction.apply(to: Self.chat))
        #expect(try await store.flow(id: small.id)?.request.headers["X-Secret"] == Self.marker)
        await shutDown(store)
    }

    /// A session file asked to redact writes no secret to any of its files: not to the journal
    /// or the body log before SQLite has the flows (as a killed process leaves them), nor to the
    /// WAL or the database after. Asked for nothing, it keeps the values (local debugging).
    @Test func aSessionFileAskedToRedactKeepsNoSecretInAnyOfItsFiles() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path, redaction: Self.redaction)
        store.writer.suspend()
        let flows = [Self.loginWithSecrets(), Self.loginWithSecrets(padding: 6_000)]
        for flow in flows { store.record(flow) {} }
        store.record(messages: Self.chat, of: flows[0].id)
        #expect(try sessionFiles(path).contains(path + "-bodies"), "the large body is in the body log")
        #expect(try secretsIn(sessionFiles(path)).isEmpty)
        store.writer.resume()
        try await store.flush()
        #expect(try secretsIn(sessionFiles(path)).isEmpty)
        #expect(try await store.allFlows() == flows.map(Self.redaction.apply(to:)))

        let kept = temporaryPath("kept.sqlite")
        let keeping = try SQLiteFlowStore(path: kept)
        keeping.writer.suspend()
        for flow in flows { keeping.record(flow) {} }
        #expect(try secretsIn(sessionFiles(kept)) == Set(Self.secrets))
        keeping.writer.resume()
        try await keeping.flush()
        #expect(try await keeping.allFlows() == flows)
    }

    /// Every file of the session: those whose names begin with the session file's.
    private func sessionFiles(_ path: String) throws -> [String] {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(name) }.map { folder + "/" + $0 }
    }

    /// The secrets found in any byte of `files`.
    private func secretsIn(_ files: [String]) throws -> Set<String> {
        var found: Set<String> = []
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            for secret in Self.secrets where bytes.range(of: Data(secret.utf8)) != nil { found.insert(secret) }
        }
        return found
    }
}
