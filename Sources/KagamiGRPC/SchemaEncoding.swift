import Foundation
import KagamiFlow
import KagamiJSON
import SwiftProtobuf

/// Why JSON does not fit the message type it is to be written as: where (a path into the JSON,
/// `items[0].priceCents`; empty for the message itself), the type expected there, and what was
/// wrong.
public struct ProtobufEncodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var type: String
    public var reason: String

    public init(path: String, type: String, reason: String) {
        self.path = path
        self.type = type
        self.reason = reason
    }

    public var description: String { "\(path.isEmpty ? "the message" : path) (\(type)): \(reason)" }
}

extension ProtobufSchema {
    /// `json`, in the proto3 JSON mapping, written as a `type` message (full name): the inverse
    /// of `decode(_:as:)`. Fields go out in number order, repeated numbers packed (proto3),
    /// fields at their default left out unless they have presence (oneof members, `optional`,
    /// proto2); enums by name or number, 64-bit integers as strings or numbers, bytes in base64
    /// (standard or URL-safe), well-known types in their JSON forms.
    public func encode(_ json: JSONValue, as type: String) throws(ProtobufEncodingFailure) -> Data {
        let writer = TypedWriter(schema: self)
        return Data(try writer.message(json, type: Self.bare(type), depth: 0, path: ""))
    }
}

extension ProtobufWire {
    /// The wire format written out: tags, varints, little-endian fixed-width numbers and
    /// length-delimited bytes.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            Varint.append(value, to: &bytes)
        }

        mutating func tag(_ number: Int32, wireType: UInt64) {
            varint(UInt64(number) << 3 | wireType)
        }

        mutating func fixed64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(value >> UInt64(shift) & 0xFF)) }
        }

        mutating func fixed32(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(value >> UInt32(shift) & 0xFF)) }
        }

        mutating func lengthDelimited(_ payload: some Collection<UInt8>) {
            varint(UInt64(payload.count))
            bytes.append(contentsOf: payload)
        }
    }
}

/// Writes JSON along a message's descriptor.
struct TypedWriter {
    typealias Failure = ProtobufEncodingFailure
    typealias Field = Google_Protobuf_FieldDescriptorProto
    typealias FieldType = Google_Protobuf_FieldDescriptorProto.TypeEnum

    let schema: ProtobufSchema

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func message(_ json: JSONValue, type: String, depth: Int, path: String) throws(Failure) -> [UInt8] {
        guard depth < ProtobufSchema.maximumDepth else {
            throw Failure(path: path, type: type, reason: "messages nested deeper than \(ProtobufSchema.maximumDepth)")
        }
        if type.hasPrefix("google.protobuf."), let bytes = try wellKnown(json, type: type, depth: depth, path: path) { return bytes }
        guard let descriptor = schema.messages[type] else { throw Failure(path: path, type: type, reason: "the type is not in the schema") }
        guard case .object(let object) = json else { throw Failure(path: path, type: type, reason: "expected an object, found \(json.typeName)") }
        var given: [Int32: (field: Field, value: JSONValue, path: String)] = [:]
        var oneofMembers: [Int32: String] = [:]
        var unknownFields: [UInt8] = []
        for (key, value) in object {
            let here = Self.join(path, key)
            if key == ProtobufSchema.unknownFieldsMember {
                unknownFields = try Self.unknownFields(value, path: here, type: type)
                continue
            }
            guard let field = descriptor.field.first(where: { ProtobufSchema.jsonName($0) == key || $0.name == key }) else {
                let names = descriptor.field.map { ProtobufSchema.jsonName($0) }.joined(separator: ", ")
                throw Failure(path: here, type: type, reason: "\(type) has no field \(key) (its fields: \(names.isEmpty ? "none" : names))")
            }
            guard given[field.number] == nil else {
                throw Failure(path: here, type: type, reason: "field \(field.name) is given twice (as \(field.name) and \(ProtobufSchema.jsonName(field)))")
            }
            // null is the field's default (left out), except where null is a value.
            if value.isNull, field.typeName != ".google.protobuf.Value", field.typeName != ".google.protobuf.NullValue" { continue }
            if field.hasOneofIndex, !field.proto3Optional {
                if let other = oneofMembers[field.oneofIndex] {
                    let oneof = descriptor.oneofDecl.indices.contains(Int(field.oneofIndex)) ? descriptor.oneofDecl[Int(field.oneofIndex)].name : "a oneof"
                    throw Failure(path: here, type: type, reason: "\(other) and \(key) are both of \(oneof): give one")
                }
                oneofMembers[field.oneofIndex] = key
            }
            given[field.number] = (field, value, here)
        }
        let proto2 = schema.proto2Messages.contains(type)
        var writer = ProtobufWire.Writer()
        for number in given.keys.sorted() {
            guard let (field, value, here) = given[number] else { continue }
            let presence = proto2 || field.hasOneofIndex || field.proto3Optional
            try write(field, value, path: here, depth: depth, presence: presence, packedByDefault: !proto2, into: &writer)
        }
        writer.bytes += unknownFields
        return writer.bytes
    }

