import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiJSON
import KagamiProxy
import KagamiRecording
import KagamiRecordingProxy
import KagamiStore
import KagamiTesting
import Testing

/// grpcio's shop server and client (Tests/GRPC/grpc_shop.py) through a proxy in reverse mode
/// checking calls against the shop's `.proto` folder, as `kagami proxy --contract DIR` does;
/// then `kagami validate` on the session it recorded.
@Suite("gRPC contract check through the proxy", .serialized)
struct GRPCContractThroughProxyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var script: String { root.appendingPathComponent("Tests/GRPC/grpc_shop.py").path }
    static var protoFolder: String { root.appendingPathComponent("Tests/GRPC/proto").path }

    struct PythonMissing: Error, CustomStringConvertible {
        var description: String { "\(root.path)/.venv-tests has no Python with grpcio: scripts/test.sh makes it" }
    }

    static func python() throws -> String {
        let path = root.appendingPathComponent(".venv-tests/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw PythonMissing() }
        return path
    }

    /// One run of the shop script's client; its last line as JSON.
    static func client(_ arguments: [String]) async throws -> JSONValue {
        let result = try await CommandLineClient(try python()).run([script] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
    }

    @Test func callsAreCheckedAgainstTheProtoFolder() async throws {
        let server = try ChildProcess(try Self.python(), [Self.script, "server"], stdin: .pipe, stdout: .pipe)
        defer {
            try? server.input?.close()
            server.waitUntilExit()
        }
        let serverPort = try server.announcedPort()
        let sessionPath = try TemporaryFolder.path("grpc-contract", "session.sqlite")
        let store = try SQLiteFlowStore(path: sessionPath)
        let hub = FlowHub()
        var options = ProxyOptions(host: "127.0.0.1", port: 0, upstreamAllow: ["loopback"], contracts: [Self.protoFolder])
        options.reverse = "http://127.0.0.1:\(serverPort)"
        let built = try ProxySetup(options).build(store: store, hub: hub)
        let address = try await built.server.start()
        let target = "127.0.0.1:\(address.port ?? 0)"
        do {
            // Clean: unary, server-streaming and client-streaming calls.
            _ = try await Self.client(["call", "--target", target])
            // A Timestamp sent to GetOrder (grpcio's server takes it, the contract does not),
            // a method the schema doesn't have, and a request its annotations refuse.
            let wrong = try await Self.client(["raw", "--target", target, "--method", "/kagami.shop.Shop/GetOrder", "--hex", "0880e2cfaa06"])
            #expect(wrong["code"] == "OK")
            let nope = try await Self.client(["raw", "--target", target, "--method", "/kagami.shop.Shop/Nope", "--hex", ""])
            #expect(nope["code"] == "UNIMPLEMENTED")
            _ = try await Self.client(["send", "--target", target, "--method", "/kagami.shop.Shop/GetOrder", "--json", #"{"id": "x"}"#])

            let flows = try #require(try await eventually(attempts: 400) { () async throws -> [Flow]? in
                try await store.flush()
                let flows = try await store.allFlows(includeBodies: false)
                return flows.count >= 6 ? flows : nil
            })
            await built.recording.contractCheck?.drain()
            try await store.flush()
            let checked = try await store.allFlows(includeBodies: false)
            #expect(flows.count == 6)
            let violations = checked.map { flow in (flow.request.path, flow.violations) }
            #expect(violations.filter { $0.1.isEmpty }.map(\.0).sorted() == [
                "/kagami.shop.Shop/GetOrder", "/kagami.shop.Shop/PlaceItems", "/kagami.shop.Shop/WatchOrders",
            ])
            let found = violations.flatMap(\.1)
            #expect(found.map { "\($0.kind.rawValue) \($0.side.rawValue) \($0.place)" }.sorted() == [
                "message-type request body/0", "schema request body/0/id", "undocumented-path request path",
            ])
            #expect(built.contracts?.counts.checked == 6)

            // Afterwards, on the session: the same findings, in JSON and JUnit.
            let kagami = try CommandLineClient.kagami()
            let json = try await kagami.run(["validate", "--contract", Self.protoFolder, "--session", sessionPath, "--format", "json"])
            #expect(json.status == 1, "\(json.stderr)")
            let report = try JSONValue(parsing: json.stdoutText)
            let kinds = (report["violations"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue }.sorted()
            #expect(kinds == ["message-type", "schema", "undocumented-path"])
            let typed = try #require(report["violations"]?.arrayValue?.first { $0["kind"] == "message-type" })
            #expect(typed["operation"]?["template"] == "/kagami.shop.Shop/GetOrder")
            #expect(typed["expected"] == "kagami.shop.OrderRequest")
            #expect(report["coverage"]?[0]?["operations"] == ["documented": 3, "seen": 3])
            let output = try TemporaryFolder.path("grpc-contract", "report.xml")
            let junit = try await kagami.run(["validate", "--contract", Self.protoFolder, "--session", sessionPath, "--format", "junit", "--output", output])
            #expect(junit.status == 1)
            let parsed = try await ValidateCommandTests.readJUnit(output)
            let cases = try #require(parsed["suites"]?[0]?["cases"]?.arrayValue)
            let get = try #require(cases.first { $0["name"] == "POST /kagami.shop.Shop/GetOrder (GetOrder)" })
            #expect(Set((get["results"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }) == ["message-type", "schema"])
            try await built.server.stop()
        } catch {
            try? await built.server.stop()
            throw error
        }
    }

    /// No .proto at hand: `kagami proxy --contract grpc-reflection=URL` asks the server's
    /// reflection (through its own upstream connection) for every service it lists, and checks
    /// the calls as against the .proto folder; `kagami validate` takes the same argument. A
    /// server without reflection can't be a description: validate says why, exit status 2.
    @Test func callsAreCheckedAgainstTheServersReflection() async throws {
        let server = try ChildProcess(try Self.python(), [Self.script, "server", "--reflection", "v1"], stdin: .pipe, stdout: .pipe)
        defer {
            try? server.input?.close()
            server.waitUntilExit()
        }
        let serverPort = try server.announcedPort()
        let contract = "grpc-reflection=http://127.0.0.1:\(serverPort)"
        let sessionPath = try TemporaryFolder.path("grpc-reflection-contract", "session.sqlite")
        let proxy = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--reverse", "http://127.0.0.1:\(serverPort)", "--contract", contract, "--session", sessionPath,
        ])
        defer { proxy.stop() }
        #expect(proxy.output.contains("Contract: \(contract) (3 operations) checks http://127.0.0.1:\(serverPort)\n"), "\(proxy.output)")

        let target = "127.0.0.1:\(proxy.port)"
        _ = try await Self.client(["call", "--target", target])
        let wrong = try await Self.client(["raw", "--target", target, "--method", "/kagami.shop.Shop/GetOrder", "--hex", "0880e2cfaa06"])
        #expect(wrong["code"] == "OK")
        let nope = try await Self.client(["raw", "--target", target, "--method", "/kagami.shop.Shop/Nope", "--hex", ""])
        #expect(nope["code"] == "UNIMPLEMENTED")
        _ = try await Self.client(["send", "--target", target, "--method", "/kagami.shop.Shop/GetOrder", "--json", #"{"id": "x"}"#])
        let checked = try await eventually(attempts: 400, every: .milliseconds(25)) { () async throws -> Int? in
            let result = try await CommandLineClient.curl.run(["-s", "\(proxy.api)/contract"] + proxy.authorization)
            let count = try JSONValue(parsing: result.stdout)["checked"]?.intValue
            return count == 6 ? count : nil
        }
        #expect(checked == 6)
        let recorded = try SQLiteFlowStore(path: sessionPath)
        let found = try await eventually(attempts: 400, every: .milliseconds(25)) { () async throws -> [String]? in
            let found = try await recorded.allFlows(includeBodies: false).flatMap(\.violations).map { "\($0.kind.rawValue) \($0.side.rawValue) \($0.place)" }.sorted()
            return found.count == 3 ? found : nil
        }
        #expect(found == ["message-type request body/0", "schema request body/0/id", "undocumented-path request path"])

        let kagami = try CommandLineClient.kagami()
        let json = try await kagami.run(["validate", "--contract", contract, "--session", sessionPath, "--format", "json"])
        #expect(json.status == 1, "\(json.stderr)")
        let report = try JSONValue(parsing: json.stdoutText)
        #expect((report["violations"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue }.sorted() == ["message-type", "schema", "undocumented-path"])
        #expect(report["coverage"]?[0]?["operations"] == ["documented": 3, "seen": 3])

        let plain = try ChildProcess(try Self.python(), [Self.script, "server"], stdin: .pipe, stdout: .pipe)
        defer {
            try? plain.input?.close()
            plain.waitUntilExit()
        }
        let plainPort = try plain.announcedPort()
        let refused = try await kagami.run(["validate", "--contract", "grpc-reflection=http://127.0.0.1:\(plainPort)", "--session", sessionPath])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("grpc-reflection=http://127.0.0.1:\(plainPort): the server's reflection answered: no server reflection"), "\(refused.stderr)")
        #expect(refused.stderr.contains("UNIMPLEMENTED"), "\(refused.stderr)")
    }
}
