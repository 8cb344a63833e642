import Testing
import KagamiJSON

/// The text writer (member by member, no tree) writes what a value's own serialization writes,
/// compact or pretty printed at any depth, so a document written by hand reads the same as one
/// built as a `JSONValue`.
@Suite struct JSONTextWriterTests {
    /// `value` written member by member; `builtAt` nested values are handed over whole.
    static func write(_ value: JSONValue, to writer: inout JSONTextWriter, whole: Bool) {
        if whole {
            writer.value(value)
            return
        }
        switch value {
        case .null: writer.null()
        case .bool(let flag): writer.bool(flag)
        case .integer(let number): writer.integer(number)
        case .number(let number): writer.number(number)
        case .string(let text): writer.string(text)
        case .array(let items):
            writer.beginArray()
            for (index, item) in items.enumerated() { write(item, to: &writer, whole: index % 3 == 2) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for (index, (key, member)) in members.enumerated() {
                writer.key(key)
                write(member, to: &writer, whole: index % 3 == 2)
            }
            writer.endObject()
        }
    }

    static func randomValue(depth: Int, using generator: inout some RandomNumberGenerator) -> JSONValue {
        let kind = depth > 3 ? Int.random(in: 0..<5, using: &generator) : Int.random(in: 0..<8, using: &generator)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int.random(in: -1_000_000...1_000_000, using: &generator))
        case 3: return .number([0.5, 1.0, 2500.0, -3.25, 1e20, 0.001][Int.random(in: 0..<6, using: &generator)])
        case 4: return .string(["", "a", "quote \" and \\ back", "line\nbreak", "é😀"][Int.random(in: 0..<5, using: &generator)])
        case 5, 6:
            return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0..<4, using: &generator) {
                object["k\(index)"] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(object)
        }
    }

    @Test func writesWhatTheValueSerializes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &generator)
            for depth in [nil, 0, 3] as [Int?] {
                var writer = JSONTextWriter(prettyAt: depth)
                Self.write(value, to: &writer, whole: false)
                var expected: [UInt8] = []
                value.write(to: &expected, options: depth == nil ? [] : [.prettyPrinted], depth: depth ?? 0)
                #expect(writer.bytes == expected, "\(value) at depth \(String(describing: depth))")
            }
        }
    }

    @Test func prettyDocumentsAreIndentedTwoSpacesALevel() {
        var writer = JSONTextWriter(prettyAt: 1)
        writer.beginObject()
        writer.key("a"); writer.beginArray(); writer.integer(1); writer.beginObject(); writer.endObject(); writer.endArray()
        writer.key("b"); writer.value(["c": true])
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\n    \"a\": [\n      1,\n      {}\n    ],\n    \"b\": {\n      \"c\": true\n    }\n  }")
    }
}
