import Foundation
import KagamiJSON
import SwiftProtobuf

extension ProtobufSchema {
    /// A message of `type` in the proto3 JSON mapping with every field set to a value that is
    /// not its default, so each shows on the wire: text named after the field, numbers 1, true,
    /// an enum's first non-zero value, one item in each repeated field and map, the first
    /// member of each oneof, nested messages filled the same way (a type met again on its own
    /// path, and anything past three levels, left out), well-known types in their JSON forms.
    /// Validation annotations are not read. What `kagami mock` answers a method without a file.
    public func sample(of type: String) -> JSONValue {
        sample(Self.bare(type), path: [])
    }

    private func sample(_ type: String, path: [String]) -> JSONValue {
        switch type {
        case "google.protobuf.Timestamp": return "2024-01-31T12:00:00Z"
        case "google.protobuf.Duration": return "1.500s"
        case "google.protobuf.Struct": return ["key": "value"]
        case "google.protobuf.Value": return "value"
        case "google.protobuf.ListValue": return ["value"]
        case "google.protobuf.FieldMask": return "path"
        case "google.protobuf.Empty": return [:]
        default: break
        }
        if let wrapped = TypedReader.wrappers[type] { return scalarSample(wrapped, name: "value", enumType: "") }
        guard let message = messages[type], !path.contains(type), path.count < 3, type != "google.protobuf.Any" else { return [:] }
        var object = JSONObject()
        var oneofs: Set<Int32> = []
        for field in message.field {
            if field.hasOneofIndex, !field.proto3Optional, !oneofs.insert(field.oneofIndex).inserted { continue }
            let name = Self.jsonName(field)
            let value: JSONValue
            if isMap(field), let entry = messages[Self.bare(field.typeName)], let valueField = entry.field.first(where: { $0.number == 2 }) {
                let keyType = entry.field.first(where: { $0.number == 1 })?.type ?? .string
                let key = keyType == .string ? "key" : keyType == .bool ? "true" : "1"
                value = [key: fieldSample(valueField, path: path + [type])]
            } else {
                let one = fieldSample(field, path: path + [type])
                value = field.label == .repeated ? [one] : one
            }
            // A message left empty (a cycle, the depth) stays out rather than go out empty.
            if field.type == .message, value == [:] || value == [[:]] { continue }
            object[name] = value
        }
        return .object(object)
    }

    private func fieldSample(_ field: Google_Protobuf_FieldDescriptorProto, path: [String]) -> JSONValue {
        switch field.type {
        case .message: sample(Self.bare(field.typeName), path: path)
        case .group: [:]
        default: scalarSample(field.type, name: field.name, enumType: Self.bare(field.typeName))
        }
    }

    private func scalarSample(_ type: Google_Protobuf_FieldDescriptorProto.TypeEnum, name: String, enumType: String) -> JSONValue {
        switch type {
        case .string: .string(name)
        case .bytes: .string(Data(name.utf8).base64EncodedString())
        case .bool: true
        case .double, .float: .number(1.5)
        case .int64, .uint64, .fixed64, .sfixed64, .sint64: "1"
        case .enum: enums[enumType]?.value.first(where: { $0.number != 0 }).map { .string($0.name) } ?? .integer(1)
        default: .integer(1)
        }
    }
}
