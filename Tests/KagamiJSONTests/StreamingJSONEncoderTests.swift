import Foundation
import KagamiJSON
import Testing

struct StreamingJSONEncoderTests {
    enum Color: String, Codable, Hashable { case red, green }

    struct Inner: Codable, Hashable {
        var name: String
        var tags: [String]
        var maybe: Int?
    }

    struct Everything: Codable, Hashable {
        var int = -42
        var int8: Int8 = -8
        var int16: Int16 = 1600
        var int32: Int32 = -320_000
        var int64: Int64 = Int64.max
        var uint: UInt = 7
        var uint8: UInt8 = 255
        var uint16: UInt16 = 65535
        var uint32: UInt32 = 4_000_000_000
        var uint64: UInt64 = UInt64.max
        var double = 0.1 + 0.2
        var float: Float = 1.5
        var bigDouble = 1e300
        var bool = true
        var text = "quote \" backslash \\ slash / tab \t newline \n control \u{01} emoji 🪞 日本"
        var emptyText = ""
        var date = Date(timeIntervalSinceReferenceDate: 785_000_000.123_456)
        var data = Data([0, 1, 2, 250, 255])
        var url = URL(string: "https://api.example.com/v1/users?q=a%20b")
        var uuid = UUID(uuidString: "6F1C2B5E-8D1A-4C3B-9E2F-0A1B2C3D4E5F")
        var color = Color.green
        var present: String? = "here"
        var absent: String? = nil
        var numbers = [1, 2, 3]
        var empty: [Int] = []
        var nested = [Inner(name: "a", tags: ["x", "y"], maybe: nil), Inner(name: "b", tags: [], maybe: 3)]
        var optionals: [Int?] = [1, nil, 3]
        var dictionary = ["one": 1]
        var intKeys = [7: "seven"]
        var matrix = [[1, 2], [], [3]]
    }

    private func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        return decoder
    }

    @Test func everyKindOfValueReadsBackWithJSONDecoder() throws {
        let value = Everything()
        let data = try StreamingJSONEncoder().encode(value)
        #expect(try decoder().decode(Everything.self, from: data) == value)
        // The same document JSONEncoder writes, member for member.
        let foundation = JSONEncoder()
        foundation.dateEncodingStrategy = .deferredToDate
        let streamed = try JSONValue(parsing: String(decoding: data, as: UTF8.self))
        let expected = try JSONValue(parsing: String(decoding: try foundation.encode(value), as: UTF8.self))
        #expect(streamed.isJSONEqual(to: expected))
        #expect(!String(decoding: data, as: UTF8.self).contains("absent"), "nil optionals are left out, as JSONEncoder does")
    }

    @Test func topLevelValuesOfEachShape() throws {
        #expect(String(decoding: try StreamingJSONEncoder().encode([1, 2]), as: UTF8.self) == "[1,2]")
        #expect(String(decoding: try StreamingJSONEncoder().encode("a\"b"), as: UTF8.self) == #""a\"b""#)
        #expect(String(decoding: try StreamingJSONEncoder().encode(Optional<Int>.none), as: UTF8.self) == "null")
        #expect(String(decoding: try StreamingJSONEncoder().encode([String: Int]()), as: UTF8.self) == "{}")
        #expect(String(decoding: try StreamingJSONEncoder().encode(Inner(name: "n", tags: ["t"], maybe: 1)), as: UTF8.self)
            == #"{"name":"n","tags":["t"],"maybe":1}"#)
    }

    @Test func numbersWithoutAJSONFormAreRefused() {
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(["x": Double.infinity]) }
    }

    struct Nesting: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            var inner = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "outer"))
            try inner.encode(1, forKey: AnyKey(stringValue: "inner"))
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    @Test func nestedContainersAreRefusedSoCallersCanFallBack() {
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(Nesting()) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(["a": Nesting()]) }
    }
}
