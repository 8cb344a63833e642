import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 server on 127.0.0.1, port 0, for tests: it echoes what it received and
/// can misbehave on purpose. Routes:
/// - `/echo` (any method): JSON of the request as received (method, uri, headers, body size
///   and SHA-256); the request is also kept in `received`.
/// - `/bytes/N` (`?chunked=1`): N deterministic bytes (`OriginServer.byte(at:)`), sent with
///   Content-Length or chunked, streamed with backpressure so N may be gigabytes.
/// - `/status/N`: that status; no body for 204 and 304.
/// - `/slow/MS`: answers after MS milliseconds.
/// - `/no-response`: reads the request and never answers.
/// - `/close-mid-body`: promises 100,000 bytes, sends 1,000, closes.
/// - `/garbage`: answers with a response no HTTP parser accepts.
/// - `/close-early`: answers 413 before reading a request body, then closes.
/// - `/close-on-next`: answers normally, then closes the connection when the next request on
///   it arrives, without answering (a keep-alive connection the server dropped just as it was
///   reused).
public final class OriginServer: Sendable {
    public struct ReceivedRequest: Sendable {
        public var method: String
        public var uri: String
        public var version: String
        public var headers: [(name: String, value: String)]
        public var body: Data
        /// The port the request came from: one per connection, so reuse shows.
        public var clientPort: Int
    }

    private let channel: any Channel
    private let log: NIOLockedValueBox<[ReceivedRequest]>
    private let open: NIOLockedValueBox<Int>
    public let port: Int

    /// Connections to it open now (a proxy's pooled and in-flight server connections).
    public var openConnections: Int { open.withLockedValue { $0 } }

    /// Starts the server; with `tls`, it speaks HTTPS with that identity.
    public static func start(tls: ServerIdentity? = nil, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> OriginServer {
        let log = NIOLockedValueBox<[ReceivedRequest]>([])
        let open = NIOLockedValueBox(0)
        let tlsContext = try tls?.serverContext()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                open.withLockedValue { $0 += 1 }
                channel.closeFuture.whenComplete { _ in open.withLockedValue { $0 -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(log: log))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return OriginServer(channel: channel, log: log, open: open, scheme: tls == nil ? "http" : "https")
    }

    private init(channel: any Channel, log: NIOLockedValueBox<[ReceivedRequest]>, open: NIOLockedValueBox<Int>, scheme: String) {
        self.channel = channel
        self.log = log
        self.open = open
        self.port = channel.localAddress?.port ?? 0
        self.scheme = scheme
    }

    public let scheme: String

    /// `http://127.0.0.1:PORT` (or https)
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    /// The same, by name: `https://localhost:PORT`.
    public var localhostURL: String { "\(scheme)://localhost:\(port)" }

    /// Requests received so far, in order.
    public var received: [ReceivedRequest] { log.withLockedValue { $0 } }

    public func stop() async throws {
        try await channel.close()
    }

    /// The byte at `offset` of every `/bytes/N` body.
    public static func byte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset % 251) }

    /// The first `count` bytes of every `/bytes/N` body.
    public static func bytes(_ count: Int) -> [UInt8] { (0..<count).map(byte(at:)) }

    public static func sha256Hex<D: DataProtocol>(_ data: D) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

private final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let log: NIOLockedValueBox<[OriginServer.ReceivedRequest]>
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var hasher = SHA256()
    private var bodySize = 0
    private var closeOnNextRequest = false

