import Foundation
import KagamiFlow
import KagamiHAR
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

@Suite("Session store and HAR export")
struct SessionStoreTests {
    @Test func flowsRoundTripWithBodiesInCaptureOrder() async throws {
        let path = temporaryPath("store.sqlite")
        let store = try SQLiteFlowStore(path: path)
        let flows = [FlowFixtures.getJSON(), FlowFixtures.postBinary(size: 70_000), FlowFixtures.refused()]
        for flow in flows { store.record(flow) }
        try await store.flush()
        #expect(try await store.count() == 3)
        #expect(try await store.allFlows() == flows)

        let summaries = try await store.flows(offset: 1, limit: 1, includeBodies: false)
        #expect(summaries.count == 1)
        #expect(summaries[0].id == flows[1].id)
        #expect(summaries[0].request.body.data.isEmpty)
        #expect(summaries[0].request.body.size == 70_000)
        #expect(try await store.flow(id: flows[1].id) == flows[1])
        #expect(try await store.flow(id: UUID()) == nil)

        // Recording a flow again replaces it (an edited or finished exchange).
        var updated = flows[0]
        updated.violations = [ContractViolation(kind: .schema, side: .response, location: .body, instancePointer: "/id", message: "expected string")]
        store.record(updated)
        try await store.flush()
        #expect(try await store.count() == 3)
        #expect(try await store.flow(id: updated.id)?.violations == updated.violations)

        // Another process opening the same file sees the same flows.
        let reopened = try SQLiteFlowStore(path: path)
        #expect(try await reopened.count() == 3)
    }

    @Test func everyFieldOfAFlowSurvivesTheSessionFile() async throws {
        var flow = FlowFixtures.getJSON()
        flow.clientAddress = "127.0.0.1:50123"
        flow.streamID = 7
        flow.serverAddress = "127.0.0.1:8443"
        flow.timings.connected = flow.timings.start.addingTimeInterval(0.001)
        flow.timings.requestSent = flow.timings.start.addingTimeInterval(0.002)
        flow.timings.firstByte = flow.timings.start.addingTimeInterval(0.010_5)
        flow.timings.end = flow.timings.start.addingTimeInterval(0.020_25)
        flow.timings.blocked = 0.000_3
        flow.timings.dns = 0.000_4
        flow.timings.ssl = 0.004
        flow.error = FlowError(.connectionReset, "the server closed the connection: \"reset\" / 日本")
        flow.tls = TLSInfo(version: "TLSv1.3", clientVersion: "TLSv1.2", cipherSuite: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1",
                           serverName: "api.example.com", certificateSubject: "CN=api.example.com", certificateIssuer: "CN=Kagami CA",
                           certificateFingerprintSHA256: "AB:CD", upstreamVerificationDisabled: true)
        flow.violations = [ContractViolation(
            kind: .schema, severity: .warning, operation: .init(name: "listItems", method: "GET", template: "/items{?limit}"),
            side: .response, location: .body, name: "body", instancePointer: "/items/0/id", schemaPointer: "/properties/items/items/properties/id/type",
            keyword: "type", expected: "integer", actual: "string \"x\"", schemaExcerpt: "{\"type\":\"integer\"}", message: "expected integer, found string")]
        flow.appliedRules = [RuleApplication(name: "Map Local 'user'", description: "mapped to local file docs/user.json")]
        flow.archiveFields = [ArchiveField(path: ["response", "content", "compression"], json: "12"), ArchiveField(path: ["comment"], json: nil)]
        flow.repeatOf = UUID()
        flow.request.headers.add("X-Odd", "tab\there, \"quotes\"")
        flow.response?.trailers = HeaderFields([("grpc-status", "5"), ("grpc-message", "not%20found")])
        // Every field is set, so a field added to Flow and left out here fails this test.
        #expect(unsetFields(of: flow) == [])
        #expect(unsetFields(of: FlowFixtures.getJSON()).contains("flow.repeatOf"), "the check sees unset fields")
        // The hand-written metadata is what JSONEncoder writes, and reads back as the flow.
        let foundation = JSONEncoder()
        foundation.dateEncodingStrategy = .deferredToDate
        let expected = try JSONValue(parsing: String(decoding: try foundation.encode(flow.withoutBodyBytes), as: UTF8.self))
        let written = try JSONValue(parsing: String(decoding: flow.storedJSON(), as: UTF8.self))
        #expect(written.isJSONEqual(to: expected), "\(written)\n\(expected)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        #expect(try decoder.decode(Flow.self, from: flow.storedJSON()) == flow.withoutBodyBytes)
        let store = try SQLiteFlowStore(path: temporaryPath("all-fields.sqlite"))
        store.record(flow)
        try await store.flush()
        #expect(try await store.flow(id: flow.id) == flow)
    }

