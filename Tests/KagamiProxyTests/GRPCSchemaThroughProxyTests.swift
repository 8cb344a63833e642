import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiControl
@testable import KagamiProxy
import KagamiTesting
import Testing

/// grpcio's shop server and client (Tests/GRPC/grpc_shop.py, message classes from the test's
/// .proto) through Kagami in reverse mode; the calls read back with names and types from the
/// .proto compiled by protoc, and from the server's reflection asked through the proxy's own
/// upstream connection. What Kagami shows is what the client decoded (json_format).
@Suite("gRPC with schemas through the proxy", .serialized)
struct GRPCSchemaThroughProxyTests {
    static var script: String { WebSocketPeer.root.appendingPathComponent("Tests/GRPC/grpc_shop.py").path }
    static var protoFolder: String { WebSocketPeer.root.appendingPathComponent("Tests/GRPC/proto").path }

    static func call(target: String) async throws -> JSONValue {
        let result = try await CommandLineClient(try WebSocketPeer.python()).run([script, "call", "--target", target])
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
    }

    /// Server reflection through `proxy`, as `kagami proxy` sets it up.
    static func reflection(through proxy: ProxyServer, asked: Counter? = nil) -> GRPCSchemas.Reflection {
        { request, service in
            await asked?.add()
            return try await proxy.grpcReflection(request, service)
        }
    }

    actor Counter {
        var count = 0
        func add() { count += 1 }
    }

