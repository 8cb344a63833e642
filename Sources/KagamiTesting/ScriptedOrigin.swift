import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 server on 127.0.0.1, port 0, that answers each request with what a test's
/// script says (status, headers, body bytes, sent with Content-Length or chunked): an API that
/// behaves, or deviates from its description, exactly as the test needs.
public final class ScriptedOrigin: Sendable {
    public struct Request: Sendable {
        public var method: String
        /// Path and query as sent.
        public var uri: String
        public var headers: [(name: String, value: String)]
        public var body: Data

        public var path: String { String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }

        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        /// Sent with `Transfer-Encoding: chunked` (in parts of at most 7 bytes) instead of Content-Length.
        public var chunked: Bool

        public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], chunked: Bool = false) {
            self.status = status
            self.headers = headers
            self.body = body
            self.chunked = chunked
        }

        /// A JSON body with `Content-Type: application/json` unless `contentType` says otherwise.
        public static func json(_ text: String, status: Int = 200, contentType: String = "application/json", chunked: Bool = false) -> Reply {
            Reply(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8), chunked: chunked)
        }
    }

    public typealias Script = @Sendable (Request) -> Reply

    private let channel: any Channel
    public let port: Int
    public let scheme: String

    /// `http://127.0.0.1:PORT` (or https)
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    public static func start(tls: ServerIdentity? = nil, script: @escaping Script) async throws -> ScriptedOrigin {
        let tlsContext = try tls?.serverContext()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(ScriptedHandler(script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return ScriptedOrigin(channel: channel, scheme: tls == nil ? "http" : "https")
    }

    private init(channel: any Channel, scheme: String) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.scheme = scheme
    }

    public func stop() async throws {
        try await channel.close()
    }
}

private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let script: ScriptedOrigin.Script
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(script: @escaping ScriptedOrigin.Script) {
        self.script = script
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var buffer):
            body.writeBuffer(&buffer)
        case .end:
            guard let head else { return }
            self.head = nil
            let reply = script(ScriptedOrigin.Request(
                method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                body: Data(body.readableBytesView)))
            var headers = HTTPHeaders(reply.headers)
            let bodyless = head.method == .HEAD || reply.status == 204 || reply.status == 304
            if reply.chunked && !bodyless {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            } else if reply.status != 204 && reply.status != 304 {
                headers.add(name: "Content-Length", value: String(reply.body.count))
            }
            let status = HTTPResponseStatus(statusCode: reply.status)
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            if !bodyless {
                var offset = 0
                let part = reply.chunked ? 7 : max(1, reply.body.count)
                while offset < reply.body.count {
                    let end = min(reply.body.count, offset + part)
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: reply.body[offset..<end])))), promise: nil)
                    offset = end
                }
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