    @Test func unwritableSessionFileIsAClearError() {
        #expect {
            _ = try SQLiteFlowStore(path: "/proc/definitely/not/here.sqlite")
        } throws: { error in
            "\(error)".contains("cannot open session file /proc/definitely/not/here.sqlite")
        }
    }

    @Test func harExportHasTheFieldsHARDefines() throws {
        let flows = [FlowFixtures.getJSON(), FlowFixtures.postBinary(size: 16), FlowFixtures.refused()]
        let har = HARExport.archive(flows, creatorVersion: "test")
        let text = har.serialized(.prettyPrinted)
        let parsed = try JSONValue(parsing: text)
        let log = try #require(parsed["log"])
        #expect(log["version"] == "1.2")
        let entries = try #require(log["entries"]?.arrayValue)
        #expect(entries.count == 3)

        let get = entries[0]
        #expect(get["startedDateTime"] == "2026-05-28T20:26:40.000Z")
        #expect(get["time"]?.doubleValue == 60)
        #expect(get["request"]?["url"] == "http://api.example.com/users/1")
        #expect(get["request"]?["cookies"]?[1]?["name"] == "theme")
        #expect(get["response"]?["content"]?["text"] == #"{"id":1,"name":"Ada"}"#)
        #expect(get["response"]?["cookies"]?[0]?["httpOnly"] == true)
        #expect(get["timings"]?["wait"]?.doubleValue == 39)
        #expect(get["serverIPAddress"] == "93.184.216.34")

        let post = entries[1]
        #expect(post["request"]?["url"] == "http://upload.example.com:8080/files?name=a%20b&x=1")
        #expect(post["request"]?["queryString"]?[0] == ["name": "name", "value": "a b"])
        #expect(post["request"]?["bodySize"] == 16)
        #expect(post["response"]?["content"]?["encoding"] == "base64")

        #expect(entries[2]["_error"]?.isJSONEqual(to: ["message": "connection refused by 127.0.0.1:1", "kind": "connectionRefused"]) == true)
    }
}

@Suite("Session store under load")
struct SessionStoreLoadTests {
    /// When the disk can't keep up, memory stays bounded: exchanges are still all stored, with
    /// their sizes, but bodies past the pending limit are not kept (and say so).
    @Test func bodiesPastThePendingLimitAreDroppedNotQueued() async throws {
        let store = try SQLiteFlowStore(path: temporaryPath("bounded.sqlite"), maximumPendingBodyBytes: 100)
        let withBody = FlowFixtures.postBinary(size: 1000)
        let small = FlowFixtures.getJSON(body: "{}")
        store.record(withBody)
        store.record(small)
        try await store.flush()
        let stored = try await store.allFlows()
        #expect(stored.count == 2)
        #expect(stored[0].request.body.data.isEmpty)
        #expect(stored[0].request.body.size == 1000)
        #expect(stored[0].request.body.isTruncated)
        #expect(stored[0].response?.body.isTruncated == true)
        #expect(stored[1].response?.body.data == Data("{}".utf8))
        #expect(stored[1].response?.body.isTruncated == false)
    }
}

/// Paths of optionals that are nil and collections that are empty anywhere inside `value`.
private func unsetFields(of value: Any, path: String = "flow") -> [String] {
    if value is String || value is Data || value is UUID || value is Date { return [] }
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .optional:
        guard let wrapped = mirror.children.first?.value else { return [path] }
        return unsetFields(of: wrapped, path: path)
    case .collection:
        guard let first = mirror.children.first?.value else { return [path] }
        return unsetFields(of: first, path: path + "[0]")
    case .struct, .class:
        return mirror.children.flatMap { child in unsetFields(of: child.value, path: path + "." + (child.label ?? "?")) }
    default:
        return []
    }
}
