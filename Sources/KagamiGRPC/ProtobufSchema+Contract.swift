import Foundation
import KagamiContract
import KagamiJSON
import SwiftProtobuf

/// A schema's gRPC methods as a contract, so the contract check, its reports and coverage read
/// them like any description: one operation per method (`POST /pkg.Service/Method`, named
/// by the method's own name), its request and its `200` response carrying `application/grpc` and
/// the JSON Schema of the input and output message types in the proto3 JSON mapping, with the
/// fields' validation annotations (`FieldRules`) as keywords.
extension ProtobufSchema {
    public static let grpcContentType = "application/grpc"

    public func contract(name: String) -> APIContract {
        var resources: [Resource] = []
        for method in methods.values.sorted(by: { $0.path < $1.path }) {
            let request = Request(payload: payload(of: method.inputType))
            let response = Response(status: 200, payload: payload(of: method.outputType))
            let action = Action(
                name: method.name, method: "POST",
                description: "\(method.clientStreaming ? "stream " : "")\(method.inputType) → \(method.serverStreaming ? "stream " : "")\(method.outputType)",
                uriTemplate: method.path, examples: [TransactionExample(requests: [request], responses: [response])])
            resources.append(Resource(name: method.path, uriTemplate: method.path, actions: [action]))
        }
        return APIContract(format: .protobuf, name: name, groups: [ResourceGroup(name: "", resources: resources)])
    }

    private func payload(of type: String) -> MessagePayload {
        MessagePayload(
            headers: [Header(name: "Content-Type", value: Self.grpcContentType)], schema: jsonSchema(of: type),
            schemaSource: .schema, schemaDialect: "https://json-schema.org/draft/2020-12/schema")
    }

    /// The JSON Schema of a message type's proto3 JSON form: the message itself at the top (so
    /// its properties count in coverage), every message it reaches under `$defs` by full name.
    public func jsonSchema(of type: String) -> JSONValue {
        var definitions = JSONObject()
        var pending = [Self.bare(type)]
        var seen: Set<String> = [Self.bare(type)]
        var top: JSONValue = [:]
        while let name = pending.popLast() {
            var reached: [String] = []
            let schema = messageSchema(name, reached: &reached)
            if name == Self.bare(type) { top = schema } else { definitions[name] = schema }
            for next in reached where seen.insert(next).inserted { pending.append(next) }
        }
        guard case .object(var object) = top else { return top }
        if !definitions.isEmpty { object["$defs"] = .object(definitions) }
        return .object(object)
    }

    private func messageSchema(_ name: String, reached: inout [String]) -> JSONValue {
        if let wellKnown = Self.wellKnownSchemas[name] { return wellKnown }
        guard let message = messages[name] else { return [:] }
        var properties = JSONObject()
        var required: [JSONValue] = []
        for field in message.field {
            let rules = FieldRules(of: field)
            let jsonName = Self.jsonName(field)
            var value = valueSchema(field, reached: &reached)
            if case .object(var object) = value, !rules.keywords.isEmpty, !isMap(field) {
                for (key, keyword) in rules.keywords { object[key] = keyword }
                value = .object(object)
            }
            if isMap(field), let entry = messages[Self.bare(field.typeName)], let valueField = entry.field.first(where: { $0.number == 2 }) {
                properties[jsonName] = ["type": "object", "additionalProperties": valueSchema(valueField, reached: &reached)]
            } else if field.label == .repeated {
                var list: JSONObject = ["type": "array", "items": value]
                for (key, keyword) in rules.listKeywords { list[key] = keyword }
                properties[jsonName] = .object(list)
            } else {
                properties[jsonName] = value
            }
            if rules.required { required.append(.string(jsonName)) }
        }
        var schema: JSONObject = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { schema["required"] = .array(required) }
        return .object(schema)
    }

    /// One value of the field's type (an item, for a repeated field).
    private func valueSchema(_ field: Google_Protobuf_FieldDescriptorProto, reached: inout [String]) -> JSONValue {
        switch field.type {
        case .string: return ["type": "string"]
        case .bytes: return ["type": "string", "contentEncoding": "base64"]
        case .bool: return ["type": "boolean"]
        case .int32, .sint32, .sfixed32, .uint32, .fixed32: return ["type": "integer"]
        case .int64, .sint64, .sfixed64, .uint64, .fixed64: return ["type": "string", "pattern": "^-?[0-9]+$"]
        case .float, .double: return ["type": ["number", "string"]]
        case .enum:
            let type = Self.bare(field.typeName)
            if type == "google.protobuf.NullValue" { return ["type": "null"] }
            let names = enums[type]?.value.map { JSONValue.string($0.name) } ?? []
            return ["anyOf": [["enum": .array(names)], ["type": "integer"]]]
        case .message, .group:
            let type = Self.bare(field.typeName)
            if let wellKnown = Self.wellKnownSchemas[type] { return wellKnown }
            reached.append(type)
            return ["$ref": .string("#/$defs/\(type)")]
        }
    }

    /// Well-known types as the JSON mapping writes them.
    static let wellKnownSchemas: [String: JSONValue] = {
        var schemas: [String: JSONValue] = [
            "google.protobuf.Timestamp": ["type": "string", "format": "date-time"],
            "google.protobuf.Duration": ["type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"],
            "google.protobuf.FieldMask": ["type": "string"],
            "google.protobuf.Struct": ["type": "object"],
            "google.protobuf.Value": [:],
            "google.protobuf.ListValue": ["type": "array"],
            "google.protobuf.Any": ["type": "object", "properties": ["@type": ["type": "string"]]],
            "google.protobuf.Empty": ["type": "object"],
        ]
        for (name, type) in TypedReader.wrappers {
            var field = Google_Protobuf_FieldDescriptorProto()
            field.type = type
            var none: [String] = []
            schemas[name] = ProtobufSchema().valueSchema(field, reached: &none)
        }
        return schemas
    }()
}
