import Foundation
import KagamiContentCoding
import KagamiJSON

/// Messages written back as a gRPC body: JSON encoded with the method's type, each message
/// length-prefixed, compressed when the side's `grpc-encoding` says so.
extension GRPCExchange {
    /// Why messages could not be written as a body: which message and where in it, or the
    /// compression.
    public struct EncodingFailure: Error, Sendable, CustomStringConvertible {
        public var description: String

        public init(_ description: String) { self.description = description }
    }

    /// `messages`, each with its 5-byte prefix (compressed flag, big-endian length). With
    /// `grpc-encoding` gzip or deflate every message is compressed and flagged; identity (or
    /// none) leaves them as they are; any other coding can't be written.
    public static func framed(_ messages: [Data], encoding: String?) throws(EncodingFailure) -> Data {
        let coding = encoding?.trimmingCharacters(in: .whitespaces).lowercased() ?? "identity"
        let compressed = coding == "gzip" || coding == "deflate"
        guard compressed || coding == "identity" || coding.isEmpty else {
            throw EncodingFailure("grpc-encoding \(coding) can't be written (gzip, deflate or identity)")
        }
        var body = Data()
        for message in messages {
            var payload = message
            if compressed {
                do {
                    payload = try ContentCoding.encode(message, contentEncoding: coding)
                } catch {
                    throw EncodingFailure("compressing with \(coding): \(error)")
                }
            }
            body.append(prefixed(payload, compressed: compressed))
        }
        return body
    }

    /// One message with its prefix: the compressed flag and the big-endian length.
    public static func prefixed(_ payload: Data, compressed: Bool) -> Data {
        let length = payload.count
        return Data([compressed ? 1 : 0, UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]) + payload
    }

    /// JSON messages (proto3 JSON mapping) written as `type` with `schema`, then framed.
    public static func body(
        json messages: [JSONValue], type: String, schema: ProtobufSchema, encoding: String?
    ) throws(EncodingFailure) -> Data {
        var encoded: [Data] = []
        for (index, message) in messages.enumerated() {
            do {
                encoded.append(try schema.encode(message, as: type))
            } catch {
                throw EncodingFailure("message \(index) does not fit \(ProtobufSchema.bare(type)): \(error)")
            }
        }
        return try framed(encoded, encoding: encoding)
    }
}