    /// The bytes of the fields a message's type does not declare, as `decode(_:as:keepingUnknownFields:)`
    /// gave them: base64 of whole fields, written back after the declared ones.
    static func unknownFields(_ value: JSONValue, path: String, type: String) throws(Failure) -> [UInt8] {
        guard case .string(let text) = value, let data = base64(text) else {
            let found = value.typeName == "string" ? "text that is not base64" : value.typeName
            throw Failure(path: path, type: type, reason: "expected the wire bytes of fields \(type) does not declare, in base64, found \(found)")
        }
        if case .failure(let failure) = ProtobufWire.decode(data) {
            throw Failure(path: path, type: type, reason: "the bytes are not whole Protocol Buffers fields \(failure)")
        }
        return [UInt8](data)
    }

    func typeName(_ field: Field) -> String {
        switch field.type {
        case .message, .enum, .group: ProtobufSchema.bare(field.typeName)
        default: ProtobufSchema.scalarName(field.type)
        }
    }

    func write(
        _ field: Field, _ value: JSONValue, path: String, depth: Int, presence: Bool, packedByDefault: Bool, into writer: inout ProtobufWire.Writer
    ) throws(Failure) {
        if schema.isMap(field) {
            try writeMap(field, value, path: path, depth: depth, into: &writer)
        } else if field.label == .repeated {
            guard case .array(let items) = value else {
                throw Failure(path: path, type: "repeated \(typeName(field))", reason: "expected an array, found \(value.typeName)")
            }
            let packed = field.options.hasPacked ? field.options.packed : packedByDefault
            if packed, TypedReader.packable(field.type) {
                guard !items.isEmpty else { return }
                var payload = ProtobufWire.Writer()
                for (index, item) in items.enumerated() {
                    _ = try scalar(field, item, path: "\(path)[\(index)]", into: &payload)
                }
                writer.tag(field.number, wireType: 2)
                writer.lengthDelimited(payload.bytes)
            } else {
                for (index, item) in items.enumerated() {
                    try single(field, item, path: "\(path)[\(index)]", depth: depth, always: true, into: &writer)
                }
            }
        } else {
            try single(field, value, path: path, depth: depth, always: presence, into: &writer)
        }
    }

