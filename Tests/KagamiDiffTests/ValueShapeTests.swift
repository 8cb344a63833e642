import Foundation
import KagamiJSON
import Testing

@testable import KagamiDiff

/// A body's shape read straight from its bytes is the shape its parsed value gives, sample by
/// sample, whatever the body holds: repeated and escaped names (left to parsing), id-keyed
/// maps, places that vary or not, nesting past the depth kept, more names than are kept.
@Suite struct ValueShapeTests {
    /// Everything a shape holds, members in their order.
    static func describe(_ shape: ValueShape, _ indent: String = "") -> String {
        var text = "\(indent)seen \(shape.seen) first \(shape.firstID?.uuidString ?? "-") null \(shape.nulls) bool \(shape.booleans) "
            + "number \(shape.numbers) string \(shape.strings) array \(shape.arrays) object \(shape.objects) empty \(shape.emptyArrays) "
            + "scalar \(shape.scalar.text ?? "-") varies \(shape.scalar.varies) samples \(shape.scalar.samples) "
            + "volatile \(shape.scalar.looksVolatile) \(shape.scalar.firstID?.uuidString ?? "-")\n"
        for (name, member) in shape.members { text += "\(indent)\(name):\n" + describe(member, indent + "  ") }
        if let item = shape.items.first { text += "\(indent)[]:\n" + describe(item, indent + "  ") }
        return text
    }

    /// Bodies of one generated API, some with the oddities that make pulling hand over to parsing.
    static func bodies(count: Int) -> [String] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        func value(_ depth: Int) -> String {
            switch next(depth > 3 ? 6 : 9) {
            case 0: return "null"
            case 1: return next(2) == 0 ? "true" : "false"
            case 2: return ["0", "-0", "42", "1.5", "1e3", "123456789012345678901234567890", "7"][next(7)]
            case 3: return ["\"fixed\"", "\"2026-11-28T10:00:00Z\"", "\"caf\\u00e9\"", "\"tab\\t\"", "\"\(next(1000))\""][next(5)]
            case 4: return "\"stable\""
            case 5: return "12"
            case 6: return "[" + (0..<next(4)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            case 7:
                // A map keyed by ids.
                return "{" + (0..<next(4)).map { _ in "\"\(1000 + next(9000))\":\(value(depth + 1))" }.joined(separator: ",") + "}"
            default:
                var members = (0..<next(6)).map { _ in "\"k\(next(400))\":\(value(depth + 1))" }
                if next(10) == 0 { members.append("\"same\":1,\"same\":\(value(depth + 1))") }
                if next(10) == 0 { members.append("\"esc\\u0061ped\":\(value(depth + 1))") }
                return "{\"id\":\(next(100000)),\"fixed\":\"one\"" + (members.isEmpty ? "" : ",") + members.joined(separator: ",") + "}"
            }
        }
        let deep = String(repeating: #"{"d":"#, count: 40) + "1" + String(repeating: "}", count: 40)
        return (0..<count).map { index in index % 50 == 0 ? deep : value(0) }
    }

    @Test func pulledShapesAreTheParsedOnes() throws {
        var parsed = ValueShape(), pulled = ValueShape()
        var handedOver = 0
        for (index, body) in Self.bodies(count: 3000).enumerated() {
            let id = UUID(uuid: (UInt8(index % 256), UInt8(index / 256), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
            parsed.add(try JSONValue(parsing: body), id: id)
            let data = Data(body.utf8)
            if !data.withUnsafeBytes({ pulled.add(json: $0, id: id) }) {
                handedOver += 1
                pulled.add(try JSONValue(parsing: data), id: id)
            }
        }
        // Both ways were taken, and past the members kept.
        #expect(handedOver > 100 && handedOver < 2900, "\(handedOver) of 3000 parsed")
        #expect(parsed.members.count == ValueShape.Limits.members)
        #expect(Self.describe(pulled) == Self.describe(parsed))
    }

    @Test func aDocumentThatIsNotJSONAddsNothing() {
        var shape = ValueShape()
        for text in [#"{"a":1,}"#, "[1 2]", #"{"a":"#] {
            #expect(!Data(text.utf8).withUnsafeBytes { shape.add(json: $0, id: UUID()) })
        }
        #expect(shape.seen == 0 && shape.members.isEmpty)
    }
}
