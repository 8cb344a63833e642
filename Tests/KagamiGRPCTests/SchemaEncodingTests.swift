import Foundation
import KagamiFlow
@testable import KagamiGRPC
import KagamiJSON
import KagamiTesting
import Testing

/// JSON written back as Protocol Buffers with the test shop's schema: protoc's bytes read and
/// written again are the same bytes, JSON that doesn't fit says where, and gRPC bodies are
/// framed (and compressed) as their side's `grpc-encoding` says.
@Suite struct SchemaEncodingTests {
    static func schema() throws -> ProtobufSchema { try ProtobufSchemaTests.schema() }

    static func encodingFailure(_ json: String, as type: String = "kagami.shop.Item") throws -> ProtobufEncodingFailure? {
        let schema = try schema()
        let value = try JSONValue(parsing: json)
        do {
            _ = try schema.encode(value, as: type)
            return nil
        } catch {
            return error
        }
    }

    static let everyKindOfField = """
        name: "tea" price_cents: -1200 colour: GREEN sizes: [1, 2, 300] stock { key: "a" value: 4 } stock { key: "b" value: 0 }
        code: "X" note { text: "hi" blob: "\\001\\002" } added { seconds: 1700000000 nanos: 500000000 } shelf_life { seconds: 90 nanos: 1000 }
        attributes { fields { key: "k" value { list_value { values { number_value: 1.5 } values { bool_value: true } values { null_value: NULL_VALUE } } } } }
        stock_limit { value: 9 } extra { [type.googleapis.com/kagami.shop.OrderRequest] { id: "o1" } } weight: 0.25 fragile: true delta: -3
        notes { text: "one" } notes { text: "two" }
        """

