import Foundation
import KagamiJSON

/// The gRPC view as JSON (the inspector's tab, the HAR's `_grpc`, `kagami flows`): each side's
/// messages with their decoded fields, read with the method's types when a schema has it, and
/// the call's status. 64-bit values travel as strings, which JavaScript numbers can't hold whole.
extension GRPCExchange {
    /// Bytes shown per message or field when they are not decoded.
    static let shownBytes = 4_096

    public var json: JSONValue {
        [
            "status": status.map { status in
                ["code": .integer(status.code), "name": .string(status.name), "message": status.message.map(JSONValue.string) ?? .null]
            } ?? .null,
            "method": method?.json ?? .null,
            "schemaNote": schemaNote.map(JSONValue.string) ?? .null,
            "request": request.json,
            "response": response?.json ?? .null,
        ]
    }

    /// Each message's proto3 JSON alone (nil where a message has no type or does not fit it),
    /// for `kagami flows` and the HAR.
    public func typedMessages(_ side: Side?) -> [JSONValue] {
        (side?.messages ?? []).map { message in
            if case .success(let typed)? = message.typed { typed.json } else { .null }
        }
    }
}

extension ProtobufSchema.Method {
    public var json: JSONValue {
        [
            "path": .string(path), "service": .string(service), "name": .string(name),
            "inputType": .string(inputType), "outputType": .string(outputType),
            "clientStreaming": .bool(clientStreaming), "serverStreaming": .bool(serverStreaming),
        ]
    }
}

extension GRPCExchange.Side {
    var json: JSONValue {
        ["messages": .array(messages.map(\.json)), "problem": problem.map(JSONValue.string) ?? .null]
    }
}

extension GRPCExchange.Message {
    var json: JSONValue {
        var object: JSONObject = [
            "index": .integer(index),
            "compressed": .bool(compressed),
            "length": .integer(length),
        ]
        if let note { object["note"] = .string(note) }
        switch typed {
        case .success(let message)?:
            object["type"] = .string(message.type)
            object["json"] = message.json
            if !message.unknownFields.isEmpty {
                object["unknownFields"] = .array(message.unknownFields.map { unknown in
                    guard case .object(var field) = unknown.field.json else { return unknown.field.json }
                    field["path"] = .string(unknown.path)
                    return .object(field)
                })
            }
        case .failure(let failure)?:
            object["typeError"] = .string("does not fit its type \(failure)")
        case nil:
            break
        }
        switch fields {
        case .success(let fields)?:
            object["fields"] = .array(fields.map(\.json))
        case .failure(let failure)?:
            object["error"] = .string("not Protocol Buffers \(failure)")
            object["hex"] = .string(Self.hex(payload))
        case nil:
            if let text = String(data: payload, encoding: .utf8) {
                object["text"] = .string(text)
            } else {
                object["hex"] = .string(Self.hex(payload))
            }
        }
        return .object(object)
    }

    /// The first bytes of `data` (up to `shownBytes`) as spaced hex pairs.
    public static func hex(_ data: Data) -> String {
        data.prefix(GRPCExchange.shownBytes).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
    }
}

extension ProtobufWire.Field {
    public var json: JSONValue {
        var object: JSONObject = ["number": .integer(number), "wireType": .string(value.wireTypeName)]
        switch value {
        case .varint(let bits):
            object["kind"] = "varint"
            object["value"] = .string(String(bits))
            if ProtobufWire.signed(bits) < 0 { object["int64"] = .string(String(ProtobufWire.signed(bits))) }
            object["sint64"] = .string(String(ProtobufWire.zigzag(bits)))
        case .fixed64(let bits):
            object["kind"] = "fixed64"
            object["value"] = .string(String(bits))
            object["double"] = Self.number(Double(bitPattern: bits))
        case .fixed32(let bits):
            object["kind"] = "fixed32"
            object["value"] = .string(String(bits))
            object["float"] = Self.number(Double(Float(bitPattern: bits)))
        case .text(let text):
            object["kind"] = "text"
            object["value"] = .string(text)
        case .bytes(let data):
            object["kind"] = "bytes"
            object["size"] = .integer(data.count)
            object["hex"] = .string(GRPCExchange.Message.hex(data))
        case .message(let fields):
            object["kind"] = "message"
            object["fields"] = .array(fields.map(\.json))
        case .group(let fields):
            object["kind"] = "group"
            object["fields"] = .array(fields.map(\.json))
        }
        return .object(object)
    }

    static func number(_ value: Double) -> JSONValue {
        value.isFinite ? .number(value) : .string(String(value))
    }
}