    /// The three calls' flows by method name, and what the client decoded.
    static func calls(serverArguments: [String], _ body: (ProxyHarness, [String: Flow], JSONValue) async throws -> Void) async throws {
        let server = try PeerServer(script: script, arguments: serverArguments)
        defer { server.stop() }
        try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port)) }) { h in
            let report = try await call(target: "127.0.0.1:\(h.proxyPort)")
            let flows = try await h.flows(count: 3)
            let byMethod = Dictionary(flows.map { ($0.request.path.split(separator: "/").last.map(String.init) ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            try await body(h, byMethod, report)
        }
    }

    /// Each message's JSON, keys sorted (the JSON mapping gives objects no order; Kagami keeps
    /// the fields' declaration order, json_format sorts them).
    static func typed(_ side: GRPCExchange.Side?) throws -> [String] {
        try (side?.messages ?? []).map { try #require($0.typed).get().json.serialized([.sortedKeys]) }
    }

    static func sorted(_ values: [JSONValue]?) -> [String] {
        (values ?? []).map { $0.serialized([.sortedKeys]) }
    }

    /// The size of the large message test's request (and answer): over the decode cap, under the
    /// capture limit by default; `KAGAMI_TEST_GRPC_MESSAGE_BYTES=104857600` for 100 MB.
    static let largeMessageBytes = ProcessInfo.processInfo.environment["KAGAMI_TEST_GRPC_MESSAGE_BYTES"].flatMap { Int($0) } ?? 6 << 20

    /// A message over the decode cap goes through whole both ways (grpcio's client checks the
    /// answer is what it sent) while the proxy, its own process, keeps its memory bounded; the
    /// call is shown with the message's length and "not decoded", not its fields.
    @Test func aHugeMessagePassesWholeAndIsNotDecoded() async throws {
        let server = try PeerServer(script: Self.script)
        defer { server.stop() }
        let session = temporaryPath("grpc-large.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--reverse", "http://127.0.0.1:\(server.port)", "--session", session])
        let size = Self.largeMessageBytes
        let (growth, result) = try await ResidentMemory.growth(of: proxy.process.pid) {
            try await CommandLineClient(try WebSocketPeer.python()).run([Self.script, "big", "--target", "127.0.0.1:\(proxy.port)", "--size", String(size)])
        }
        proxy.stop()
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
        #expect(report["sent"] == .integer(size))
        #expect(report["same"] == true)
        // The capture limit (10 MB) of each side plus buffers; a proxy that held or decoded the
        // message whole would grow by several times its size.
        #expect(growth < 100 << 20, "resident memory grew by \(growth >> 20) MiB during a \(size >> 20) MiB message each way")
        let flow = try #require(try await KagamiStoreOpen.open(session).allFlows().first)
        let schema = try ProtoFiles.schema(descriptors: [], folders: [Self.protoFolder])
        let exchange = try #require(GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema))
        for message in [exchange.request.messages.first, exchange.response?.messages.first] {
            let message = try #require(message)
            #expect(message.length > size)
            #expect(message.note?.hasPrefix("not decoded: \(message.length) bytes, over the \(GRPCExchange.decodeLimit)-byte cap") == true, "\(String(describing: message.note))")
            #expect(message.typed == nil)
        }
        #expect(exchange.status?.name == "OK")
    }

    /// Unary, server-streaming and client-streaming calls read with the .proto's types show
    /// what the client itself decoded, and the requests what it sent.
    @Test func callsReadWithTheProtoFolder() async throws {
        let schema = try ProtoFiles.schema(descriptors: [], folders: [Self.protoFolder])
        try await Self.calls(serverArguments: []) { _, flows, report in
            let getFlow = try #require(flows["GetOrder"])
            let watchFlow = try #require(flows["WatchOrders"])
            let placeFlow = try #require(flows["PlaceItems"])
            let get = try #require(GRPCExchange(flow: getFlow, responseTrailers: getFlow.response?.trailers, schema: schema))
            #expect(get.method?.outputType == "kagami.shop.Order")
            #expect(try Self.typed(get.request) == [#"{"id":"o1"}"#])
            #expect(try Self.typed(get.response) == Self.sorted(report["getOrder"]?.arrayValue))
            let watch = try #require(GRPCExchange(flow: watchFlow, schema: schema))
            #expect(try Self.typed(watch.response) == Self.sorted(report["watchOrders"]?.arrayValue))
            #expect(try Self.typed(watch.response).count == 2)
            let place = try #require(GRPCExchange(flow: placeFlow, schema: schema))
            #expect(try Self.typed(place.request) == [#"{"name":"cup","priceCents":"300"}"#, #"{"name":"pot"}"#])
            #expect(try Self.typed(place.response) == Self.sorted(report["placeItems"]?.arrayValue))
        }
    }

    /// Every message grpcio's client and server made, read with the .proto's types and written
    /// back from that JSON, is the same bytes (what a breakpoint edit or Map Local sends).
    @Test func messagesGrpcioMadeAreWrittenBackByteForByte() async throws {
        let schema = try ProtoFiles.schema(descriptors: [], folders: [Self.protoFolder])
        try await Self.calls(serverArguments: []) { _, flows, _ in
            #expect(flows.count == 3)
            for flow in flows.values {
                let exchange = try #require(GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema))
                let method = try #require(exchange.method)
                for (side, type) in [(exchange.request, method.inputType), (try #require(exchange.response), method.outputType)] {
                    #expect(!side.messages.isEmpty)
                    for message in side.messages {
                        let typed = try #require(message.typed).get()
                        #expect(try schema.encode(typed.json, as: type) == message.payload, "\(flow.request.path) \(typed.json.serialized())")
                    }
                }
            }
        }
    }

    /// `kagami flows` and `kagami export` given the .proto folder: each call's messages with
    /// their types under its line, and a HAR entry's `_grpc` with what the client decoded.
    @Test func flowsAndExportShowTheMessagesWithNames() async throws {
        try await Self.calls(serverArguments: []) { h, _, report in
            let kagami = try CommandLineClient.kagami()
            let listed = try await kagami.run(["flows", "--session", h.sessionPath, "--proto-path", Self.protoFolder])
            try #require(listed.status == 0, "\(listed.stderr)")
            let lines = listed.stdoutText.split(separator: "\n").map(String.init)
            let get = try #require(lines.firstIndex { $0.contains("/kagami.shop.Shop/GetOrder") })
            #expect(lines[get + 1] == #"    → kagami.shop.OrderRequest {"id":"o1"}"#)
            #expect(lines[get + 2].hasPrefix(#"    ← kagami.shop.Order {"id":"o1","items":[{"name":"tea","priceCents":"-1200","colour":"GREEN""#), "\(lines[get + 2])")
            let exported = try await kagami.run(["export", "--session", h.sessionPath, "--proto-path", Self.protoFolder])
            try #require(exported.status == 0, "\(exported.stderr)")
            let entries = try #require(try JSONValue(parsing: exported.stdout)["log"]?["entries"]?.arrayValue)
            let entry = try #require(entries.first { $0["request"]?["url"]?.stringValue?.hasSuffix("/GetOrder") ?? false })
            #expect(entry["_grpc"]?["method"]?["outputType"] == "kagami.shop.Order")
            #expect(Self.sorted(entry["_grpc"]?["response"]?.arrayValue) == Self.sorted(report["getOrder"]?.arrayValue))
            // Without a schema the list is one line per exchange, as before.
            let plain = try await kagami.run(["flows", "--session", h.sessionPath])
            #expect(plain.stdoutText.split(separator: "\n").count == 3)
        }
    }

    /// Without a schema, Kagami asks the server's reflection (v1, or v1alpha when that is all it
    /// has) once per service, through its own upstream connection, and reads the calls with it.
    @Test(arguments: ["v1", "v1alpha"]) func callsReadWithServerReflection(version: String) async throws {
        try await Self.calls(serverArguments: ["--reflection", version]) { h, flows, report in
            let asked = Counter()
            let schemas = GRPCSchemas(reflection: Self.reflection(through: h.proxy, asked: asked))
            let flow = try #require(flows["GetOrder"])
            let schema = try #require(await schemas.schema(for: flow))
            let get = try #require(GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema))
            #expect(try Self.typed(get.response) == Self.sorted(report["getOrder"]?.arrayValue))
            let watchFlow = try #require(flows["WatchOrders"])
            let watchSchema = await schemas.schema(for: watchFlow)
            let watch = try #require(GRPCExchange(flow: watchFlow, schema: watchSchema))
            #expect(try Self.typed(watch.response) == Self.sorted(report["watchOrders"]?.arrayValue))
            #expect(await asked.count == 1)
            // Kagami's own reflection call is not an exchange of the session.
            #expect(try await h.store.allFlows().count == 3)
        }
    }

    /// A server without reflection: the answer says so (UNIMPLEMENTED for both versions), and
    /// the calls are read without names.
    @Test func aServerWithoutReflection() async throws {
        try await Self.calls(serverArguments: []) { h, flows, _ in
            let schemas = GRPCSchemas(reflection: Self.reflection(through: h.proxy))
            let flow = try #require(flows["GetOrder"])
            guard case .failed(let reason)? = await schemas.reflected(for: flow) else {
                Issue.record("reflection should have failed")
                return
            }
            #expect(reason.contains("UNIMPLEMENTED"), "\(reason)")
            #expect(await schemas.schema(for: flow) == nil)
        }
    }

    /// Kagami's own request goes through the upstream allow list like any other.
    @Test func reflectionIsRefusedOutsideTheAllowList() async throws {
        try await ProxyHarness.with { h in
            await #expect(throws: DestinationNotAllowed.self) {
                _ = try await h.proxy.upstreamHTTP2Request(host: "192.0.2.1", port: 50051, tls: false, path: "/x/y", headers: HeaderFields(), body: Data())
            }
            #expect(h.proxy.upstreamStatistics.refusedBeforeLookup == 1)
        }
    }
}