    /// A map's entries, each a message of its key (1) and value (2), both always written.
    func writeMap(_ field: Field, _ value: JSONValue, path: String, depth: Int, into writer: inout ProtobufWire.Writer) throws(Failure) {
        let entryType = ProtobufSchema.bare(field.typeName)
        guard let entry = schema.messages[entryType], let keyField = entry.field.first(where: { $0.number == 1 }),
            let valueField = entry.field.first(where: { $0.number == 2 })
        else { throw Failure(path: path, type: entryType, reason: "the map's entry type is not in the schema") }
        let mapType = "map<\(typeName(keyField)), \(typeName(valueField))>"
        guard case .object(let entries) = value else { throw Failure(path: path, type: mapType, reason: "expected an object, found \(value.typeName)") }
        for (key, item) in entries {
            let here = Self.join(path, key)
            let keyValue: JSONValue
            switch keyField.type {
            case .string: keyValue = .string(key)
            case .bool:
                guard key == "true" || key == "false" else { throw Failure(path: here, type: mapType, reason: "the key \(key) is not true or false") }
                keyValue = .bool(key == "true")
            default: keyValue = .string(key)
            }
            var payload = ProtobufWire.Writer()
            try single(keyField, keyValue, path: here, depth: depth, always: true, into: &payload)
            guard !item.isNull || valueField.typeName == ".google.protobuf.Value" else {
                throw Failure(path: here, type: typeName(valueField), reason: "a map value can't be null")
            }
            try single(valueField, item, path: here, depth: depth, always: true, into: &payload)
            writer.tag(field.number, wireType: 2)
            writer.lengthDelimited(payload.bytes)
        }
    }

    /// One value with its tag. A scalar at its default is left out unless `always`.
    func single(_ field: Field, _ value: JSONValue, path: String, depth: Int, always: Bool, into writer: inout ProtobufWire.Writer) throws(Failure) {
        switch field.type {
        case .message:
            let bytes = try message(value, type: ProtobufSchema.bare(field.typeName), depth: depth + 1, path: path)
            writer.tag(field.number, wireType: 2)
            writer.lengthDelimited(bytes)
        case .group:
            throw Failure(path: path, type: "group", reason: "groups (deprecated) are not written from JSON")
        default:
            var payload = ProtobufWire.Writer()
            let isDefault = try scalar(field, value, path: path, into: &payload)
            if isDefault, !always { return }
            writer.tag(field.number, wireType: Self.wireType(field.type))
            writer.bytes.append(contentsOf: payload.bytes)
        }
    }

    static func wireType(_ type: FieldType) -> UInt64 {
        switch type {
        case .double, .fixed64, .sfixed64: 1
        case .float, .fixed32, .sfixed32: 5
        case .string, .bytes, .message: 2
        default: 0
        }
    }

    /// A scalar's payload (no tag; strings and bytes with their length). Returns whether the
    /// value is the type's default.
    func scalar(_ field: Field, _ value: JSONValue, path: String, into writer: inout ProtobufWire.Writer) throws(Failure) -> Bool {
        let type = typeName(field)
        func fail(_ reason: String) -> Failure { Failure(path: path, type: type, reason: reason) }
        switch field.type {
        case .double:
            let number = try double(value, fail)
            writer.fixed64(number.bitPattern)
            return number.bitPattern == 0
        case .float:
            let number = try double(value, fail)
            guard !number.isFinite || abs(number) <= Double(Float.greatestFiniteMagnitude) else { throw fail("\(number) is out of range for a float") }
            let float = Float(number)
            writer.fixed32(float.bitPattern)
            return float.bitPattern == 0
        case .int64, .sint64, .sfixed64:
            let number = try integer(value, in: Int128(Int64.min)...Int128(Int64.max), fail)
            let signed = Int64(number)
            switch field.type {
            case .sint64: writer.varint(Varint.zigzag(signed))
            case .sfixed64: writer.fixed64(UInt64(bitPattern: signed))
            default: writer.varint(UInt64(bitPattern: signed))
            }
            return signed == 0
        case .uint64, .fixed64:
            let number = try integer(value, in: 0...Int128(UInt64.max), fail)
            if field.type == .fixed64 { writer.fixed64(UInt64(number)) } else { writer.varint(UInt64(number)) }
            return number == 0
        case .int32, .sint32, .sfixed32:
            let signed = Int32(try integer(value, in: Int128(Int32.min)...Int128(Int32.max), fail))
            switch field.type {
            case .sint32: writer.varint(UInt64(UInt32(bitPattern: signed << 1 ^ signed >> 31)))
            case .sfixed32: writer.fixed32(UInt32(bitPattern: signed))
            // Negative int32s go out sign-extended to 64 bits, as every encoder writes them.
            default: writer.varint(UInt64(bitPattern: Int64(signed)))
            }
            return signed == 0
        case .uint32, .fixed32:
            let number = UInt32(try integer(value, in: 0...Int128(UInt32.max), fail))
            if field.type == .fixed32 { writer.fixed32(number) } else { writer.varint(UInt64(number)) }
            return number == 0
        case .bool:
            guard case .bool(let flag) = value else { throw fail("expected true or false, found \(value.typeName)") }
            writer.varint(flag ? 1 : 0)
            return !flag
        case .enum:
            let number = try enumNumber(field, value, fail)
            writer.varint(UInt64(bitPattern: Int64(number)))
            return number == 0
        case .string:
            guard case .string(let text) = value else { throw fail("expected a string, found \(value.typeName)") }
            writer.lengthDelimited(Array(text.utf8))
            return text.isEmpty
        case .bytes:
            guard case .string(let text) = value, let data = Self.base64(text) else {
                throw fail("expected bytes in base64, found \(value.typeName == "string" ? "text that is not base64" : value.typeName)")
            }
            writer.lengthDelimited(data)
            return data.isEmpty
        case .message, .group:
            throw fail("expected a scalar type")
        }
    }

