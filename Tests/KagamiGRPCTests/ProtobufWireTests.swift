import Foundation
import KagamiGRPC
import KagamiTesting
import Testing

/// Bytes written by Google's own protobuf library (Python `protobuf`, `SerializeToString()`),
/// read back without their `.proto`.
@Suite struct ProtobufWireTests {
    func bytes(_ hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            data.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    func fields(_ hex: String) throws -> [ProtobufWire.Field] {
        try ProtobufWire.decode(bytes(hex)).get()
    }

    /// A `FileDescriptorProto` for `message Note { int64 id = 1; string title = 2; }` in
    /// package `notes.v1`, with `java_package = "x"` and `optimize_for = CODE_SIZE`.
    @Test func nestedMessagesTextAndVarints() throws {
        let decoded = try fields("0a0b6e6f7465732e70726f746f12086e6f7465732e763122210a044e6f7465120a0a026964180120012803120d0a057469746c6518022001280942050a01784802")
        #expect(decoded.map(\.number) == [1, 2, 4, 8])
        #expect(decoded[0].value == .text("notes.proto"))
        #expect(decoded[1].value == .text("notes.v1"))
        guard case .message(let note) = decoded[2].value else {
            Issue.record("message_type is not read as a message: \(decoded[2].value)")
            return
        }
        #expect(note[0] == .init(number: 1, value: .text("Note")))
        #expect(note.count == 3)
        #expect(note[1].value == .message([
            .init(number: 1, value: .text("id")), .init(number: 3, value: .varint(1)),
            .init(number: 4, value: .varint(1)), .init(number: 5, value: .varint(3)),
        ]))
        #expect(note[2].value == .message([
            .init(number: 1, value: .text("title")), .init(number: 3, value: .varint(2)),
            .init(number: 4, value: .varint(1)), .init(number: 5, value: .varint(9)),
        ]))
        #expect(decoded[3].value == .message([.init(number: 1, value: .text("x")), .init(number: 9, value: .varint(2))]))
    }

    @Test func negativeVarintsFixedWidthsAndZigzag() throws {
        // Int64Value(value: -2): ten bytes of varint.
        let negative = try fields("08feffffffffffffffff01")
        guard case .varint(let bits) = negative[0].value else {
            Issue.record("\(negative)")
            return
        }
        #expect(ProtobufWire.signed(bits) == -2)
        #expect(ProtobufWire.zigzag(3) == -2)
        #expect(ProtobufWire.zigzag(4) == 2)
        // DoubleValue(1.5) and FloatValue(0.25).
        #expect(try fields("09000000000000f83f") == [.init(number: 1, value: .fixed64(Double(1.5).bitPattern))])
        #expect(try fields("0d0000803e") == [.init(number: 1, value: .fixed32(Float(0.25).bitPattern))])
        // Timestamp(seconds: 1700000000, nanos: 5).
        #expect(try fields("0880e2cfaa061005") == [.init(number: 1, value: .varint(1_700_000_000)), .init(number: 2, value: .varint(5))])
    }

    @Test func bytesThatAreNeitherTextNorAMessageStayBytes() throws {
        // Field 1, 3 bytes: ff ff ff (not UTF-8, an unterminated varint tag).
        #expect(try fields("0a03ffffff") == [.init(number: 1, value: .bytes(Data([0xFF, 0xFF, 0xFF])))])
        #expect(try fields("") == [])
        #expect(try fields("0a00") == [.init(number: 1, value: .text(""))])
    }

    @Test func groupsAreReadBetweenTheirTags() throws {
        // Field 2 as a group (start 0x13, end 0x14) holding field 1 = 150.
        #expect(try fields("1308960114") == [.init(number: 2, value: .group([.init(number: 1, value: .varint(150))]))])
    }

    @Test(arguments: [
        ("08", "at byte 1: varint cut short by the end of the bytes"),
        ("0a05616263", "at byte 1: field 1 declares 5 bytes, 3 remain"),
        ("0f", "at byte 0: wire type 7 does not exist"),
        ("00", "at byte 0: field number 0 is out of range"),
        ("1308", "at byte 2: varint cut short by the end of the bytes"),
        ("1314" + "1c", "at byte 2: end of group 3 that was not started"),
        ("13", "at byte 1: group 2 is not closed"),
        ("09000000", "at byte 1: 8-byte value cut short by the end of the bytes"),
        ("08ffffffffffffffffff7f", "at byte 1: varint longer than 64 bits"),
    ])
    func malformedBytesSayWhere(hex: String, expected: String) {
        switch ProtobufWire.decode(bytes(hex)) {
        case .success(let fields): Issue.record("\(hex) decoded as \(fields)")
        case .failure(let failure): #expect(failure.description == expected)
        }
    }

    /// Seeded random and mutated bytes: every input ends in fields or a failure, never a trap,
    /// and deep nesting stops at the depth limit.
    @Test func randomBytesNeverTrap() {
        var generator = SeededGenerator(state: 0x6b61_6761_6d69)
        let seed = [UInt8](bytes("0a0b6e6f7465732e70726f746f12086e6f7465732e763122210a044e6f7465120a0a026964180120012803120d0a057469746c6518022001280942050a01784802"))
        var decoded = 0
        for round in 0..<5_000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                input = seed
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    input[Int.random(in: 0..<input.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if case .success = ProtobufWire.decode(Data(input)) { decoded += 1 }
        }
        #expect(decoded > 0)
        // 10,000 nested length-delimited fields whose innermost bytes are not text.
        var nested = Data([0x08, 0x01])
        for _ in 0..<200 {
            var next = Data([0x0A])
            var length = nested.count
            repeat {
                next.append(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
                length >>= 7
            } while length > 0
            nested = next + nested
        }
        #expect(throws: Never.self) { try ProtobufWire.decode(nested).get() }
    }
}
