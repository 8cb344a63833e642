import Foundation
import KagamiFlow
import KagamiJSON
import SwiftProtobuf

/// A message read with its type: the proto3 JSON mapping of its fields (names, enums by name,
/// 64-bit integers as strings, bytes in base64, well-known types in their JSON forms), and the
/// fields its type does not declare, kept as they came.
public struct TypedMessage: Sendable, Hashable {
    /// A field the type does not declare, where it was found (`""` for the message itself,
    /// `"inner.items[2]"` deeper).
    public struct UnknownField: Sendable, Hashable {
        public var path: String
        public var field: ProtobufWire.Field
    }

    /// The message's full type name (`pkg.Message`).
    public var type: String
    public var json: JSONValue
    public var unknownFields: [UnknownField]
}

extension ProtobufSchema {
    /// Messages nested deeper than this are not read (the message is shown raw).
    public static let maximumDepth = 64

    /// The JSON member that carries, in a message read with `keepingUnknownFields`, the fields
    /// its type does not declare: their wire bytes in base64, which `encode(_:as:)` writes back
    /// as they are. `@` keeps it apart from field names, as `@type` in an Any.
    public static let unknownFieldsMember = "@unknown"

    /// `data` read as a `type` message (full name); a failure says at which byte and in which
    /// field the bytes stopped fitting the type. With `keepingUnknownFields`, each message
    /// object that has fields its type does not declare carries their bytes under
    /// `unknownFieldsMember`, so the JSON written back loses none of them.
    public func decode(_ data: Data, as type: String, keepingUnknownFields: Bool = false) -> Result<TypedMessage, ProtobufWire.Failure> {
        let name = Self.bare(type)
        var reader = TypedReader(schema: self, reader: ProtobufWire.Reader(bytes: [UInt8](data), budget: ProtobufWire.maximumFields))
        reader.keepsUnknownBytes = keepingUnknownFields
        do {
            let json = try reader.message(name, end: reader.reader.bytes.count, depth: 0, path: "")
            return .success(TypedMessage(type: name, json: json, unknownFields: reader.unknown))
        } catch {
            return .failure(error)
        }
    }

    /// The fields a message type declares, for display: name, number, type and label.
    public func fieldSummary(of type: String) -> [(name: String, number: Int, type: String, label: String)]? {
        guard let message = messages[Self.bare(type)] else { return nil }
        return message.field.map { field in
            let typeName: String = switch field.type {
            case .message, .enum, .group: Self.bare(field.typeName)
            default: Self.scalarName(field.type)
            }
            let label = isMap(field) ? "map" : field.label == .repeated ? "repeated" : field.hasOneofIndex && !field.proto3Optional ? "oneof" : ""
            return (field.name, Int(field.number), typeName, label)
        }
    }

    func isMap(_ field: Google_Protobuf_FieldDescriptorProto) -> Bool {
        field.label == .repeated && field.type == .message && (messages[Self.bare(field.typeName)]?.options.mapEntry ?? false)
    }

    static func scalarName(_ type: Google_Protobuf_FieldDescriptorProto.TypeEnum) -> String {
        switch type {
        case .double: "double"
        case .float: "float"
        case .int64: "int64"
        case .uint64: "uint64"
        case .int32: "int32"
        case .fixed64: "fixed64"
        case .fixed32: "fixed32"
        case .bool: "bool"
        case .string: "string"
        case .group: "group"
        case .message: "message"
        case .bytes: "bytes"
        case .uint32: "uint32"
        case .enum: "enum"
        case .sfixed32: "sfixed32"
        case .sfixed64: "sfixed64"
        case .sint32: "sint32"
        case .sint64: "sint64"
        }
    }

    /// The field's name in the JSON mapping: protoc's `json_name`, else lowerCamelCase.
    static func jsonName(_ field: Google_Protobuf_FieldDescriptorProto) -> String {
        field.hasJsonName ? field.jsonName : lowerCamelCase(field.name)
    }

    static func lowerCamelCase(_ name: String) -> String {
        var result = ""
        var upper = false
        for character in name {
            if character == "_" {
                upper = true
            } else {
                result.append(upper ? Character(character.uppercased()) : character)
                upper = false
            }
        }
        return result
    }
}