    /// Decoded and encoded again, protoc's bytes come back byte for byte: every kind of field,
    /// negative numbers, maps with a zero value, a oneof, well-known types, an Any.
    @Test(arguments: [
        (everyKindOfField, "kagami.shop.Item"),
        (#"percent: 0 delta: -2147483648 price_cents: -9223372036854775808 weight: -0.0 shelf_life { seconds: -1 nanos: -500000000 }"#, "kagami.shop.Item"),
        (#"id: "o1" total_cents: 18446744073709551615 items { name: "tea" sizes: [] } items { stock { key: "" value: 0 } }"#, "kagami.shop.Order"),
        (#"extra { [type.googleapis.com/google.protobuf.Duration] { seconds: 3 } } added { seconds: -62135596800 }"#, "kagami.shop.Item"),
    ])
    func protocsBytesComeBackTheSame(text: String, type: String) async throws {
        let data = try await ProtobufSchemaTests.encode(text, as: type)
        let schema = try Self.schema()
        let decoded = try schema.decode(data, as: type).get()
        let encoded = try schema.encode(decoded.json, as: type)
        #expect(encoded == data, "\(decoded.json.serialized()): \(GRPCExchange.Message.hex(encoded)) != \(GRPCExchange.Message.hex(data))")
    }

    /// What people type: proto field names as well as JSON names, numbers for enums and 64-bit
    /// integers, strings for 32-bit ones, URL-safe base64, a time with an offset.
    @Test func theLenientFormsTheMappingAccepts() async throws {
        let json = try JSONValue(parsing: """
            {"price_cents": 12, "colour": 2, "delta": "-3", "note": {"blob": "-_8"}, "added": "2023-11-15T00:13:20.5+02:00", "stockLimit": null}
            """)
        let expected = try await ProtobufSchemaTests.encode(
            #"price_cents: 12 colour: GREEN delta: -3 note { blob: "\373\377" } added { seconds: 1700000000 nanos: 500000000 }"#, as: "kagami.shop.Item")
        #expect(try Self.schema().encode(json, as: "kagami.shop.Item") == expected)
    }

    @Test func jsonThatDoesNotFitSaysWhereAndWhatType() throws {
        #expect(try Self.encodingFailure(#"{"priceCents": "12x"}"#)?.description == #"priceCents (int64): "12x" is not a whole number"#)
        #expect(try Self.encodingFailure(#"{"colour": "BLUE"}"#)?.description
            == "colour (kagami.shop.Colour): BLUE is not a value of kagami.shop.Colour (its values: COLOUR_UNSPECIFIED, RED, GREEN)")
        #expect(try Self.encodingFailure(#"{"notes": [{"text": "a"}, {"text": 5}]}"#)?.description == "notes[1].text (string): expected a string, found integer")
        #expect(try Self.encodingFailure(#"{"sizes": [1, 4294967296]}"#)?.description == "sizes[1] (int32): 4294967296 is out of range (-2147483648 to 2147483647)")
        #expect(try Self.encodingFailure(#"{"stock": {"a": true}}"#)?.description == "stock.a (int32): expected a number, found boolean")
        #expect(try Self.encodingFailure(#"{"percent": 5, "code": "X"}"#)?.description == "code (kagami.shop.Item): percent and code are both of discount: give one")
        #expect(try Self.encodingFailure(#"{"nmae": "tea"}"#)?.description.hasPrefix("nmae (kagami.shop.Item): kagami.shop.Item has no field nmae (its fields: name, priceCents,") == true)
        #expect(try Self.encodingFailure(#"{"added": "yesterday"}"#)?.description
            == #"added (google.protobuf.Timestamp): expected an RFC 3339 time such as "2024-01-31T12:00:00.5Z", found "yesterday""#)
        #expect(try Self.encodingFailure(#"{"note": {"blob": "not base64!"}}"#)?.description == "note.blob (bytes): expected bytes in base64, found text that is not base64")
        #expect(try Self.encodingFailure("[1]")?.description == "the message (kagami.shop.Item): expected an object, found array")
        #expect(try Self.encodingFailure(#"{"extra": {"@type": "type.googleapis.com/x.Unknown", "a": 1}}"#)?.path == "extra")
    }

    /// A body framed with gzip is what `GRPCExchange.side` reads back: flag set, messages whole.
    @Test(arguments: [nil, "gzip", "identity"]) func bodiesAreFramedAsTheirEncodingSays(encoding: String?) throws {
        let schema = try Self.schema()
        let messages: [JSONValue] = [["id": "a", "totalCents": "7"], ["id": .string(String(repeating: "b", count: 300))]]
        let body = try GRPCExchange.body(json: messages, type: "kagami.shop.Order", schema: schema, encoding: encoding)
        let side = GRPCExchange.side(FlowBody(data: body), encoding: encoding)
        #expect(side.problem == nil)
        #expect(side.messages.map(\.compressed) == [encoding == "gzip", encoding == "gzip"])
        #expect(try side.messages.map { try schema.decode($0.payload, as: "kagami.shop.Order").get().json } == messages)
        #expect(throws: GRPCExchange.EncodingFailure.self) { try GRPCExchange.framed([Data()], encoding: "snappy") }
        do {
            _ = try GRPCExchange.body(json: [["id": 1]], type: "kagami.shop.Order", schema: schema, encoding: encoding)
        } catch {
            #expect(error.description == "message 0 does not fit kagami.shop.Order: id (string): expected a string, found integer")
        }
    }

    /// Fields a newer .proto added (unknown to this schema), at the top and in a nested
    /// message, ride in the JSON as their bytes and go out again byte for byte, also when a
    /// known field beside them is edited.
    @Test func unknownFieldsSurviveTheRoundTripThroughJSON() throws {
        let schema = try Self.schema()
        // Order{id: "o1", items: [Item{name: "tea", 30: 7}], 9: "x"}
        let item: [UInt8] = [0x0A, 0x03, 0x74, 0x65, 0x61] + [0xF0, 0x01, 0x07]
        let order = Data([0x0A, 0x02, 0x6F, 0x31, 0x12, UInt8(item.count)] + item + [0x4A, 0x01, 0x78])
        let kept = try schema.decode(order, as: "kagami.shop.Order", keepingUnknownFields: true).get()
        #expect(kept.unknownFields.count == 2)
        #expect(kept.json == ["id": "o1", "items": [["name": "tea", "@unknown": "8AEH"]], "@unknown": "SgF4"])
        #expect(try schema.encode(kept.json, as: "kagami.shop.Order") == order)
        // Read for display, the JSON is the plain mapping.
        #expect(try schema.decode(order, as: "kagami.shop.Order").get().json == ["id": "o1", "items": [["name": "tea"]]])

        var object = try #require(kept.json.objectValue)
        object["items"] = [["name": "cup", "@unknown": "8AEH"]]
        let edited = JSONValue.object(object)
        let editedItem: [UInt8] = [0x0A, 0x03, 0x63, 0x75, 0x70, 0xF0, 0x01, 0x07]
        #expect(try schema.encode(edited, as: "kagami.shop.Order") == Data([0x0A, 0x02, 0x6F, 0x31, 0x12, 0x08] + editedItem + [0x4A, 0x01, 0x78]))

        #expect(try Self.encodingFailure(#"{"@unknown": 5}"#)?.description
            == "@unknown (kagami.shop.Item): expected the wire bytes of fields kagami.shop.Item does not declare, in base64, found integer")
        // 0x0A 0x05: a length past the end.
        #expect(try Self.encodingFailure(#"{"name": "tea", "@unknown": "CgU="}"#)?.description
            == "@unknown (kagami.shop.Item): the bytes are not whole Protocol Buffers fields at byte 1: field 1 declares 5 bytes, 0 remain")
    }

    /// A sample message (what `kagami mock` answers without a file) writes every field it
    /// sets, none at its default: read back, it is the same JSON.
    @Test(arguments: ["kagami.shop.Item", "kagami.shop.Order", "kagami.shop.OrderRequest"]) func aSampleMessageComesBackWhole(type: String) throws {
        let schema = try Self.schema()
        let sample = schema.sample(of: type)
        let encoded = try schema.encode(sample, as: type)
        #expect(try schema.decode(encoded, as: type).get().json.serialized([.sortedKeys]) == sample.serialized([.sortedKeys]))
        #expect(sample["id"] == (type == "kagami.shop.Item" ? nil : "id"))
    }

    @Test func wellKnownTypesAtTheirEdges() {
        #expect(TypedWriter.timestamp("1970-01-01T00:00:00Z")! == (0, 0))
        #expect(TypedWriter.timestamp("1969-12-31T23:59:59.010Z")! == (-1, 10_000_000))
        #expect(TypedWriter.timestamp("0001-01-01T00:00:00Z")! == (-62_135_596_800, 0))
        #expect(TypedWriter.timestamp("9999-12-31T23:59:59.999999999Z")! == (253_402_300_799, 999_999_999))
        #expect(TypedWriter.timestamp("2024-02-30T00:00:00") == nil)
        #expect(TypedWriter.duration("-1.500s")! == (-1, -500_000_000))
        #expect(TypedWriter.duration("1.0000000001s") == nil)
        #expect(TypedWriter.snakeCase("shelfLife") == "shelf_life")
    }
}
