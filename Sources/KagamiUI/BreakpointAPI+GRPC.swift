// A held gRPC call's messages as JSON, and JSON edits written back as its body.
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiControl

extension BreakpointAPI {
    /// The schema a held call's messages are read and written with: the given one, or the
    /// server's reflection answer; nil for an exchange that is not a gRPC call.
    func schema(for held: HeldExchange) async -> ProtobufSchema? {
        guard let grpcSchemas, GRPCExchange.isGRPC(contentType: held.request.headers["content-type"]) else { return nil }
        return await grpcSchemas.schema(for: held.request)
    }
}

/// A held side of a gRPC call: shown as its method's messages in the proto3 JSON mapping, and
/// edited as JSON that is written with the schema, length-prefixed and compressed as the
/// side's `grpc-encoding` says.
enum HeldGRPC {
    /// `{"method", "type", "encoding", "messages": [...], "unknownFields": N}`, or `{"problem"}`
    /// when the messages can't be shown as JSON (no schema has the method, a message that
    /// doesn't fit its type); nil when the exchange is not a gRPC call. Fields the schema does
    /// not declare (a server or client with a newer .proto) ride in each message object as
    /// their bytes under `@unknown`, so an edit sends them on unchanged; `unknownFields` counts
    /// them.
    static func view(of body: FlowBody, headers: HeaderFields, request: FlowRequest, isRequest: Bool, schema: ProtobufSchema?) -> JSONValue? {
        guard GRPCExchange.isGRPC(contentType: request.headers["content-type"]) else { return nil }
        guard let schema, let method = schema.method(path: request.path) else {
            return ["problem": .string("no schema has \(request.path): its messages are edited as bytes (give --proto-path or --proto-descriptor)")]
        }
        let type = isRequest ? method.inputType : method.outputType
        let encoding = headers["grpc-encoding"]
        var object: JSONObject = [
            "method": .string(method.path), "type": .string(type), "encoding": encoding.map(JSONValue.string) ?? .null,
        ]
        let side = GRPCExchange.side(body, encoding: encoding)
        if let problem = side.problem {
            object["problem"] = .string(problem)
            return .object(object)
        }
        var messages: [JSONValue] = []
        var unknown = 0
        for message in side.messages {
            guard message.fields != nil else {
                object["problem"] = .string("message \(message.index): \(message.note ?? "not readable")")
                return .object(object)
            }
            switch schema.decode(message.payload, as: type, keepingUnknownFields: true) {
            case .success(let typed):
                messages.append(typed.json)
                unknown += typed.unknownFields.count
            case .failure(let failure):
                object["problem"] = .string("message \(message.index) does not fit \(type) \(failure)")
                return .object(object)
            }
        }
        object["messages"] = .array(messages)
        object["unknownFields"] = .integer(unknown)
        if unknown > 0 {
            object["note"] = .string(
                "\(unknown) field\(unknown == 1 ? "" : "s") the schema does not declare, kept as bytes under \(ProtobufSchema.unknownFieldsMember) and sent on as they came")
        }
        return .object(object)
    }

    /// The body written from `"grpc": {"messages": [...]}` (or `{"text": "..."}`, the same
    /// messages as JSON text, as the editor sends what was typed) in an edit of `field`
    /// (`request` or `response`); nil when the edit has no `grpc`.
    static func body(_ json: JSONValue, field: String, request: FlowRequest, headers: HeaderFields, schema: ProtobufSchema?) throws(HeldEditError) -> Data? {
        guard let grpc = json["grpc"], !grpc.isNull else { return nil }
        guard json["body"] == nil else { throw HeldEditError(field: "\(field).grpc", message: "give \"body\" or \"grpc\", not both") }
        let given: JSONValue
        let place: String
        if let text = grpc["text"]?.stringValue {
            place = "\(field).grpc.text"
            do {
                given = try JSONValue(parsing: text)
            } catch {
                throw HeldEditError(field: place, message: "not JSON: \(error)")
            }
        } else {
            place = "\(field).grpc.messages"
            given = grpc["messages"] ?? .null
        }
        // One message may be given alone.
        let messages = given.arrayValue ?? (given.objectValue != nil ? [given] : nil)
        guard let messages else {
            throw HeldEditError(field: place, message: "expected an array of messages in the proto3 JSON mapping, found \(given.typeName)")
        }
        guard let schema, let method = schema.method(path: request.path) else {
            throw HeldEditError(field: "\(field).grpc", message: "no schema has \(request.path) (give --proto-path or --proto-descriptor): edit the body's bytes instead")
        }
        let type = field == "request" ? method.inputType : method.outputType
        do {
            return try GRPCExchange.body(json: messages, type: type, schema: schema, encoding: headers["grpc-encoding"])
        } catch {
            throw HeldEditError(field: place, message: error.description)
        }
    }
}
