import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiJSON

/// Map Local for a gRPC call: a `.json` file holds the answer's messages in the proto3 JSON
/// mapping, written with the method's output type and length-prefixed, and the status goes in
/// the trailers. The file is one message (an object), the messages of a server-streaming
/// answer (an array), or a status with the messages sent before it, if any:
/// `{"grpc-status": 5, "grpc-message": "no such order", "messages": []}` (`grpc-status` a code
/// or its name, `NOT_FOUND`).
extension LocalResponse {
    /// Why a file can't answer a gRPC call; the client gets it as an INTERNAL status.
    struct GRPCFileProblem: Error, CustomStringConvertible {
        var description: String
    }

    /// The answer `file` gives `request`, and what went wrong when it can't (nil when it can).
    static func grpcAnswer(file: String, shown: String, request: FlowRequest, schema: ProtobufSchema) -> (response: LocalResponse, note: String?) {
        var response = LocalResponse(filePath: file, size: 0)
        response.headers = HeaderFields([("content-type", "application/grpc")])
        do {
            let (messages, code, message) = try grpcContent(of: file, shown: shown)
            guard let method = schema.method(path: request.path) else {
                throw GRPCFileProblem(description: "no schema has \(request.path) to write its messages with (give --proto-path or --proto-descriptor, or serve reflection)")
            }
            do {
                response.body = try GRPCExchange.body(json: messages, type: method.outputType, schema: schema, encoding: nil)
            } catch {
                throw GRPCFileProblem(description: "\(shown): \(error)")
            }
            response.trailers = grpcStatus(code, message)
            return (response, nil)
        } catch {
            response.body = Data()
            response.trailers = grpcStatus(13, "Kagami Map Local: \(error)")
            return (response, "\(error)")
        }
    }

    /// A gRPC call answered as Map Local answers it: from `file` (shown as `shown` in what
    /// goes wrong) in the same format, or, with no file, `message` (proto3 JSON of the output
    /// type; its default message, no bytes, when it doesn't fit) with status OK.
    /// `kagami mock`'s gRPC methods.
    public static func grpcAnswer(file: String?, shown: String, request: FlowRequest, schema: ProtobufSchema, otherwise message: JSONValue) -> FlowResponse {
        if let file { return grpcAnswer(file: file, shown: shown, request: request, schema: schema).response.answer }
        var response = LocalResponse(filePath: "", size: 0)
        response.headers = HeaderFields([("content-type", "application/grpc")])
        let type = schema.method(path: request.path)?.outputType ?? ""
        response.body = (try? GRPCExchange.body(json: [message], type: type, schema: schema, encoding: nil)) ?? GRPCExchange.prefixed(Data(), compressed: false)
        response.trailers = grpcStatus(0, nil)
        return response.answer
    }

    /// The answer whole, its body made already.
    var answer: FlowResponse {
        var answer = FlowResponse(status: status, reason: reason, headers: headers, body: FlowBody(data: body ?? Data()))
        answer.trailers = trailers
        return answer
    }

    /// The file's messages and status.
    static func grpcContent(of file: String, shown: String) throws(GRPCFileProblem) -> (messages: [JSONValue], code: Int, message: String?) {
        guard let data = FileManager.default.contents(atPath: file) else { throw GRPCFileProblem(description: "\(shown) can't be read") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw GRPCFileProblem(description: "\(shown) is not JSON: \(error)")
        }
        switch json {
        case .array(let messages):
            return (messages, 0, nil)
        case .object(let object) where object["grpc-status"] != nil:
            for key in object.keys where !["grpc-status", "grpc-message", "messages"].contains(key) {
                throw GRPCFileProblem(description: "\(shown): \(key) is not part of a status (grpc-status, grpc-message, messages)")
            }
            let code: Int
            switch object["grpc-status"] {
            case .integer(let number)? where (0...16).contains(number):
                code = number
            case .string(let name)?:
                guard let number = GRPCExchange.statusCode(named: name) else {
                    throw GRPCFileProblem(description: "\(shown): grpc-status \(name) is not a status name (OK, CANCELLED, … UNAUTHENTICATED)")
                }
                code = number
            default:
                throw GRPCFileProblem(description: "\(shown): grpc-status must be a code from 0 to 16 or its name, such as 5 or NOT_FOUND")
            }
            let message = object["grpc-message"]
            guard message == nil || message?.stringValue != nil else { throw GRPCFileProblem(description: "\(shown): grpc-message must be text") }
            let messages = object["messages"] ?? []
            guard let list = messages.arrayValue else { throw GRPCFileProblem(description: "\(shown): messages must be an array") }
            return (list, code, message?.stringValue)
        case .object:
            return ([json], 0, nil)
        default:
            throw GRPCFileProblem(description: "\(shown) must hold a message (an object), messages (an array) or a status (an object with grpc-status)")
        }
    }

    /// `grpc-status` and `grpc-message`, percent-encoded as the gRPC HTTP/2 protocol says.
    public static func grpcStatus(_ code: Int, _ message: String?) -> HeaderFields {
        var trailers = HeaderFields([("grpc-status", String(code))])
        if let message, !message.isEmpty {
            var encoded = ""
            for byte in message.utf8 {
                if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                    encoded.append(Character(UnicodeScalar(byte)))
                } else {
                    encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            trailers.add("grpc-message", encoded)
        }
        return trailers
    }
}
