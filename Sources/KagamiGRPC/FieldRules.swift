import Foundation
import KagamiJSON
import SwiftProtobuf

/// The common subset of the validation annotations a field may carry — protovalidate's
/// `(buf.validate.field)` (extension 1159 of `FieldOptions`) and protoc-gen-validate's
/// `(validate.rules)` (1071) — as JSON Schema keywords over the field's proto3 JSON value:
/// `required`; strings' `const`, `len`, `min_len`, `max_len`, `pattern`, `in`; 32-bit integers',
/// floats' and doubles' `const`, `lt`, `lte`, `gt`, `gte`, `in`; repeated fields' `min_items`,
/// `max_items`. Other rules (CEL, 64-bit ranges, formats such as `email`) are not read.
///
/// Both extensions are read from the options' unknown fields, so no copy of their `.proto`
/// files is needed: their numbers are the same in both (protovalidate kept PGV's).
struct FieldRules: Sendable, Equatable {
    /// The field must be present (buf's `required`, PGV's `message.required`).
    var required = false
    /// JSON Schema keywords for the field's value (for a repeated field, for each item).
    var keywords: JSONObject = [:]
    /// Keywords for a repeated field's list itself (`minItems`, `maxItems`).
    var listKeywords: JSONObject = [:]

    static let protovalidateExtension = 1159
    static let validateRulesExtension = 1071

    var isEmpty: Bool { !required && keywords.isEmpty && listKeywords.isEmpty }

    /// The rules of `field`, read from whichever extension its options carry.
    init(of field: Google_Protobuf_FieldDescriptorProto) {
        let bytes = [UInt8](field.options.unknownFields.data)
        guard !bytes.isEmpty, let options = Self.fields(bytes, in: 0..<bytes.count) else { return }
        for option in options where option.number == Self.protovalidateExtension || option.number == Self.validateRulesExtension {
            guard case .bytes(let range) = option.value, let rules = Self.fields(bytes, in: range) else { continue }
            read(rules, bytes: bytes, type: field.type)
        }
    }

    init() {}

    private mutating func read(_ rules: [(number: Int, value: WireValue)], bytes: [UInt8], type: Google_Protobuf_FieldDescriptorProto.TypeEnum) {
        for rule in rules {
            switch (rule.number, rule.value) {
            case (25, .varint(let flag)):
                // protovalidate: `required`.
                required = required || flag != 0
            case (17, .bytes(let range)):
                // protoc-gen-validate: `message.required` (MessageRules field 2).
                for item in Self.fields(bytes, in: range) ?? [] where item.number == 2 {
                    if case .varint(let flag) = item.value, flag != 0 { required = true }
                }
            case (14, .bytes(let range)) where type == .string:
                string(Self.fields(bytes, in: range) ?? [], bytes: bytes)
            case (18, .bytes(let range)):
                for item in Self.fields(bytes, in: range) ?? [] {
                    guard case .varint(let count) = item.value else { continue }
                    if item.number == 1 { listKeywords["minItems"] = .integer(Int(clamping: count)) }
                    if item.number == 2 { listKeywords["maxItems"] = .integer(Int(clamping: count)) }
                }
            case (let number, .bytes(let range)) where Self.numericRules[number] == type:
                numeric(Self.fields(bytes, in: range) ?? [], type: type)
            default:
                break
            }
        }
    }

    /// The rule message's number for each numeric type whose values the JSON mapping shows as
    /// numbers (64-bit integers are strings there, so their ranges are not read).
    static let numericRules: [Int: Google_Protobuf_FieldDescriptorProto.TypeEnum] = [
        1: .float, 2: .double, 3: .int32, 5: .uint32, 7: .sint32, 9: .fixed32, 11: .sfixed32,
    ]

    private mutating func string(_ rules: [(number: Int, value: WireValue)], bytes: [UInt8]) {
        var allowed: [JSONValue] = []
        for rule in rules {
            switch (rule.number, rule.value) {
            case (1, .bytes(let range)): keywords["const"] = .string(String(decoding: bytes[range], as: UTF8.self))
            case (2, .varint(let count)): keywords["minLength"] = .integer(Int(clamping: count))
            case (3, .varint(let count)): keywords["maxLength"] = .integer(Int(clamping: count))
            case (19, .varint(let count)):
                keywords["minLength"] = .integer(Int(clamping: count))
                keywords["maxLength"] = .integer(Int(clamping: count))
            case (6, .bytes(let range)): keywords["pattern"] = .string(String(decoding: bytes[range], as: UTF8.self))
            case (10, .bytes(let range)): allowed.append(.string(String(decoding: bytes[range], as: UTF8.self)))
            default: break
            }
        }
        if !allowed.isEmpty { keywords["enum"] = .array(allowed) }
    }

    private mutating func numeric(_ rules: [(number: Int, value: WireValue)], type: Google_Protobuf_FieldDescriptorProto.TypeEnum) {
        var allowed: [JSONValue] = []
        for rule in rules {
            guard let value = Self.number(rule.value, type: type) else { continue }
            switch rule.number {
            case 1: keywords["const"] = value
            case 2: keywords["exclusiveMaximum"] = value
            case 3: keywords["maximum"] = value
            case 4: keywords["exclusiveMinimum"] = value
            case 5: keywords["minimum"] = value
            case 6: allowed.append(value)
            default: break
            }
        }
        if !allowed.isEmpty { keywords["enum"] = .array(allowed) }
    }

    /// A rule's value as the JSON mapping shows a value of the field's type.
    static func number(_ raw: WireValue, type: Google_Protobuf_FieldDescriptorProto.TypeEnum) -> JSONValue? {
        switch (type, raw) {
        case (.int32, .varint(let bits)): .integer(Int(Int32(truncatingIfNeeded: bits)))
        case (.uint32, .varint(let bits)): .integer(Int(UInt32(truncatingIfNeeded: bits)))
        case (.sint32, .varint(let bits)): .integer(Int(Int32(truncatingIfNeeded: ProtobufWire.zigzag(bits))))
        case (.fixed32, .fixed32(let bits)): .integer(Int(bits))
        case (.sfixed32, .fixed32(let bits)): .integer(Int(Int32(bitPattern: bits)))
        case (.float, .fixed32(let bits)): .number(Double(Float(bitPattern: bits)))
        case (.double, .fixed64(let bits)): .number(Double(bitPattern: bits))
        default: nil
        }
    }

    /// The fields in `range` as they came (no guessing at what a length-delimited value holds);
    /// nil when the bytes are not a message.
    static func fields(_ bytes: [UInt8], in range: Range<Int>) -> [(number: Int, value: WireValue)]? {
        var reader = TypedReader(schema: ProtobufSchema(), reader: ProtobufWire.Reader(bytes: bytes, budget: ProtobufWire.maximumFields))
        reader.reader.index = range.lowerBound
        guard let fields = try? reader.rawFields(end: range.upperBound) else { return nil }
        return fields.map { ($0.number, $0.value) }
    }
}