/// One field's value as it came off the wire, before its type gives it meaning.
enum WireValue {
    case varint(UInt64)
    case fixed64(UInt64)
    case fixed32(UInt32)
    case bytes(Range<Int>)

    var wireTypeName: String {
        switch self {
        case .varint: "varint"
        case .fixed64: "fixed64"
        case .fixed32: "fixed32"
        case .bytes: "length-delimited"
        }
    }
}

/// Reads a message along its descriptor, keeping offsets into the whole message for errors.
struct TypedReader {
    typealias Failure = ProtobufWire.Failure
    typealias FieldType = Google_Protobuf_FieldDescriptorProto.TypeEnum

    let schema: ProtobufSchema
    var reader: ProtobufWire.Reader
    var unknown: [TypedMessage.UnknownField] = []
    /// Whether a message's unknown fields also go into its JSON, as bytes under
    /// `ProtobufSchema.unknownFieldsMember`.
    var keepsUnknownBytes = false

    init(schema: ProtobufSchema, reader: ProtobufWire.Reader) {
        self.schema = schema
        self.reader = reader
    }

    var bytes: [UInt8] { reader.bytes }

    /// The message up to `end`, as JSON.
    mutating func message(_ type: String, end: Int, depth: Int, path: String) throws(Failure) -> JSONValue {
        guard depth < ProtobufSchema.maximumDepth else {
            throw Failure(offset: reader.index, reason: "messages nested deeper than \(ProtobufSchema.maximumDepth) at \(path)")
        }
        if type.hasPrefix("google.protobuf."), let value = try wellKnown(type, end: end, depth: depth, path: path) {
            return value
        }
        guard let descriptor = schema.messages[type] else {
            throw Failure(offset: reader.index, reason: "type \(type) is not in the schema")
        }
        var byNumber: [Int32: (offset: Int, field: Google_Protobuf_FieldDescriptorProto)] = [:]
        for (offset, field) in descriptor.field.enumerated() where byNumber[field.number] == nil { byNumber[field.number] = (offset, field) }
        var values: [Int: JSONValue] = [:]
        var unknownBytes: [UInt8] = []
        while reader.index < end {
            let tagOffset = reader.index
            let tag = try reader.varint(limit: end)
            let number = tag >> 3
            guard number >= 1, number <= 536_870_911 else {
                throw Failure(offset: tagOffset, reason: "field number \(number) is out of range")
            }
            reader.budget -= 1
            guard reader.budget >= 0 else { throw Failure(offset: tagOffset, reason: "more than \(ProtobufWire.maximumFields) fields") }
            guard let (position, field) = byNumber[Int32(number)] else {
                try keepUnknown(number: Int(number), wireType: tag & 7, tagOffset: tagOffset, end: end, depth: depth, path: path)
                if keepsUnknownBytes { unknownBytes += bytes[tagOffset..<reader.index] }
                continue
            }
            let name = ProtobufSchema.jsonName(field)
            let here = path.isEmpty ? name : path + "." + name
            let raw = try wireValue(wireType: tag & 7, tagOffset: tagOffset, end: end, field: field)
            if schema.isMap(field) {
                guard case .bytes(let range) = raw else { throw mismatch(field, raw, at: tagOffset) }
                let (key, value) = try mapEntry(field, range: range, depth: depth, path: here)
                var object = values[position]?.objectValue ?? [:]
                object[key] = value
                values[position] = .object(object)
            } else if field.label == .repeated {
                var items = values[position]?.arrayValue ?? []
                if case .bytes(let range) = raw, Self.packable(field.type) {
                    let saved = reader.index
                    reader.index = range.lowerBound
                    while reader.index < range.upperBound {
                        let start = reader.index
                        let item = try packedValue(field.type, end: range.upperBound)
                        items.append(try scalar(field, item, at: start, path: here))
                    }
                    reader.index = saved
                } else {
                    items.append(try value(field, raw, at: tagOffset, depth: depth, path: "\(here)[\(items.count)]"))
                }
                values[position] = .array(items)
            } else {
                values[position] = try value(field, raw, at: tagOffset, depth: depth, path: here)
            }
        }
        var object = JSONObject()
        for position in values.keys.sorted() {
            object[ProtobufSchema.jsonName(descriptor.field[position])] = values[position]
        }
        if !unknownBytes.isEmpty { object[ProtobufSchema.unknownFieldsMember] = .string(Data(unknownBytes).base64EncodedString()) }
        return .object(object)
    }

