// `NIOProxyBaseline PORT ORIGIN_PORT`: an HTTP/1.1 reverse proxy to 127.0.0.1:ORIGIN_PORT with
// nothing but SwiftNIO's own HTTP handlers: each client connection gets one kept-alive connection
// to the origin on its own event loop, and every part is relayed as it comes. No capture, no
// rules, no pool, no timeouts: the floor under what any proxy built on SwiftNIO costs.
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]), let originPort = Int(arguments[2]) else {
    print("usage: NIOProxyBaseline PORT ORIGIN_PORT")
    exit(2)
}

/// The client's side: requests go to the origin connection, opened at the first request.
final class ClientSide: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let originPort: Int
    private var origin: Channel?
    private var connecting = false
    private var waiting: [HTTPClientRequestPart] = []

    init(originPort: Int) {
        self.originPort = originPort
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: HTTPClientRequestPart
        switch unwrapInboundIn(data) {
        case .head(let head): part = .head(head)
        case .body(let body): part = .body(.byteBuffer(body))
        case .end(let trailers): part = .end(trailers)
        }
        if let origin {
            origin.write(part, promise: nil)
            if case .end = part { origin.flush() }
            return
        }
        waiting.append(part)
        guard !connecting else { return }
        connecting = true
        let client = context.channel
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(OriginSide(client: client))
                }
            }
            .connect(host: "127.0.0.1", port: originPort)
            .whenComplete { result in
                let context = bound.value
                switch result {
                case .success(let channel):
                    self.origin = channel
                    for part in self.waiting { channel.write(part, promise: nil) }
                    self.waiting.removeAll()
                    channel.flush()
                case .failure:
                    context.close(promise: nil)
                }
            }
    }

    func channelInactive(context: ChannelHandlerContext) {
        origin?.close(promise: nil)
        context.fireChannelInactive()
    }
}

/// The origin's side: each response part goes straight to the client.
final class OriginSide: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let client: Channel

    init(client: Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            client.write(HTTPServerResponsePart.head(head), promise: nil)
        case .body(let body):
            client.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
        case .end(let trailers):
            client.writeAndFlush(HTTPServerResponsePart.end(trailers), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(ClientSide(originPort: originPort))
        }
    }
    .bind(host: "127.0.0.1", port: port)
    .wait()
print("NIOProxyBaseline on \(server.localAddress.map { "\($0)" } ?? "?") to 127.0.0.1:\(originPort)")
try server.closeFuture.wait()
