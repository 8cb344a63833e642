import Foundation
import KagamiFlow

/// gRPC server reflection (`grpc.reflection.v1` and the older `v1alpha`, whose messages are the
/// same): one `file_containing_symbol` request for a service, answered with the files that
/// define it and everything they import, as serialized `FileDescriptorProto`s.
public enum ServerReflection {
    /// The two services' method paths, tried in this order (an older server has v1alpha only).
    public static let paths = [
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ]

    /// What a reflection call gave back: the response body and the call's status.
    public struct Answer: Sendable {
        public var body: Data
        public var status: GRPCExchange.Status?

        public init(body: Data, status: GRPCExchange.Status?) {
            self.body = body
            self.status = status
        }
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Sends one request body (`path`, body) to the server and returns its answer.
    public typealias Send = @Sendable (_ path: String, _ body: Data) async throws -> Answer

    /// The files defining `service`, asked through `send`: v1 first, v1alpha when the server
    /// doesn't have v1 (UNIMPLEMENTED).
    public static func files(defining service: String, send: Send) async throws -> [Data] {
        try files(inAnswer: try await ask(framedRequest(fileContainingSymbol: service), send: send))
    }

    /// The services the server's reflection lists (`list_services`), its own left out.
    public static func services(send: Send) async throws -> [String] {
        var message = ProtobufWire.Writer()
        message.tag(7, wireType: 2)
        message.lengthDelimited(Array("*".utf8))
        let body = try await ask(GRPCExchange.prefixed(Data(message.bytes), compressed: false), send: send)
        // list_services_response (6): ServiceResponse (1) each, its name in field 1.
        let (bytes, listed) = try response(6, inAnswer: body)
        var reader = TypedReader(schema: ProtobufSchema(), reader: ProtobufWire.Reader(bytes: bytes, budget: ProtobufWire.maximumFields))
        var names: [String] = []
        do {
            for item in listed where item.number == 1 {
                guard case .bytes(let range) = item.value else { continue }
                reader.reader.index = range.lowerBound
                for part in try reader.rawFields(end: range.upperBound) where part.number == 1 {
                    if case .bytes(let name) = part.value { names.append(String(decoding: bytes[name], as: UTF8.self)) }
                }
            }
        } catch {
            throw Failure(description: "the reflection answer is not a ServerReflectionResponse \(error)")
        }
        return names.filter { !$0.hasPrefix("grpc.reflection.") }
    }

    /// Every service the server's reflection lists, with the files that define them.
    public static func schema(send: Send) async throws -> ProtobufSchema {
        var schema = ProtobufSchema()
        for service in try await services(send: send) where schema.methods.values.allSatisfy({ $0.service != service }) {
            do {
                try schema.add(serializedFiles: try await files(defining: service, send: send))
            } catch let failure as ProtobufSchema.Failure {
                throw Failure(description: "the files of \(service): \(failure)")
            }
        }
        return schema
    }

    /// The response body to one framed request: v1 first, v1alpha when the server doesn't
    /// have v1 (UNIMPLEMENTED).
    static func ask(_ request: Data, send: Send) async throws -> Data {
        var reasons: [String] = []
        for path in paths {
            let answer = try await send(path, request)
            if let status = answer.status, status.code != 0 {
                reasons.append("\(path.split(separator: "/").first ?? ""): \(status.name)\(status.message.map { " \($0)" } ?? "")")
                if status.code == 12 { continue }
                throw Failure(description: reasons.joined(separator: "; "))
            }
            return answer.body
        }
        throw Failure(description: "no server reflection (\(reasons.joined(separator: "; ")))")
    }

    /// A `ServerReflectionRequest` with `file_containing_symbol` (field 4), length-prefixed.
    public static func framedRequest(fileContainingSymbol symbol: String) -> Data {
        var message = ProtobufWire.Writer()
        message.tag(4, wireType: 2)
        message.lengthDelimited(Array(symbol.utf8))
        return GRPCExchange.prefixed(Data(message.bytes), compressed: false)
    }

    /// The serialized files of the first `ServerReflectionResponse` in a response body: its
    /// `file_descriptor_response` (field 4, files in its field 1).
    public static func files(inAnswer body: Data) throws -> [Data] {
        let (bytes, inner) = try response(4, inAnswer: body)
        return inner.compactMap { item in
            if item.number == 1, case .bytes(let file) = item.value { Data(bytes[file]) } else { nil }
        }
    }

    /// The fields of the first `ServerReflectionResponse`'s member `number` (and the message's
    /// bytes their ranges point into); its `error_response` (field 7: code 1, message 2) is
    /// the failure.
    static func response(_ number: Int, inAnswer body: Data) throws -> (bytes: [UInt8], fields: [(number: Int, offset: Int, value: WireValue)]) {
        let side = GRPCExchange.side(FlowBody(data: body), encoding: nil, protobuf: false)
        if let problem = side.problem { throw Failure(description: "the reflection answer is not gRPC framing: \(problem)") }
        guard let first = side.messages.first else { throw Failure(description: "the reflection answer has no message") }
        let bytes = [UInt8](first.payload)
        var reader = TypedReader(schema: ProtobufSchema(), reader: ProtobufWire.Reader(bytes: bytes, budget: ProtobufWire.maximumFields))
        do {
            for field in try reader.rawFields(end: bytes.count) {
                guard case .bytes(let range) = field.value else { continue }
                reader.reader.index = range.lowerBound
                let inner = try reader.rawFields(end: range.upperBound)
                if field.number == number { return (bytes, inner) }
                if field.number == 7 {
                    var code: UInt64 = 0
                    var message = ""
                    for item in inner {
                        if item.number == 1, case .varint(let value) = item.value { code = value }
                        if item.number == 2, case .bytes(let text) = item.value { message = String(decoding: bytes[text], as: UTF8.self) }
                    }
                    let name = GRPCExchange.statusNames[Int(code)] ?? "status \(code)"
                    throw Failure(description: "\(name)\(message.isEmpty ? "" : ": \(message)")")
                }
            }
        } catch let failure as ProtobufWire.Failure {
            throw Failure(description: "the reflection answer is not a ServerReflectionResponse \(failure)")
        }
        throw Failure(description: "the reflection answer has neither what was asked nor an error")
    }
}