    /// The next field's value, the length-delimited ones as a range (the reader moves past it).
    mutating func wireValue(wireType: UInt64, tagOffset: Int, end: Int, field: Google_Protobuf_FieldDescriptorProto) throws(Failure) -> WireValue {
        switch wireType {
        case 0: return .varint(try reader.varint(limit: end))
        case 1: return .fixed64(try reader.fixed(8, limit: end))
        case 5: return .fixed32(UInt32(try reader.fixed(4, limit: end)))
        case 2:
            return .bytes(try reader.lengthDelimitedBytes(limit: end, field: "field \(field.name) (\(field.number))"))
        default:
            throw Failure(offset: tagOffset, reason: "field \(field.name) (\(field.number)) has wire type \(wireType), which a \(ProtobufSchema.scalarName(field.type)) field does not use")
        }
    }

    /// A field of a number the type does not declare, read as the schemaless decoder reads it.
    mutating func keepUnknown(number: Int, wireType: UInt64, tagOffset: Int, end: Int, depth: Int, path: String) throws(Failure) {
        let value: ProtobufWire.Value
        switch wireType {
        case 0: value = .varint(try reader.varint(limit: end))
        case 1: value = .fixed64(try reader.fixed(8, limit: end))
        case 5: value = .fixed32(UInt32(try reader.fixed(4, limit: end)))
        case 2:
            value = reader.lengthDelimited(try reader.lengthDelimitedBytes(limit: end, field: "field \(number)"), depth: depth)
        case 3:
            value = .group(try reader.fields(depth: depth + 1, group: number, end: end))
        default:
            throw Failure(offset: tagOffset, reason: "wire type \(wireType) of field \(number) does not exist")
        }
        unknown.append(TypedMessage.UnknownField(path: path, field: ProtobufWire.Field(number: number, value: value)))
    }

    static func packable(_ type: FieldType) -> Bool {
        switch type {
        case .string, .bytes, .message, .group: false
        default: true
        }
    }

    mutating func packedValue(_ type: FieldType, end: Int) throws(Failure) -> WireValue {
        switch type {
        case .double, .fixed64, .sfixed64: .fixed64(try reader.fixed(8, limit: end))
        case .float, .fixed32, .sfixed32: .fixed32(UInt32(try reader.fixed(4, limit: end)))
        default: .varint(try reader.varint(limit: end))
        }
    }

    func mismatch(_ field: Google_Protobuf_FieldDescriptorProto, _ raw: WireValue, at offset: Int) -> Failure {
        let type = field.type == .message || field.type == .enum ? ProtobufSchema.bare(field.typeName) : ProtobufSchema.scalarName(field.type)
        return Failure(offset: offset, reason: "field \(field.name) (\(field.number)) is declared \(type) but came as \(raw.wireTypeName)")
    }

    mutating func value(_ field: Google_Protobuf_FieldDescriptorProto, _ raw: WireValue, at offset: Int, depth: Int, path: String) throws(Failure) -> JSONValue {
        guard field.type == .message else { return try scalar(field, raw, at: offset, path: path) }
        guard case .bytes(let range) = raw else { throw mismatch(field, raw, at: offset) }
        return try nested(ProtobufSchema.bare(field.typeName), range: range, depth: depth + 1, path: path)
    }

    /// A message inside `range`, the reader put back after it.
    mutating func nested(_ type: String, range: Range<Int>, depth: Int, path: String) throws(Failure) -> JSONValue {
        let saved = reader.index
        reader.index = range.lowerBound
        let value = try message(type, end: range.upperBound, depth: depth, path: path)
        reader.index = saved
        return value
    }

