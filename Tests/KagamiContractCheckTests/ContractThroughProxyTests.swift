import AsyncHTTPClient
import Foundation
import KagamiCertificates
import KagamiContractCheck
import KagamiFlow
import KagamiRecording
import KagamiRecordingProxy
import KagamiJSON
import KagamiProxy
import KagamiStore
import KagamiTesting
import KagamiUI
import NIOCore
import Testing

/// An origin that serves the notes API under `/v1`, conforming on some paths and deviating
/// from its description on purpose on others.
enum NotesOrigin {
    static let noteJSON = #"{"id":1,"title":"Buy milk","done":false}"#

    /// The note, gzip-compressed by the system's gzip.
    static func gzipped(_ text: String) throws -> [UInt8] {
        let process = try ChildProcess("/bin/gzip", ["-c", "-n"], stdin: .pipe, stdout: .pipe)
        try process.input?.write(contentsOf: Data(text.utf8))
        try process.input?.close()
        let data = try process.output?.readToEnd() ?? Data()
        process.waitUntilExit()
        return Array(data)
    }

    static func script(gzippedNote: [UInt8]) -> ScriptedOrigin.Script {
        { request in
            switch (request.method, request.path) {
            case ("GET", "/v1/notes/1"), ("HEAD", "/v1/notes/1"):
                if request.header("If-None-Match") != nil { return ScriptedOrigin.Reply(status: 304, headers: [("ETag", "\"v1\"")]) }
                return ScriptedOrigin.Reply(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("ETag", "\"v1\"")], body: gzippedNote)
            case ("GET", "/v1/notes/2"): return .json(#"{"id":2}"#)
            case ("GET", "/v1/notes/3"): return .json(#"{"id":"three","title":"x"}"#)
            case ("GET", "/v1/notes/4"): return ScriptedOrigin.Reply(status: 500, headers: [("Content-Type", "text/plain")], body: Array("boom\n".utf8))
            case ("GET", "/v1/notes/5"): return .json("<p>note</p>", contentType: "text/html; charset=utf-8")
            case ("GET", "/v1/notes/99"): return .json(#"{"message":"not found"}"#, status: 404)
            case ("GET", "/v1/notes"): return .json(#"[{"id":1,"title":"Buy milk"},{"id":2,"title":"Call Ada","done":true}]"#, chunked: true)
            case ("POST", "/v1/notes"): return .json(#"{"id":7,"title":"new"}"#, status: 201)
            case ("DELETE", "/v1/notes/1"): return ScriptedOrigin.Reply(status: 204)
            case ("GET", "/v1/nope"): return .json("{}")
            default: return ScriptedOrigin.Reply(status: 418)
            }
        }
    }
}

/// A proxy on 127.0.0.1:0 checking traffic against one description, recording into a fresh
/// session, with the scripted origin beside it; it connects to loopback only.
struct ContractProxyHarness {
    let origin: ScriptedOrigin
    let proxy: ProxyServer
    let proxyPort: Int
    let store: SQLiteFlowStore
    let hub: FlowHub
    let contracts: LiveContracts
    let recording: Recording
    let sessionPath: String
    var proxyURL: String { "http://127.0.0.1:\(proxyPort)" }

    static func with<T>(
        description: String, tls: (origin: ServerIdentity, interception: InterceptionConfiguration)? = nil,
        script: ScriptedOrigin.Script? = nil, _ body: (ContractProxyHarness) async throws -> T
    ) async throws -> T {
        let origin = try await ScriptedOrigin.start(tls: tls?.origin, script: script ?? NotesOrigin.script(gzippedNote: try NotesOrigin.gzipped(NotesOrigin.noteJSON)))
        let host = tls == nil ? "127.0.0.1" : "localhost"
        let folder = NSTemporaryDirectory() + "kagami-contract-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sessionPath = folder + "/session.sqlite"
        let store = try SQLiteFlowStore(path: sessionPath)
        let hub = FlowHub()
        // Built as `kagami proxy --contract` builds it: one options value, one builder.
        let options = ProxyOptions(
            host: "127.0.0.1", port: 0, upstreamAllow: ["loopback"],
            contracts: ["\(ContractCheckTests.fixture(description))=\(origin.scheme)://\(host):\(origin.port)/v1"],
            interception: tls?.interception)
        let built = try ProxySetup(options).build(store: store, hub: hub)
        let proxy = built.server
        let recording = built.recording
        let contracts = try #require(built.contracts)
        let address = try await proxy.start()
        let harness = ContractProxyHarness(
            origin: origin, proxy: proxy, proxyPort: address.port ?? 0, store: store, hub: hub, contracts: contracts,
            recording: recording, sessionPath: sessionPath)
        do {
            let result = try await body(harness)
            try await proxy.stop()
            try await origin.stop()
            return result
        } catch {
            try? await proxy.stop()
            try? await origin.stop()
            throw error
        }
    }

    func curl(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "20", "-x", proxyURL] + arguments)
    }

    /// The stored flows once `count` are recorded and checked, keyed by `METHOD target`.
    func checkedFlows(count: Int) async throws -> [Flow] {
        for _ in 0..<400 {
            try await store.flush()
            if try await store.count() >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        await recording.contractCheck?.drain()
        try await store.flush()
        return try await store.allFlows(includeBodies: false)
    }
}

@Suite("Contract check through the proxy", .serialized)
struct ContractThroughProxyTests {
    @Test(arguments: ContractCheckTests.descriptions)
    func everyDeviationIsReportedAndConformantExchangesAreNot(_ description: String) async throws {
        try await ContractProxyHarness.with(description: description) { h in
            let base = "\(h.origin.baseURL)/v1"
            // Conformant: gzip (decoded by curl), chunked, HEAD, 304, a created note, a documented 404, a 204.
            let gzip = try await h.curl(["--compressed", "\(base)/notes/1"])
            #expect(String(decoding: gzip.stdout, as: UTF8.self) == NotesOrigin.noteJSON)
            _ = try await h.curl(["\(base)/notes?limit=2"])
            _ = try await h.curl(["-I", "\(base)/notes/1"])
            let notModified = try await h.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "If-None-Match: \"v1\"", "\(base)/notes/1"])
            #expect(notModified.stdoutText == "304")
            _ = try await h.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data", #"{"title":"new"}"#, "\(base)/notes"])
            _ = try await h.curl(["\(base)/notes/99"])
            _ = try await h.curl(["-X", "DELETE", "\(base)/notes/1"])
            // Deviations.
            for path in ["/notes/2", "/notes/3", "/notes/4", "/notes/5", "/nope", "/notes?limit=abc"] {
                _ = try await h.curl(["\(base)\(path)"])
            }
            let flows = try await h.checkedFlows(count: 13)
            #expect(flows.count == 13)
            var byTarget: [String: [ContractViolation]] = [:]
            for flow in flows { byTarget["\(flow.request.method) \(flow.request.target)", default: []] += flow.violations }
            for conformant in ["GET /v1/notes/1", "GET /v1/notes?limit=2", "HEAD /v1/notes/1", "POST /v1/notes", "GET /v1/notes/99", "DELETE /v1/notes/1"] {
                #expect(byTarget[conformant] == [], "\(conformant): \(byTarget[conformant] ?? [])")
            }
            let missing = try #require(byTarget["GET /v1/notes/2"]?.first)
            #expect(missing.keyword == "required" && missing.instancePointer == "" && missing.schemaPointer?.hasSuffix("/required") == true)
            let wrongType = try #require(byTarget["GET /v1/notes/3"]?.first)
            #expect(wrongType.keyword == "type" && wrongType.instancePointer == "/id" && wrongType.schemaPointer?.hasSuffix("/properties/id/type") == true)
            #expect(byTarget["GET /v1/notes/4"]?.map(\.kind) == [.undocumentedStatus])
            #expect(byTarget["GET /v1/notes/5"]?.map(\.kind) == [.contentType])
            #expect(byTarget["GET /v1/nope"]?.map(\.kind) == [.undocumentedPath])
            let query = try #require(byTarget["GET /v1/notes?limit=abc"]?.first)
            #expect(query.side == .request && query.location == .query && query.name == "limit")

            // Coverage: four operations documented, all four exercised.
            let contract = h.contracts.json
            let coverage = try #require(contract["descriptions"]?[0]?["coverage"])
            #expect(coverage["operations"]?["documented"] == 4)
            #expect(coverage["operations"]?["seen"] == 4)
            #expect(coverage["undocumentedExchanges"] == 1)
            #expect(contract["checked"] == 13)
        }
    }

    @Test func theAdminAPIServesTheContractAndEachFlowsViolations() async throws {
        try await ContractProxyHarness.with(description: "notes.yaml") { h in
            let events = h.hub.subscribe()
            _ = try await h.curl(["\(h.origin.baseURL)/v1/notes/3"])
            let flows = try await h.checkedFlows(count: 1)
            let flow = try #require(flows.first)
            #expect(flow.violations.count == 1)
            // The UI heard the flow twice: when recorded, then with its violations.
            var announced: [Flow] = []
            for await delivery in events {
                if case .flow(let flow) = delivery { announced.append(flow) }
                if announced.count == 2 { break }
            }
            #expect(announced.map(\.violations.count) == [0, 1])

            let ui = try UIServer(
                configuration: .init(host: "127.0.0.1", port: 0, proxyAddress: h.proxyURL, sessionPath: h.sessionPath, version: "test"),
                store: h.store, hub: h.hub, contracts: h.contracts)
            let port = try await ui.start()
            defer { Task { await ui.stop() } }
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let contract = try await Self.json(client, "http://127.0.0.1:\(port)/api/contract", token: ui.token)
                #expect(contract["descriptions"]?[0]?["format"] == "openapi-3.1")
                #expect(contract["descriptions"]?[0]?["coverage"]?["operations"]?["seen"] == 1)
                let violations = try await Self.json(client, "http://127.0.0.1:\(port)/api/flows/\(flow.id.uuidString)/violations", token: ui.token)
                let first = try #require(violations["violations"]?[0])
                #expect(first["flowId"]?.stringValue == flow.id.uuidString)
                #expect(first["method"] == "GET")
                #expect(first["instancePointer"] == "/id")
                #expect(first["operation"]?["name"] == "getNote")
                let list = try await Self.json(client, "http://127.0.0.1:\(port)/api/flows", token: ui.token)
                #expect(list["flows"]?[0]?["violations"] == 1)
                #expect(list["flows"]?[0]?["contract"] == "error")
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
            events.cancel()
        }
    }

    @Test func interceptedHTTPSIsCheckedLikePlainHTTP() async throws {
        let originCA = try TestCertificates.make()
        let kagamiCA = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        let interception = InterceptionConfiguration(authority: kagamiCA, additionalTrustRootFiles: [originCA.caPath])
        try await ContractProxyHarness.with(
            description: "notes.apib", tls: (try originCA.serverIdentity(for: "localhost"), interception)
        ) { h in
            let base = "https://localhost:\(h.origin.port)/v1"
            let tlsArguments = ["--cacert", kagamiCA.certificatePath, "--resolve", "localhost:\(h.origin.port):127.0.0.1"]
            _ = try await h.curl(tlsArguments + ["--compressed", "\(base)/notes/1"])
            _ = try await h.curl(tlsArguments + ["\(base)/notes/3"])
            let flows = try await h.checkedFlows(count: 2)
            #expect(flows.map(\.request.scheme) == ["https", "https"])
            #expect(flows.first { $0.request.target == "/v1/notes/1" }?.violations == [])
            #expect(flows.first { $0.request.target == "/v1/notes/3" }?.violations.map(\.instancePointer) == ["/id"])
        }
    }

    static func json(_ client: HTTPClient, _ url: String, token: String) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONValue(parsing: String(buffer: body))
    }
}
