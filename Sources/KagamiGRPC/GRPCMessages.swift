import Foundation
import KagamiContentCoding
import KagamiFlow

/// A gRPC exchange read back from its flow: the length-prefixed messages of each side
/// (gRPC over HTTP/2, `application/grpc[+proto]`), decoded as Protocol Buffers with the
/// method's types when a schema has the method (else without a `.proto`), and the call's
/// status from the trailers (or from the headers of a trailers-only answer).
public struct GRPCExchange: Sendable, Hashable {
    public struct Message: Sendable, Hashable {
        /// Position in its stream, from 0.
        public var index: Int
        /// The compressed flag of the prefix.
        public var compressed: Bool
        /// The length the prefix declared.
        public var length: Int
        /// The message's bytes, decompressed when the flag and `grpc-encoding` say how; of a
        /// message over `decodeLimit`, only its first bytes.
        public var payload: Data
        /// The payload read as Protocol Buffers, or why it could not be.
        public var fields: Result<[ProtobufWire.Field], ProtobufWire.Failure>?
        /// The payload read as its method's message type, or why it does not fit that type;
        /// nil without a schema for the method.
        public var typed: Result<TypedMessage, ProtobufWire.Failure>?
        /// Why the payload is shown as it arrived (an unknown `grpc-encoding`, say).
        public var note: String?
    }

    public struct Side: Sendable, Hashable {
        public var messages: [Message]
        /// What was wrong with the framing: a prefix cut short, or a body the capture limit
        /// cut (`isTruncated`), named with the byte where it happened.
        public var problem: String?

        /// Reads every message that arrived readable (not compressed in an unknown way) as `type`.
        mutating func read(as type: String, with schema: ProtobufSchema) {
            for index in messages.indices where messages[index].fields != nil {
                messages[index].typed = schema.decode(messages[index].payload, as: type)
            }
        }
    }

    public struct Status: Sendable, Hashable {
        public var code: Int
        public var name: String
        public var message: String?

        public init(code: Int, name: String, message: String?) {
            self.code = code
            self.name = name
            self.message = message
        }
    }

    public var request: Side
    public var response: Side?
    public var status: Status?
    /// The method the path names, when a schema has it.
    public var method: ProtobufSchema.Method?
    /// Why no schema read the messages (the server's reflection failed, say).
    public var schemaNote: String?