    mutating func mapEntry(_ field: Google_Protobuf_FieldDescriptorProto, range: Range<Int>, depth: Int, path: String) throws(Failure) -> (String, JSONValue) {
        let entryType = ProtobufSchema.bare(field.typeName)
        guard let entry = schema.messages[entryType], let keyField = entry.field.first(where: { $0.number == 1 }),
            let valueField = entry.field.first(where: { $0.number == 2 })
        else {
            throw Failure(offset: range.lowerBound, reason: "map entry \(entryType) is not in the schema")
        }
        let saved = reader.index
        reader.index = range.lowerBound
        var key: JSONValue = Self.defaultValue(keyField)
        var value: JSONValue?
        while reader.index < range.upperBound {
            let tagOffset = reader.index
            let tag = try reader.varint(limit: range.upperBound)
            switch tag >> 3 {
            case 1:
                let raw = try wireValue(wireType: tag & 7, tagOffset: tagOffset, end: range.upperBound, field: keyField)
                key = try scalar(keyField, raw, at: tagOffset, path: path)
            case 2:
                let raw = try wireValue(wireType: tag & 7, tagOffset: tagOffset, end: range.upperBound, field: valueField)
                value = try self.value(valueField, raw, at: tagOffset, depth: depth, path: path)
            default:
                try keepUnknown(number: Int(tag >> 3), wireType: tag & 7, tagOffset: tagOffset, end: range.upperBound, depth: depth, path: path)
            }
        }
        reader.index = saved
        let keyText: String = switch key {
        case .string(let text): text
        case .integer(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: "\(key)"
        }
        let fallback: JSONValue = valueField.type == .message ? (try nested(ProtobufSchema.bare(valueField.typeName), range: 0..<0, depth: depth + 1, path: path)) : Self.defaultValue(valueField)
        return (keyText, value ?? fallback)
    }

    /// What proto3 JSON shows for a scalar that is absent (a map key or value left out).
    static func defaultValue(_ field: Google_Protobuf_FieldDescriptorProto) -> JSONValue {
        switch field.type {
        case .string, .bytes: ""
        case .bool: false
        case .int64, .uint64, .fixed64, .sfixed64, .sint64: "0"
        case .double, .float: .number(0)
        default: .integer(0)
        }
    }

    mutating func scalar(_ field: Google_Protobuf_FieldDescriptorProto, _ raw: WireValue, at offset: Int, path: String) throws(Failure) -> JSONValue {
        switch (field.type, raw) {
        case (.double, .fixed64(let bits)): return Self.number(Double(bitPattern: bits))
        case (.float, .fixed32(let bits)): return Self.number(Double(Float(bitPattern: bits)))
        case (.int64, .varint(let bits)): return .string(String(Int64(bitPattern: bits)))
        case (.uint64, .varint(let bits)): return .string(String(bits))
        case (.int32, .varint(let bits)): return .integer(Int(Int32(truncatingIfNeeded: bits)))
        case (.uint32, .varint(let bits)): return .integer(Int(UInt32(truncatingIfNeeded: bits)))
        case (.sint32, .varint(let bits)): return .integer(Int(Int32(truncatingIfNeeded: ProtobufWire.zigzag(bits))))
        case (.sint64, .varint(let bits)): return .string(String(ProtobufWire.zigzag(bits)))
        case (.fixed64, .fixed64(let bits)): return .string(String(bits))
        case (.sfixed64, .fixed64(let bits)): return .string(String(Int64(bitPattern: bits)))
        case (.fixed32, .fixed32(let bits)): return .integer(Int(bits))
        case (.sfixed32, .fixed32(let bits)): return .integer(Int(Int32(bitPattern: bits)))
        case (.bool, .varint(let bits)): return .bool(bits != 0)
        case (.enum, .varint(let bits)):
            let number = Int32(truncatingIfNeeded: bits)
            let type = ProtobufSchema.bare(field.typeName)
            if type == "google.protobuf.NullValue" { return .null }
            if let name = schema.enums[type]?.value.first(where: { $0.number == number })?.name { return .string(name) }
            return .integer(Int(number))
        case (.string, .bytes(let range)):
            guard let text = String(validating: bytes[range], as: UTF8.self) else {
                throw Failure(offset: offset, reason: "field \(path) is declared string but is not UTF-8")
            }
            return .string(text)
        case (.bytes, .bytes(let range)):
            return .string(Data(bytes[range]).base64EncodedString())
        default:
            throw mismatch(field, raw, at: offset)
        }
    }

    static func number(_ value: Double) -> JSONValue {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "Infinity" : "-Infinity" }
        return .number(value)
    }

    // MARK: Well-known types