    func enumNumber(_ field: Field, _ value: JSONValue, _ fail: (String) -> Failure) throws(Failure) -> Int32 {
        let enumType = ProtobufSchema.bare(field.typeName)
        if enumType == "google.protobuf.NullValue", value.isNull || value.stringValue == "NULL_VALUE" { return 0 }
        switch value {
        case .string(let name):
            guard let values = schema.enums[enumType]?.value else { throw fail("the enum is not in the schema") }
            guard let found = values.first(where: { $0.name == name }) else {
                let names = values.prefix(20).map(\.name).joined(separator: ", ")
                throw fail("\(name) is not a value of \(enumType) (its values: \(names)\(values.count > 20 ? ", …" : ""))")
            }
            return found.number
        case .integer, .number:
            return Int32(try integer(value, in: Int128(Int32.min)...Int128(Int32.max), fail))
        default:
            throw fail("expected an enum value's name or number, found \(value.typeName)")
        }
    }

    /// An integer from a JSON number (whole) or a string of decimal digits, as the mapping
    /// allows for every integer type (64-bit ones travel as strings).
    func integer(_ value: JSONValue, in range: ClosedRange<Int128>, _ fail: (String) -> Failure) throws(Failure) -> Int128 {
        let number: Int128
        switch value {
        case .integer(let whole):
            number = Int128(whole)
        case .number(let double):
            guard double.isFinite, double.rounded() == double, abs(double) < 1.8e19 else { throw fail("\(double) is not a whole number") }
            number = Int128(double)
        case .string(let text):
            guard let parsed = Int128(text.trimmingCharacters(in: .whitespaces)) else { throw fail("\"\(text)\" is not a whole number") }
            number = parsed
        default:
            throw fail("expected a number, found \(value.typeName)")
        }
        guard range.contains(number) else { throw fail("\(number) is out of range (\(range.lowerBound) to \(range.upperBound))") }
        return number
    }