    /// Whether a content type is gRPC (`application/grpc`, `application/grpc+proto`,
    /// `application/grpc+json`…), not gRPC-Web.
    public static func isGRPC(contentType: String?) -> Bool {
        guard let contentType else { return false }
        // By hand, not `trimmingCharacters`: this runs on every flow a gRPC contract sees, and
        // an empty or `;`-only value has no first part to index.
        let type = (contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .drop { $0 == " " || $0 == "\t" }.lowercased()
        let bare = type.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        return String(bare) == "application/grpc" || type.hasPrefix("application/grpc+")
    }

    /// `nil` when the flow is not a gRPC call. With a `schema` that has the method, each
    /// message is also read as the method's input or output type.
    public init?(flow: Flow, responseTrailers: HeaderFields? = nil, schema: ProtobufSchema? = nil) {
        guard Self.isGRPC(contentType: flow.request.headers["content-type"]) else { return nil }
        let protobuf = !(flow.request.headers["content-type"]?.lowercased().contains("+json") ?? false)
        method = schema?.method(path: flow.request.path)
        request = Self.side(flow.request.body, encoding: flow.request.headers["grpc-encoding"], protobuf: protobuf)
        if let response = flow.response {
            self.response = Self.side(response.body, encoding: response.headers["grpc-encoding"], protobuf: protobuf)
            status = Self.status(trailers: responseTrailers, headers: response.headers)
        }
        if let schema, let method, protobuf {
            request.read(as: method.inputType, with: schema)
            response?.read(as: method.outputType, with: schema)
        }
    }

    /// Messages longer than this are not decoded for display (gRPC's own default limit on a
    /// message a peer receives is 4 MiB): their first bytes are kept, and their note says how
    /// long they are, so a huge message costs no more than a small one to show.
    public static let decodeLimit = 4 << 20

    /// The messages in one body. Each is a 1-byte compressed flag, a 4-byte big-endian length
    /// and that many bytes. The body is read in place, never copied whole.
    public static func side(_ body: FlowBody, encoding: String?, protobuf: Bool = true) -> Side {
        let data = body.data
        let base = data.startIndex
        let count = data.count
        var messages: [Message] = []
        var index = 0
        var problem: String?
        while index < count {
            guard count - index >= 5 else {
                problem = "message \(messages.count) has a \(count - index)-byte prefix at byte \(index); a prefix is 5 bytes"
                break
            }
            let flag = data[base + index]
            let length = (1...4).reduce(0) { $0 << 8 | Int(data[base + index + $1]) }
            guard flag <= 1 else {
                problem = "message \(messages.count) at byte \(index) has compressed flag \(flag); only 0 and 1 exist"
                break
            }
            let start = index + 5
            let present = min(length, count - start)
            if length > decodeLimit {
                let shown = Data(data[(base + start)..<(base + start + min(present, shownBytes))])
                messages.append(Message(
                    index: messages.count, compressed: flag == 1, length: length, payload: shown, fields: nil, typed: nil,
                    note: "not decoded: \(length) bytes, over the \(decodeLimit)-byte cap"))
                if present < length {
                    if !body.isTruncated { problem = "message \(messages.count - 1) at byte \(index) declares \(length) bytes, \(present) follow" }
                    break
                }
                index = start + length
                continue
            }
            guard present == length else {
                problem = "message \(messages.count) at byte \(index) declares \(length) bytes, \(present) follow"
                break
            }
            var payload = Data(data[(base + start)..<(base + start + length)])
            var note: String?
            var decodable = true
            if flag == 1 {
                let coding = encoding?.trimmingCharacters(in: .whitespaces).lowercased() ?? "identity"
                if coding == "gzip" || coding == "deflate" {
                    do {
                        payload = try ContentCoding.decode(payload, contentEncoding: coding)
                    } catch {
                        note = "compressed with \(coding), which did not decode: \(error)"
                        decodable = false
                    }
                } else {
                    note = "compressed with grpc-encoding \(coding), shown as it arrived"
                    decodable = false
                }
            }
            let fields = decodable && protobuf ? ProtobufWire.decode(payload) : nil
            messages.append(Message(index: messages.count, compressed: flag == 1, length: length, payload: payload, fields: fields, typed: nil, note: note))
            index = start + length
        }
        if body.isTruncated {
            let cut = "the body was captured up to \(body.keptCount) of \(body.size) bytes"
            problem = problem.map { "\($0) (\(cut))" } ?? cut
        }
        return Side(messages: messages, problem: problem)
    }

    /// `grpc-status` and `grpc-message` (percent-encoded, as the gRPC HTTP/2 protocol says)
    /// from the trailers, or from the headers of a trailers-only answer.
    public static func status(trailers: HeaderFields?, headers: HeaderFields) -> Status? {
        let source = trailers.flatMap { $0.contains("grpc-status") ? $0 : nil } ?? headers
        guard let raw = source["grpc-status"], let code = Int(raw.trimmingCharacters(in: .whitespaces)) else { return nil }
        let message = source["grpc-message"].map { $0.removingPercentEncoding ?? $0 }
        return Status(code: code, name: statusNames[code] ?? "status \(code)", message: message)
    }

    /// The code of a status name (`NOT_FOUND` → 5).
    public static func statusCode(named name: String) -> Int? {
        statusNames.first { $0.value == name.uppercased() }?.key
    }

    static let statusNames: [Int: String] = [
        0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
        5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
        9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
        13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
    ]
}