    /// The fields of a message up to `end` by number (the last of each, and every one in order).
    mutating func rawFields(end: Int) throws(Failure) -> [(number: Int, offset: Int, value: WireValue)] {
        var fields: [(Int, Int, WireValue)] = []
        while reader.index < end {
            let tagOffset = reader.index
            let tag = try reader.varint(limit: end)
            let value: WireValue
            switch tag & 7 {
            case 0: value = .varint(try reader.varint(limit: end))
            case 1: value = .fixed64(try reader.fixed(8, limit: end))
            case 5: value = .fixed32(UInt32(try reader.fixed(4, limit: end)))
            case 2:
                let length = try reader.varint(limit: end)
                guard length <= UInt64(end - reader.index) else {
                    throw Failure(offset: tagOffset, reason: "field \(tag >> 3) declares \(length) bytes, \(end - reader.index) remain")
                }
                value = .bytes(reader.index..<(reader.index + Int(length)))
                reader.index += Int(length)
            default:
                throw Failure(offset: tagOffset, reason: "wire type \(tag & 7) in a well-known type")
            }
            fields.append((Int(tag >> 3), tagOffset, value))
        }
        return fields
    }

    static let wrappers: [String: FieldType] = [
        "google.protobuf.DoubleValue": .double, "google.protobuf.FloatValue": .float, "google.protobuf.Int64Value": .int64,
        "google.protobuf.UInt64Value": .uint64, "google.protobuf.Int32Value": .int32, "google.protobuf.UInt32Value": .uint32,
        "google.protobuf.BoolValue": .bool, "google.protobuf.StringValue": .string, "google.protobuf.BytesValue": .bytes,
    ]

