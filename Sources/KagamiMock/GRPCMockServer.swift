// gRPC methods of a Protocol Buffers schema served over h2c, answered as Map Local answers a
// gRPC call: from `Method.json` files, or a message generated from the output type.
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiRules
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix

/// `kagami mock --proto-path DIR` (or `--proto-descriptor FILE`): every method of the schema's
/// services over HTTP/2 in clear text (prior knowledge, as gRPC clients speak it). A call to
/// `/pkg.Service/Method` is answered from `ANSWERS/pkg.Service/Method.json` when that file
/// exists (one message, an array of messages for a stream, or a status: the Map Local format,
/// `docs/RULES.md`), else with a message generated from the output type's JSON Schema; a
/// method the schema doesn't have gets UNIMPLEMENTED. Each call goes to the sink as a flow.
public final class GRPCMockServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port.
        public var port: Int
        public var schema: ProtobufSchema
        /// The folder of `pkg.Service/Method.json` answers; nil: generated messages only.
        public var answers: String?

        public init(host: String = "127.0.0.1", port: Int = 0, schema: ProtobufSchema, answers: String? = nil) {
            self.host = host
            self.port = port
            self.schema = schema
            self.answers = answers
        }
    }

    public let port: Int
    private let channel: any Channel

    public var url: String { "http://\(Authority(host: channel.localAddress?.ipAddress ?? "127.0.0.1", port: port))" }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    public static func start(_ configuration: Configuration, sink: (any FlowSink)? = nil) async throws -> GRPCMockServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(GRPCMockHandler(configuration: configuration, sink: sink))
                        }
                    }
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        return GRPCMockServer(channel: channel, port: channel.localAddress?.port ?? configuration.port)
    }

    public func stop() async throws {
        try await channel.close()
    }

    /// The answer to one call: UNIMPLEMENTED for a method the schema lacks, else the Map Local
    /// answer from its file (or a generated message).
    static func answer(_ request: FlowRequest, configuration: Configuration) -> FlowResponse {
        guard let method = configuration.schema.method(path: request.path) else {
            let known = Set(configuration.schema.methods.values.map(\.service)).sorted().joined(separator: ", ")
            var response = FlowResponse(status: 200, headers: HeaderFields([("content-type", "application/grpc")]))
            response.trailers = LocalResponse.grpcStatus(12, "Kagami mock: the schema has no method \(request.path) (its services: \(known))")
            return response
        }
        let relative = "\(method.service)/\(method.name).json"
        let file = configuration.answers.map { URL(fileURLWithPath: $0).appendingPathComponent(relative).path }
        let existing = file.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
        let generated = existing == nil ? Self.generated(method.outputType, schema: configuration.schema) : [:]
        return LocalResponse.grpcAnswer(file: existing, shown: relative, request: request, schema: configuration.schema, otherwise: generated)
    }

    /// A message of `type` with every field set (`ProtobufSchema.sample(of:)`); a field the
    /// encoder refuses is left out, whole, at the top.
    static func generated(_ type: String, schema: ProtobufSchema) -> JSONValue {
        guard case .object(var object) = schema.sample(of: type) else { return [:] }
        while !object.isEmpty {
            do {
                _ = try schema.encode(.object(object), as: type)
                break
            } catch {
                let field = String(error.path.prefix { $0 != "." && $0 != "[" })
                guard object.removeValue(forKey: field) != nil else { return [:] }
            }
        }
        return .object(object)
    }
}

/// One HTTP/2 stream: the call's head and body collected, then the answer's head, body and
/// trailers (the status).
private final class GRPCMockHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let configuration: GRPCMockServer.Configuration
    let sink: (any FlowSink)?
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private let start = Date()

    init(configuration: GRPCMockServer.Configuration, sink: (any FlowSink)?) {
        self.configuration = configuration
        self.sink = sink
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard let head else { return }
            let local = context.channel.localAddress
            let request = FlowRequest(
                method: head.method.rawValue, scheme: "http", host: configuration.host, port: local?.port ?? configuration.port, target: head.uri,
                version: "HTTP/2.0", headers: HeaderFields(head.headers.map { ($0.name, $0.value) }),
                body: FlowBody(data: Data(body.readableBytesView)))
            var response = GRPCMockServer.answer(request, configuration: configuration)
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .ok, headers: HTTPHeaders(response.headers.pairs)))), promise: nil)
            if !response.body.data.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body.data)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(HTTPHeaders((response.trailers ?? HeaderFields()).pairs))), promise: nil)
            response.version = "HTTP/2.0"
            sink?.record(Flow(
                mode: .mock, serverAddress: local.map { Authority(host: $0.ipAddress ?? "?", port: $0.port ?? 0).description },
                request: request, response: response, timings: FlowTimings(start: start, requestSent: start, firstByte: Date(), end: Date())))
        }
    }
}
