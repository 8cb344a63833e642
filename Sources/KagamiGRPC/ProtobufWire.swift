import Foundation
import KagamiFlow

/// Protocol Buffers decoded from the wire format alone, without a `.proto`: field numbers, wire
/// types and values, as `protoc --decode_raw` shows them. A length-delimited value is read as
/// text when it is printable UTF-8, else as a nested message when its bytes parse as one to
/// the end, else kept as bytes.
public enum ProtobufWire {
    /// One field as it appeared on the wire.
    public struct Field: Sendable, Hashable {
        public var number: Int
        public var value: Value

        public init(number: Int, value: Value) {
            self.number = number
            self.value = value
        }
    }

    public enum Value: Sendable, Hashable {
        /// Wire type 0. The same bits read as `int64`, `sint64` (zigzag) and `bool` are left
        /// to the reader: see `signed` and `zigzag`.
        case varint(UInt64)
        /// Wire type 1 (`fixed64`, `sfixed64`, `double`).
        case fixed64(UInt64)
        /// Wire type 5 (`fixed32`, `sfixed32`, `float`).
        case fixed32(UInt32)
        /// Wire type 2 read as printable UTF-8 text.
        case text(String)
        /// Wire type 2 that parsed, to its last byte, as a message.
        case message([Field])
        /// Wire type 2 that is neither.
        case bytes(Data)
        /// Wire types 3 and 4 (the deprecated groups), with the fields between them.
        case group([Field])

        public var wireTypeName: String {
            switch self {
            case .varint: "varint"
            case .fixed64: "fixed64"
            case .fixed32: "fixed32"
            case .text, .message, .bytes: "length-delimited"
            case .group: "group"
            }
        }
    }

    /// Why bytes are not a message, and at which byte.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var reason: String

        public var description: String { "at byte \(offset): \(reason)" }
    }

    /// Nested messages are read this deep at most; deeper length-delimited values stay bytes.
    public static let maximumDepth = 24
    /// A message of more fields than this is not decoded (an answer stays small).
    public static let maximumFields = 10_000

    /// The fields of `data` read as one message; a failure says where the bytes stopped making
    /// sense.
    public static func decode(_ data: Data) -> Result<[Field], Failure> {
        var reader = Reader(bytes: [UInt8](data), budget: maximumFields)
        do {
            let fields = try reader.fields(depth: 0, group: nil)
            return .success(fields)
        } catch {
            return .failure(error)
        }
    }

    /// A varint's bits as a two's-complement `int64`.
    public static func signed(_ value: UInt64) -> Int64 { Int64(bitPattern: value) }

    /// A varint's bits as a zigzag-encoded `sint64`.
    public static func zigzag(_ value: UInt64) -> Int64 { Varint.unzigzag(value) }

    struct Reader {
        let bytes: [UInt8]
        var index = 0
        var budget: Int

        init(bytes: [UInt8], budget: Int) {
            self.bytes = bytes
            self.budget = budget
        }

        /// Fields up to the end of the bytes, or up to the end-group tag of `group`.
        mutating func fields(depth: Int, group: Int?, end: Int? = nil) throws(Failure) -> [Field] {
            let limit = end ?? bytes.count
            var found: [Field] = []
            while index < limit {
                let tagOffset = index
                let tag = try varint(limit: limit)
                let number = tag >> 3
                guard number >= 1, number <= 536_870_911 else {
                    throw Failure(offset: tagOffset, reason: "field number \(number) is out of range")
                }
                budget -= 1
                guard budget >= 0 else {
                    throw Failure(offset: tagOffset, reason: "more than \(ProtobufWire.maximumFields) fields")
                }
                let fieldNumber = Int(number)
                switch tag & 7 {
                case 0:
                    found.append(Field(number: fieldNumber, value: .varint(try varint(limit: limit))))
                case 1:
                    found.append(Field(number: fieldNumber, value: .fixed64(try fixed(8, limit: limit))))
                case 5:
                    found.append(Field(number: fieldNumber, value: .fixed32(UInt32(try fixed(4, limit: limit)))))
                case 2:
                    let bytes = try lengthDelimitedBytes(limit: limit, field: "field \(fieldNumber)")
                    found.append(Field(number: fieldNumber, value: lengthDelimited(bytes, depth: depth)))
                case 3:
                    guard depth < ProtobufWire.maximumDepth else {
                        throw Failure(offset: tagOffset, reason: "groups nested deeper than \(ProtobufWire.maximumDepth)")
                    }
                    let inner = try fields(depth: depth + 1, group: fieldNumber, end: limit)
                    found.append(Field(number: fieldNumber, value: .group(inner)))
                case 4:
                    guard group == fieldNumber else {
                        throw Failure(offset: tagOffset, reason: "end of group \(fieldNumber) that was not started")
                    }
                    return found
                default:
                    throw Failure(offset: tagOffset, reason: "wire type \(tag & 7) does not exist")
                }
            }
            if let group {
                throw Failure(offset: index, reason: "group \(group) is not closed")
            }
            return found
        }

        /// The bytes of a length-delimited value (its length read first), skipped over; a length
        /// past `limit` is refused at the length, naming `field`.
        mutating func lengthDelimitedBytes(limit: Int, field: @autoclosure () -> String) throws(Failure) -> Range<Int> {
            let lengthOffset = index
            let length = try varint(limit: limit)
            guard length <= UInt64(limit - index) else {
                throw Failure(offset: lengthOffset, reason: "\(field()) declares \(length) bytes, \(limit - index) remain")
            }
            let start = index
            index += Int(length)
            return start..<index
        }

        /// Text when printable, else a message when the bytes parse as one, else bytes.
        mutating func lengthDelimited(_ range: Range<Int>, depth: Int) -> Value {
            let slice = bytes[range]
            if let text = String(validating: slice, as: UTF8.self), text.unicodeScalars.allSatisfy(Self.isPrintable) {
                return .text(text)
            }
            if depth < ProtobufWire.maximumDepth {
                var inner = Reader(bytes: Array(slice), budget: budget)
                if let fields = try? inner.fields(depth: depth + 1, group: nil), !fields.isEmpty {
                    budget = inner.budget
                    return .message(fields)
                }
            }
            return .bytes(Data(slice))
        }

        static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: true
            case 0..<0x20, 0x7F: false
            default: true
            }
        }

        mutating func varint(limit: Int) throws(Failure) -> UInt64 {
            let start = index
            do {
                return try Varint.read(bytes, at: &index, limit: limit)
            } catch .tooLong {
                throw Failure(offset: start, reason: "varint longer than 64 bits")
            } catch {
                throw Failure(offset: start, reason: "varint cut short by the end of the bytes")
            }
        }

        mutating func fixed(_ width: Int, limit: Int) throws(Failure) -> UInt64 {
            guard limit - index >= width else {
                throw Failure(offset: index, reason: "\(width)-byte value cut short by the end of the bytes")
            }
            var value: UInt64 = 0
            for offset in 0..<width {
                value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset))
            }
            index += width
            return value
        }
    }
}