    init(log: NIOLockedValueBox<[OriginServer.ReceivedRequest]>) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if closeOnNextRequest {
                context.close(promise: nil)
                return
            }
            self.head = head
            body.clear()
            hasher = SHA256()
            bodySize = 0
            if head.uri == "/close-early" {
                respond(context: context, status: .payloadTooLarge, body: "too large\n", extraHeaders: [("Connection", "close")], close: true)
                return
            }
            if head.headers["expect"].first?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var buffer):
            bodySize += buffer.readableBytes
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            // Keep up to 16 MiB for assertions; larger uploads are checked by hash.
            if body.readableBytes < 16 << 20 { body.writeBuffer(&buffer) }
        case .end:
            guard let head else { return }
            self.head = nil
            log.withLockedValue {
                $0.append(.init(
                    method: head.method.rawValue, uri: head.uri, version: head.version.description,
                    headers: head.headers.map { ($0.name, $0.value) }, body: Data(body.readableBytesView),
                    clientPort: context.channel.remoteAddress?.port ?? 0))
            }
            route(head, context: context)
        }
    }

    private func route(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let query = head.uri.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let segments = path.split(separator: "/").map(String.init)
        switch segments.first {
        case "echo":
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            let headers = head.headers.map { "[\(jsonString($0.name)),\(jsonString($0.value))]" }.joined(separator: ",")
            let json = #"{"method":\#(jsonString(head.method.rawValue)),"uri":\#(jsonString(head.uri)),"version":"\#(head.version)","headers":[\#(headers)],"bodySize":\#(bodySize),"bodySHA256":"\#(digest)"}"#
            respond(context: context, status: .ok, body: json, extraHeaders: [("Content-Type", "application/json")], head: head)
        case "bytes":
            let count = segments.count > 1 ? Int(segments[1]) ?? 0 : 0
            streamBytes(count, chunked: query.contains("chunked=1"), head: head, context: context)
        case "status":
            let code = segments.count > 1 ? Int(segments[1]) ?? 200 : 200
            let status = HTTPResponseStatus(statusCode: code)
            if code == 204 || code == 304 {
                var headers = HTTPHeaders()
                if code == 304 { headers.add(name: "ETag", value: "\"v1\"") }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                respond(context: context, status: status, body: "status \(code)\n", head: head)
            }
        case "slow":
            let ms = segments.count > 1 ? Int64(segments[1]) ?? 100 : 100
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(ms)) { [self] in
                self.respond(context: context, status: .ok, body: "slow \(ms)\n", head: head)
            }
        case "no-response":
            break
        case "close-delimited":
            // HTTP/1.0 style: no Content-Length, no chunks; the body ends when the connection does.
            let count = segments.count > 1 ? Int(segments[1]) ?? 0 : 0
            var headers = HTTPHeaders()
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_0, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: OriginServer.bytes(count)))))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case "close-on-next":
            closeOnNextRequest = true
            respond(context: context, status: .ok, body: "next request on this connection will be dropped\n", head: head)
        case "close-mid-body":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "100000")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: OriginServer.bytes(1000)))))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case "garbage":
            // A Content-Length no parser accepts.
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "not-a-number")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        default:
            respond(context: context, status: .notFound, body: "no route \(path)\n", head: head)
        }
    }

    private func respond(context: ChannelHandlerContext, status: HTTPResponseStatus, body: String, extraHeaders: [(String, String)] = [], head: HTTPRequestHead? = nil, close: Bool = false) {
        let buffer = ByteBuffer(string: body)
        var headers = HTTPHeaders(extraHeaders)
        headers.add(name: "Content-Length", value: String(buffer.readableBytes))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head?.version ?? .http1_1, status: status, headers: headers))), promise: nil)
        if head?.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close { done.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
    }

    private func streamBytes(_ count: Int, chunked: Bool, head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        if chunked {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        } else {
            headers.add(name: "Content-Length", value: String(count))
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        if head.method == .HEAD {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        // One period of the byte pattern, long enough to slice any piece from.
        let pieceSize = 64 * 251 * 4
        let pattern = ByteBuffer(bytes: OriginServer.bytes(pieceSize + 251))
        writeBytes(from: 0, to: count, pieceSize: pieceSize, pattern: pattern, context: context)
    }

    private func writeBytes(from offset: Int, to count: Int, pieceSize: Int, pattern: ByteBuffer, context: ChannelHandlerContext) {
        var offset = offset
        // Write while the socket takes it; then wait for the last write before going on.
        while offset < count {
            let length = min(pieceSize, count - offset)
            guard let piece = pattern.getSlice(at: offset % 251, length: length) else { return }
            offset += length
            let written = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(piece))))
            if !context.channel.isWritable && offset < count {
                let next = offset
                written.assumeIsolated().whenSuccess { [self] in
                    self.writeBytes(from: next, to: count, pieceSize: pieceSize, pattern: pattern, context: context)
                }
                return
            }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

private func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
