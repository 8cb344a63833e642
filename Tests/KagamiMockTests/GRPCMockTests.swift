import Foundation
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing

/// `kagami mock --proto-path` (or `--proto-descriptor`) serving the test shop's gRPC methods
/// over h2c to grpcio's client (Tests/GRPC/grpc_shop.py): answers from `Method.json` files in
/// Map Local's format, messages generated from the schema without one, UNIMPLEMENTED for a
/// method the schema lacks, every call recorded.
@Suite("gRPC methods served by kagami mock", .serialized)
struct GRPCMockTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var script: String { root.appendingPathComponent("Tests/GRPC/grpc_shop.py").path }
    static var protoFolder: String { root.appendingPathComponent("Tests/GRPC/proto").path }

    struct PythonMissing: Error, CustomStringConvertible {
        var description: String { "\(root.path)/.venv-tests has no Python with grpcio: scripts/test.sh makes it" }
    }

    /// One run of the shop script's client against the mock; its last line as JSON.
    static func client(_ mock: KagamiProcess, _ arguments: [String]) async throws -> JSONValue {
        let python = root.appendingPathComponent(".venv-tests/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else { throw PythonMissing() }
        let result = try await CommandLineClient(python).run([script] + [arguments[0], "--target", "127.0.0.1:\(mock.port)"] + arguments.dropFirst())
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
    }

    static func write(_ text: String, _ folder: URL, _ name: String) throws {
        try Data(text.utf8).write(to: folder.appendingPathComponent(name))
    }

    @Test func methodsAnsweredFromFilesAndDefaults() async throws {
        let folder = try TemporaryFolder.make("grpc-mock")
        defer { try? FileManager.default.removeItem(at: folder) }
        let answers = folder.appendingPathComponent("kagami.shop.Shop")
        try FileManager.default.createDirectory(at: answers, withIntermediateDirectories: true)
        try Self.write(#"{"id": "from-the-mock", "totalCents": "18446744073709551615", "items": [{"name": "tea", "colour": "GREEN"}]}"#, answers, "GetOrder.json")
        let session = folder.appendingPathComponent("session.sqlite").path
        let mock = try await KagamiProcess.start([
            "mock", "--port", "0", "--proto-path", Self.protoFolder, "--grpc-answers", folder.path, "--session", session,
        ])
        defer { mock.stop() }
        #expect(mock.output.contains("Kagami gRPC mock of 3 methods listening on http://127.0.0.1:\(mock.port) (h2c)"), "\(mock.output)")

        let unary = try await Self.client(mock, ["send", "--method", "/kagami.shop.Shop/GetOrder", "--json", #"{"id": "o1"}"#])
        #expect(unary["code"] == "OK", "\(unary)")
        #expect(unary["answers"]?.serialized([.sortedKeys])
            == #"[{"id":"from-the-mock","items":[{"colour":"GREEN","name":"tea"}],"totalCents":"18446744073709551615"}]"#)
        // No file: one message generated from the output type (an Order, its id a string).
        let generated = try await Self.client(mock, ["send", "--method", "/kagami.shop.Shop/WatchOrders", "--json", #"{"id": "o1"}"#])
        #expect(generated["code"] == "OK", "\(generated)")
        #expect(generated["answers"]?.arrayValue?.count == 1)
        let order = try #require(generated["answers"]?[0])
        #expect(order["id"] == "id" && order["totalCents"] == "1", "\(generated)")
        #expect(order["items"]?[0]?["name"] == "name" && order["items"]?[0]?["colour"] == "RED", "\(generated)")
        #expect(order["items"]?[0]?["percent"] == 1 && order["items"]?[0]?["code"] == nil, "a oneof's first member only: \(generated)")
        try Self.write(#"[{"id": "w-1"}, {"id": "w-2"}, {"id": "w-3"}]"#, answers, "WatchOrders.json")
        let streamed = try await Self.client(mock, ["send", "--method", "/kagami.shop.Shop/WatchOrders", "--json", #"{"id": "o1"}"#])
        #expect(streamed["answers"] == [["id": "w-1"], ["id": "w-2"], ["id": "w-3"]])
        try Self.write(#"{"grpc-status": "NOT_FOUND", "grpc-message": "no order o1"}"#, answers, "GetOrder.json")
        let missing = try await Self.client(mock, ["send", "--method", "/kagami.shop.Shop/GetOrder", "--json", #"{"id": "o1"}"#])
        #expect(missing["code"] == "NOT_FOUND")
        #expect(missing["message"] == "no order o1")
        let nope = try await Self.client(mock, ["raw", "--method", "/kagami.shop.Shop/Nope", "--hex", ""])
        #expect(nope["code"] == "UNIMPLEMENTED", "\(nope)")

        mock.stop()
        let flows = try await CommandLineClient.kagami().run(["flows", "--session", session])
        #expect(flows.stdoutText.split(separator: "\n").filter { $0.contains("/kagami.shop.Shop/") }.count == 5, "\(flows.stdoutText)")
    }

    /// A descriptor set serves as well as the .proto folder.
    @Test func aDescriptorSetServesItsMethods() async throws {
        let set = try TemporaryFolder.path("grpc-mock", "shop.protoset")
        let made = try await CommandLineClient("/usr/bin/protoc").run(["--include_imports", "--descriptor_set_out=\(set)", "--proto_path=\(Self.protoFolder)", "kagami/shop.proto"])
        try #require(made.status == 0, "\(made.stderr)")
        let mock = try await KagamiProcess.start(["mock", "--port", "0", "--proto-descriptor", set, "--session", temporaryPath("grpc-mock.sqlite")])
        defer { mock.stop() }
        let answer = try await Self.client(mock, ["send", "--method", "/kagami.shop.Shop/GetOrder", "--json", #"{"id": "o1"}"#])
        #expect(answer["code"] == "OK", "\(answer)")
        #expect(answer["answers"]?[0]?["id"] == "id", "\(answer)")
    }
}
