import Foundation
import KagamiFlow
@testable import KagamiGRPC
import KagamiJSON
import KagamiTesting
import Testing

/// Messages read with the test shop's schema (Tests/GRPC/proto, compiled by protoc in the test),
/// on bytes `protoc --encode` makes from text format: no sockets.
@Suite struct ProtobufSchemaTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GRPC/proto").path

    static func schema() throws -> ProtobufSchema {
        try ProtoFiles.schema(descriptors: [], folders: [folder])
    }

    /// `text` (Protocol Buffers text format) as `type`'s binary encoding, by protoc.
    static func encode(_ text: String, as type: String) async throws -> Data {
        let protoc = try #require(ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/protoc" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }, "protoc is not installed (scripts/test.sh installs protobuf-compiler)")
        let result = try await CommandLineClient(protoc).run(["--encode=\(type)", "--proto_path=\(folder)", "kagami/shop.proto"], stdin: Data(text.utf8))
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    static func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Data(text.utf8)) }

    @Test func methodsAndTypesFromTheProtoFolder() throws {
        let schema = try Self.schema()
        let method = try #require(schema.method(path: "/kagami.shop.Shop/WatchOrders"))
        #expect(method.inputType == "kagami.shop.OrderRequest")
        #expect(method.outputType == "kagami.shop.Order")
        #expect(method.serverStreaming && !method.clientStreaming)
        #expect(schema.method(path: "/kagami.shop.Shop/Nope") == nil)
        #expect(schema.hasMessage(".google.protobuf.Timestamp"))
        let fields = try #require(schema.fieldSummary(of: "kagami.shop.Item"))
        #expect(fields.first { $0.name == "colour" }.map { "\($0.type) \($0.number)" } == "kagami.shop.Colour 3")
        #expect(fields.first { $0.name == "stock" }?.label == "map")
        #expect(fields.first { $0.name == "code" }?.label == "oneof")
    }

    @Test func everyKindOfFieldAsTheJSONMappingShowsIt() async throws {
        let text = """
            name: "tea" price_cents: -1200 colour: GREEN sizes: [1, 2, 300] stock { key: "a" value: 4 } stock { key: "b" value: 0 }
            code: "X" note { text: "hi" blob: "\\001\\002" } added { seconds: 1700000000 nanos: 500000000 } shelf_life { seconds: 90 nanos: 1000 }
            attributes { fields { key: "k" value { list_value { values { number_value: 1.5 } values { bool_value: true } values { null_value: NULL_VALUE } } } } }
            stock_limit { value: 9 } extra { [type.googleapis.com/kagami.shop.OrderRequest] { id: "o1" } } weight: 0.25 fragile: true delta: -3
            notes { text: "one" } notes { text: "two" }
            """
        let data = try await Self.encode(text, as: "kagami.shop.Item")
        let message = try Self.schema().decode(data, as: "kagami.shop.Item").get()
        #expect(message.type == "kagami.shop.Item")
        #expect(message.unknownFields.isEmpty)
        let expected = try Self.json("""
            {"name": "tea", "priceCents": "-1200", "colour": "GREEN", "sizes": [1, 2, 300], "stock": {"a": 4, "b": 0}, "code": "X",
             "note": {"text": "hi", "blob": "AQI="}, "added": "2023-11-14T22:13:20.500Z", "shelfLife": "90.000001s",
             "attributes": {"k": [1.5, true, null]}, "stockLimit": 9, "extra": {"@type": "type.googleapis.com/kagami.shop.OrderRequest", "id": "o1"},
             "weight": 0.25, "fragile": true, "delta": -3, "notes": [{"text": "one"}, {"text": "two"}]}
            """)
        #expect(message.json == expected, "\(message.json)")
    }

    @Test func anEnumNumberTheSchemaDoesNotNameStaysANumber() async throws {
        let data = try await Self.encode("colour: 7", as: "kagami.shop.Item")
        #expect(try Self.schema().decode(data, as: "kagami.shop.Item").get().json == ["colour": 7])
    }

    @Test func fieldsTheTypeDoesNotDeclareAreKeptAsUnknown() async throws {
        // An Item read as an OrderRequest: field 1 (a string in both) fits, the others are unknown.
        let data = try await Self.encode(#"name: "tea" colour: RED note { text: "x" }"#, as: "kagami.shop.Item")
        let message = try Self.schema().decode(data, as: "kagami.shop.OrderRequest").get()
        #expect(message.json == ["id": "tea"])
        #expect(message.unknownFields.map(\.field) == [
            ProtobufWire.Field(number: 3, value: .varint(1)), ProtobufWire.Field(number: 8, value: .message([.init(number: 1, value: .text("x"))])),
        ])
        #expect(message.unknownFields.allSatisfy { $0.path == "" })
    }

    @Test func aMessageThatDoesNotFitItsTypeSaysWhere() async throws {
        // Order's field 2 is an Item message; a varint there does not fit.
        let failure = try #require(Self.schema().decode(Data([0x0A, 0x01, 0x61, 0x10, 0x05]), as: "kagami.shop.Order").failureValue)
        #expect(failure.offset == 3)
        #expect(failure.reason == "field items (2) is declared kagami.shop.Item but came as varint")
        let cut = try #require(Self.schema().decode(Data([0x0A, 0x09, 0x61]), as: "kagami.shop.Order").failureValue)
        #expect(cut.description == "at byte 1: field id (1) declares 9 bytes, 1 remain")
        let notText = try #require(Self.schema().decode(Data([0x0A, 0x02, 0xFF, 0xFE]), as: "kagami.shop.OrderRequest").failureValue)
        #expect(notText.reason == "field id is declared string but is not UTF-8")
    }

    @Test func anExchangeIsReadWithItsMethodsTypes() async throws {
        let request = try await Self.encode(#"id: "o1""#, as: "kagami.shop.OrderRequest")
        let response = try await Self.encode(#"id: "o1" total_cents: 18446744073709551615 items { name: "tea" }"#, as: "kagami.shop.Order")
        func framed(_ data: Data) -> Data { Data([0, 0, 0, UInt8(data.count >> 8), UInt8(data.count & 0xFF)]) + data }
        var flow = Flow(
            mode: .reverse,
            request: FlowRequest(method: "POST", scheme: "http", host: "127.0.0.1", port: 50051, target: "/kagami.shop.Shop/GetOrder", version: "HTTP/2.0",
                                 headers: HeaderFields([("content-type", "application/grpc")]), body: FlowBody(data: framed(request))),
            timings: FlowTimings(start: Date(timeIntervalSince1970: 1_700_000_000)))
        flow.response = FlowResponse(status: 200, version: "HTTP/2.0", headers: HeaderFields([("content-type", "application/grpc")]), body: FlowBody(data: framed(response)))
        let exchange = try #require(GRPCExchange(flow: flow, schema: try Self.schema()))
        #expect(exchange.method?.name == "GetOrder")
        #expect(try exchange.request.messages[0].typed?.get().json == ["id": "o1"])
        #expect(try exchange.response?.messages[0].typed?.get().json == Self.json(#"{"id": "o1", "items": [{"name": "tea"}], "totalCents": "18446744073709551615"}"#))
        // Without a schema, or for a method it lacks, messages are read without names only.
        #expect(GRPCExchange(flow: flow)?.request.messages[0].typed == nil)
        #expect(GRPCExchange(flow: flow, schema: ProtobufSchema())?.method == nil)
    }

    @Test func wellKnownTypesAtTheirEdges() {
        #expect(TypedReader.timestamp(seconds: 0, nanos: 0) == "1970-01-01T00:00:00Z")
        #expect(TypedReader.timestamp(seconds: -1, nanos: 10_000_000) == "1969-12-31T23:59:59.010Z")
        #expect(TypedReader.timestamp(seconds: 253_402_300_800, nanos: 0) == nil)
        #expect(TypedReader.duration(seconds: -1, nanos: -500_000_000) == "-1.500s")
    }

    @Test func aFolderThatDoesNotCompileGivesProtocsFileAndLine() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-proto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("syntax = \"proto3\";\nmessage A {\n  strin name = 1;\n}\n".utf8).write(to: folder.appendingPathComponent("broken.proto"))
        #expect(throws: ProtobufSchema.Failure.self) { try ProtoFiles.compile(directory: folder.path) }
        do {
            _ = try ProtoFiles.compile(directory: folder.path)
        } catch {
            #expect(error.description.contains("broken.proto:3:"), "\(error)")
        }
        #expect(throws: ProtobufSchema.Failure.self) { try ProtobufSchema(descriptorSet: Data([0xFF, 0xFF]), source: "junk.pb") }
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
