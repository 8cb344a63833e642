// WebSocket echo load for bench/proxy/websocket.sh: an echo server and a client that keeps a
// window of messages in flight on each connection and counts the echoes, both on SwiftNIO's
// WebSocket codec so neither end is the bottleneck of what is measured between them.
//   ws-bench server                      prints "port N", echoes until killed
//   ws-bench client PORT CONNECTIONS MESSAGES SIZE WINDOW
//                                        MESSAGES per connection; prints one JSON line
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// Echoes text and binary frames, answers pings, returns the close.
final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            context.write(wrapOutboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)), promise: nil)
        case .ping:
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// Sends MESSAGES masked text frames, WINDOW at a time, and completes once every echo is back.
final class LoadHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let total: Int
    let window: Int
    let payload: ByteBuffer
    let done: EventLoopPromise<Int>
    var sent = 0
    var received = 0

    init(total: Int, window: Int, payload: ByteBuffer, done: EventLoopPromise<Int>) {
        self.total = total
        self.window = window
        self.payload = payload
        self.done = done
    }

    func handlerAdded(context: ChannelHandlerContext) {
        while sent < min(window, total) { send(context) }
        context.flush()
    }

    private func send(_ context: ChannelHandlerContext) {
        sent += 1
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: payload)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.opcode == .text else { return }
        received += 1
        if sent < total { send(context) }
        if received == total {
            var code = context.channel.allocator.buffer(capacity: 2)
            code.write(webSocketErrorCode: .normalClosure)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: code)), promise: nil)
            done.succeed(received)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.eof)
    }
}

/// Sends the upgrade request once connected.
final class HandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    let host: String

    init(host: String) { self.host = host }

    func channelActive(context: ChannelHandlerContext) {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/echo", headers: ["Host": host, "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }
}

func runServer() throws {
    let upgrader = NIOWebSocketServerUpgrader(
        maxFrameSize: 1 << 24,
        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
        upgradePipelineHandler: { channel, _ in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
        })
    let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        }
        .bind(host: "127.0.0.1", port: 0).wait()
    FileHandle.standardOutput.write(Data("port \(channel.localAddress?.port ?? 0)\n".utf8))
    try channel.closeFuture.wait()
}

func runClient(port: Int, connections: Int, messages: Int, size: Int, window: Int) throws {
    let payload = ByteBuffer(repeating: UInt8(ascii: "k"), count: size)
    let clock = ContinuousClock()
    let started = clock.now
    var futures: [EventLoopFuture<Int>] = []
    for _ in 0..<connections {
        let loop = group.next()
        let done = loop.makePromise(of: Int.self)
        let upgrader = NIOWebSocketClientUpgrader(
            requestKey: "dGhlIHNhbXBsZSBub25jZQ==", maxFrameSize: 1 << 24,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LoadHandler(total: messages, window: window, payload: payload, done: done))
                }
            })
        _ = try ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    let encoder = HTTPRequestEncoder()
                    let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
                    try sync.addHandler(encoder)
                    try sync.addHandler(decoder)
                    let handshake = HandshakeHandler(host: "127.0.0.1:\(port)")
                    // The upgrade handler sits before the handshake so it sees (and completes) the request.
                    let upgrade = NIOHTTPClientUpgradeHandler(
                        upgraders: [upgrader],
                        httpHandlers: [encoder, decoder, handshake],
                        upgradeCompletionHandler: { _ in })
                    try sync.addHandler(upgrade)
                    try sync.addHandler(handshake)
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
        futures.append(done.futureResult)
    }
    var echoed = 0
    for future in futures { echoed += try future.wait() }
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("{\"messages\": \(echoed), \"seconds\": \(seconds), \"perSecond\": \(Int(Double(echoed) / seconds))}")
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "server":
    try runServer()
case "client" where arguments.count == 7:
    let numbers = arguments.dropFirst(2).compactMap { Int($0) }
    guard numbers.count == 5 else {
        FileHandle.standardError.write(Data("ws-bench client: PORT CONNECTIONS MESSAGES SIZE WINDOW must be numbers\n".utf8))
        exit(2)
    }
    try runClient(port: numbers[0], connections: numbers[1], messages: numbers[2], size: numbers[3], window: numbers[4])
default:
    FileHandle.standardError.write(Data("usage: ws-bench server | ws-bench client PORT CONNECTIONS MESSAGES SIZE WINDOW\n".utf8))
    exit(2)
}