    func double(_ value: JSONValue, _ fail: (String) -> Failure) throws(Failure) -> Double {
        switch value {
        case .integer(let whole): return Double(whole)
        case .number(let number): return number
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let text):
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else { throw fail("\"\(text)\" is not a number") }
            return number
        default: throw fail("expected a number, found \(value.typeName)")
        }
    }

    /// Standard or URL-safe base64, padded or not.
    static func base64(_ text: String) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    // MARK: Well-known types

    static let specialTypes: Set<String> = ["Timestamp", "Duration", "Struct", "Value", "ListValue", "FieldMask", "Any", "Empty"]

    static func isSpecial(_ type: String) -> Bool {
        type.hasPrefix("google.protobuf.") && (TypedReader.wrappers[type] != nil || specialTypes.contains(String(type.dropFirst(16))))
    }

    func scalarField(_ number: Int32, _ type: FieldType, name: String) -> Field {
        var field = Field()
        field.number = number
        field.type = type
        field.name = name
        return field
    }

    /// The JSON forms of `wellKnown` in `TypedReader`, written back; nil for other
    /// `google.protobuf` types (written by their descriptor).
    func wellKnown(_ json: JSONValue, type: String, depth: Int, path: String) throws(Failure) -> [UInt8]? {
        var writer = ProtobufWire.Writer()
        func fail(_ reason: String) -> Failure { Failure(path: path, type: type, reason: reason) }
        if let wrapped = TypedReader.wrappers[type] {
            try single(scalarField(1, wrapped, name: "value"), json, path: path, depth: depth, always: false, into: &writer)
            return writer.bytes
        }
        switch type {
        case "google.protobuf.Empty":
            guard case .object(let object) = json, object.isEmpty else { throw fail("expected {}, found \(json.serialized())") }
        case "google.protobuf.Timestamp":
            guard case .string(let text) = json, let (seconds, nanos) = Self.timestamp(text) else {
                throw fail("expected an RFC 3339 time such as \"2024-01-31T12:00:00.5Z\", found \(json.serialized())")
            }
            try writeSecondsAndNanos(seconds, nanos, into: &writer)
        case "google.protobuf.Duration":
            guard case .string(let text) = json, let (seconds, nanos) = Self.duration(text) else {
                throw fail("expected seconds with an s, such as \"1.5s\", found \(json.serialized())")
            }
            try writeSecondsAndNanos(seconds, nanos, into: &writer)
        case "google.protobuf.FieldMask":
            guard case .string(let text) = json else { throw fail("expected paths separated by commas, found \(json.typeName)") }
            for path in text.split(separator: ",") {
                writer.tag(1, wireType: 2)
                writer.lengthDelimited(Array(Self.snakeCase(String(path)).utf8))
            }
        case "google.protobuf.Struct":
            guard case .object(let object) = json else { throw fail("expected an object, found \(json.typeName)") }
            for (key, value) in object {
                var entry = ProtobufWire.Writer()
                entry.tag(1, wireType: 2)
                entry.lengthDelimited(Array(key.utf8))
                entry.tag(2, wireType: 2)
                entry.lengthDelimited(try message(value, type: "google.protobuf.Value", depth: depth + 1, path: Self.join(path, key)))
                writer.tag(1, wireType: 2)
                writer.lengthDelimited(entry.bytes)
            }
        case "google.protobuf.ListValue":
            guard case .array(let items) = json else { throw fail("expected an array, found \(json.typeName)") }
            for (index, item) in items.enumerated() {
                writer.tag(1, wireType: 2)
                writer.lengthDelimited(try message(item, type: "google.protobuf.Value", depth: depth + 1, path: "\(path)[\(index)]"))
            }
        case "google.protobuf.Value":
            switch json {
            case .null:
                writer.tag(1, wireType: 0)
                writer.varint(0)
            case .integer, .number:
                writer.tag(2, wireType: 1)
                writer.fixed64((json.doubleValue ?? 0).bitPattern)
            case .string(let text):
                writer.tag(3, wireType: 2)
                writer.lengthDelimited(Array(text.utf8))
            case .bool(let flag):
                writer.tag(4, wireType: 0)
                writer.varint(flag ? 1 : 0)
            case .object:
                writer.tag(5, wireType: 2)
                writer.lengthDelimited(try message(json, type: "google.protobuf.Struct", depth: depth + 1, path: path))
            case .array:
                writer.tag(6, wireType: 2)
                writer.lengthDelimited(try message(json, type: "google.protobuf.ListValue", depth: depth + 1, path: path))
            }
        case "google.protobuf.Any":
            guard case .object(var object) = json else { throw fail("expected an object with \"@type\", found \(json.typeName)") }
            guard let url = object.removeValue(forKey: "@type")?.stringValue else { throw fail("an Any needs \"@type\" (type.googleapis.com/package.Message)") }
            let inner = String(url.split(separator: "/").last ?? "")
            let payload: [UInt8]
            if Self.isSpecial(inner) {
                payload = try message(object["value"] ?? .null, type: inner, depth: depth + 1, path: Self.join(path, "value"))
            } else if schema.messages[inner] != nil {
                payload = try message(.object(object), type: inner, depth: depth + 1, path: path)
            } else if object.keys.elementsEqual(["value"]), let text = object["value"]?.stringValue, let data = Self.base64(text) {
                payload = Array(data)
            } else {
                throw fail("the schema has no type \(inner) for its fields (give its bytes as \"value\" in base64)")
            }
            writer.tag(1, wireType: 2)
            writer.lengthDelimited(Array(url.utf8))
            if !payload.isEmpty {
                writer.tag(2, wireType: 2)
                writer.lengthDelimited(payload)
            }
        default:
            return nil
        }
        return writer.bytes
    }

    func writeSecondsAndNanos(_ seconds: Int64, _ nanos: Int32, into writer: inout ProtobufWire.Writer) throws(Failure) {
        if seconds != 0 {
            writer.tag(1, wireType: 0)
            writer.varint(UInt64(bitPattern: seconds))
        }
        if nanos != 0 {
            writer.tag(2, wireType: 0)
            writer.varint(UInt64(bitPattern: Int64(nanos)))
        }
    }

    /// `fooBar` → `foo_bar`, for FieldMask paths.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// RFC 3339 (`Z` or an offset, 0 to 9 fractional digits) as seconds and nanoseconds since
    /// 1970, within 0001-01-01 to 9999-12-31 as the mapping allows.
    static func timestamp(_ text: String) -> (Int64, Int32)? {
        let characters = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= characters.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for index in range {
                guard (48...57).contains(characters[index]) else { return nil }
                value = value * 10 + Int64(characters[index] - 48)
            }
            return value
        }
        guard characters.count >= 20, characters[4] == UInt8(ascii: "-"), characters[7] == UInt8(ascii: "-"),
            characters[10] == UInt8(ascii: "T") || characters[10] == UInt8(ascii: "t"), characters[13] == UInt8(ascii: ":"), characters[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var nanos: Int64 = 0
        if characters[index] == UInt8(ascii: ".") {
            let start = index + 1
            index = start
            while index < characters.count, (48...57).contains(characters[index]) { index += 1 }
            guard index > start, index - start <= 9, let fraction = number(start..<index) else { return nil }
            nanos = fraction
            for _ in 0..<(9 - (index - start)) { nanos *= 10 }
        }
        guard index < characters.count else { return nil }
        var offset: Int64 = 0
        switch characters[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == characters.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == characters.count, characters[index + 3] == UInt8(ascii: ":"),
                let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6))
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (characters[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        // Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard seconds >= -62_135_596_800, seconds <= 253_402_300_799 else { return nil }
        return (seconds, Int32(nanos))
    }

    /// `-1.5s` as seconds and nanoseconds, both negative for a negative duration.
    static func duration(_ text: String) -> (Int64, Int32)? {
        guard text.hasSuffix("s") else { return nil }
        var body = Substring(text.dropLast())
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCII), let seconds = Int64(whole), seconds <= 315_576_000_000 else { return nil }
        var nanos: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(fraction) else { return nil }
            nanos = value
            for _ in 0..<(9 - fraction.count) { nanos *= 10 }
        }
        return negative ? (-seconds, Int32(-nanos)) : (seconds, Int32(nanos))
    }
}