    /// Timestamp, Duration, wrappers, Struct, Value, ListValue, Any, FieldMask and Empty as the
    /// JSON mapping shows them; nil for other `google.protobuf` types (read by their descriptor).
    mutating func wellKnown(_ type: String, end: Int, depth: Int, path: String) throws(Failure) -> JSONValue? {
        let start = reader.index
        func field(_ number: Int, _ fieldType: FieldType, name: String) -> Google_Protobuf_FieldDescriptorProto {
            var field = Google_Protobuf_FieldDescriptorProto()
            field.number = Int32(number)
            field.type = fieldType
            field.name = name
            return field
        }
        if let wrapped = Self.wrappers[type] {
            let valueField = field(1, wrapped, name: "value")
            var value = Self.defaultValue(valueField)
            for item in try rawFields(end: end) where item.number == 1 {
                value = try scalar(valueField, item.value, at: item.offset, path: path)
            }
            return value
        }
        switch type {
        case "google.protobuf.Empty":
            _ = try rawFields(end: end)
            return .object([:])
        case "google.protobuf.Timestamp", "google.protobuf.Duration":
            var seconds: Int64 = 0
            var nanos: Int32 = 0
            for item in try rawFields(end: end) {
                guard case .varint(let bits) = item.value else {
                    throw Failure(offset: item.offset, reason: "\(type) field \(item.number) came as \(item.value.wireTypeName)")
                }
                if item.number == 1 { seconds = Int64(bitPattern: bits) }
                if item.number == 2 { nanos = Int32(truncatingIfNeeded: bits) }
            }
            if type == "google.protobuf.Duration" { return .string(Self.duration(seconds: seconds, nanos: nanos)) }
            guard let text = Self.timestamp(seconds: seconds, nanos: nanos) else {
                throw Failure(offset: start, reason: "\(path.isEmpty ? "timestamp" : path) of \(seconds) s, \(nanos) ns is outside 0001-01-01 to 9999-12-31")
            }
            return .string(text)
        case "google.protobuf.FieldMask":
            var paths: [String] = []
            for item in try rawFields(end: end) where item.number == 1 {
                guard case .bytes(let range) = item.value, let text = String(validating: bytes[range], as: UTF8.self) else {
                    throw Failure(offset: item.offset, reason: "a FieldMask path that is not text")
                }
                paths.append(ProtobufSchema.lowerCamelCase(text))
            }
            return .string(paths.joined(separator: ","))
        case "google.protobuf.Struct":
            var object = JSONObject()
            for item in try rawFields(end: end) where item.number == 1 {
                guard case .bytes(let range) = item.value else { throw Failure(offset: item.offset, reason: "a Struct entry that is not a message") }
                let saved = reader.index
                reader.index = range.lowerBound
                var key = ""
                var value: JSONValue = .null
                for part in try rawFields(end: range.upperBound) {
                    if part.number == 1, case .bytes(let keyRange) = part.value { key = String(decoding: bytes[keyRange], as: UTF8.self) }
                    if part.number == 2, case .bytes(let valueRange) = part.value {
                        value = try nested("google.protobuf.Value", range: valueRange, depth: depth + 1, path: path + "." + key)
                    }
                }
                reader.index = saved
                object[key] = value
            }
            return .object(object)
        case "google.protobuf.ListValue":
            var items: [JSONValue] = []
            for item in try rawFields(end: end) where item.number == 1 {
                guard case .bytes(let range) = item.value else { throw Failure(offset: item.offset, reason: "a ListValue item that is not a message") }
                items.append(try nested("google.protobuf.Value", range: range, depth: depth + 1, path: "\(path)[\(items.count)]"))
            }
            return .array(items)
        case "google.protobuf.Value":
            var value: JSONValue = .null
            for item in try rawFields(end: end) {
                switch (item.number, item.value) {
                case (1, .varint): value = .null
                case (2, .fixed64(let bits)): value = Self.number(Double(bitPattern: bits))
                case (3, .bytes(let range)): value = .string(String(decoding: bytes[range], as: UTF8.self))
                case (4, .varint(let bits)): value = .bool(bits != 0)
                case (5, .bytes(let range)): value = try nested("google.protobuf.Struct", range: range, depth: depth + 1, path: path)
                case (6, .bytes(let range)): value = try nested("google.protobuf.ListValue", range: range, depth: depth + 1, path: path)
                default: throw Failure(offset: item.offset, reason: "google.protobuf.Value field \(item.number) came as \(item.value.wireTypeName)")
                }
            }
            return value
        case "google.protobuf.Any":
            var url = ""
            var payload: Range<Int> = end..<end
            for item in try rawFields(end: end) {
                if item.number == 1, case .bytes(let range) = item.value { url = String(decoding: bytes[range], as: UTF8.self) }
                if item.number == 2, case .bytes(let range) = item.value { payload = range }
            }
            let inner = String(url.split(separator: "/").last ?? "")
            var object: JSONObject = ["@type": .string(url)]
            let special = inner.hasPrefix("google.protobuf.") && (Self.wrappers[inner] != nil || ["Timestamp", "Duration", "Struct", "Value", "ListValue", "FieldMask", "Any", "Empty"].contains(inner.dropFirst(16)))
            if special {
                object["value"] = try nested(inner, range: payload, depth: depth + 1, path: path)
            } else if schema.messages[inner] != nil {
                if case .object(let fields) = try nested(inner, range: payload, depth: depth + 1, path: path) {
                    for (key, value) in fields { object[key] = value }
                }
            } else {
                object["value"] = .string(Data(bytes[payload]).base64EncodedString())
            }
            return .object(object)
        default:
            return nil
        }
    }

    /// RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as the JSON mapping writes it.
    static func timestamp(seconds: Int64, nanos: Int32) -> String? {
        guard seconds >= -62_135_596_800, seconds <= 253_402_300_799, nanos >= 0, nanos < 1_000_000_000 else { return nil }
        let (date, second) = CivilDate.split(secondsSince1970: Int(seconds))
        let (year, month, day, secondOfDay) = (date.year, date.month, date.day, second)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))\(fraction(nanos))Z"
    }

    /// Seconds with 0, 3, 6 or 9 fractional digits and an `s`, as the JSON mapping writes a Duration.
    static func duration(seconds: Int64, nanos: Int32) -> String {
        let negative = seconds < 0 || nanos < 0
        return (negative ? "-" : "") + String(seconds.magnitude) + fraction(Int32(nanos.magnitude)) + "s"
    }

    static func fraction(_ nanos: Int32) -> String {
        guard nanos != 0 else { return "" }
        let digits = String(nanos)
        var text = String(repeating: "0", count: 9 - digits.count) + digits
        while text.count > 3, text.hasSuffix("000") { text.removeLast(3) }
        return "." + text
    }
}
