import Foundation
import KagamiControl
import KagamiFlow
import KagamiRules
import KagamiScenarios
import KagamiTesting
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
@testable import KagamiProxy

/// One HTTP/2 client connection of the proxy driven with frames: a NIOHTTP2 client on an
/// embedded channel whose bytes go to the proxy's connection (with the handlers a real h2c one
/// has, `HTTP2ClientSide`) and back, servers that are embedded channels (`PlaybookServers`), and
/// a clock that moves only when told. No sockets, no sleeps.
final class HTTP2Playbook {
    let loop = EmbeddedEventLoop()
    /// The proxy's side of the client connection.
    let proxy: EmbeddedChannel
    /// The client's side: NIOHTTP2 in client mode.
    let client: EmbeddedChannel
    let servers: PlaybookServers
    let sink = CollectingSink()
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer

    /// A reverse proxy to `http://origin.test:80`.
    init(budget: ClientBudget = ClientBudget()) throws {
        servers = PlaybookServers(loop: loop)
        let settings = Playbook.context(
            mode: .reverse(ProxyTarget(scheme: "http", host: "origin.test", port: 80, path: "/")), rules: ActiveRules(nil),
            breakpoints: Breakpoints(BreakpointSettings()), scenarios: ActiveScenario(), sink: sink, timeouts: Playbook.Timeouts(),
            budget: budget)
        proxy = EmbeddedChannel(loop: loop)
        try proxy.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_000)).wait()
        try HTTP2ClientSide.configure(proxy.pipeline.syncOperations, channel: proxy, settings: settings, pool: servers, origin: nil)
        client = EmbeddedChannel(loop: loop)
        multiplexer = try client.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration(),
            streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
        ) { $0.eventLoop.makeSucceededVoidFuture() }
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8_888)).wait()
        try deliver()
    }

    /// Passes bytes between the client and the proxy until neither has more to send.
    func deliver() throws {
        var moved = true
        while moved {
            moved = false
            loop.run()
            while let data = try client.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let bytes) = data else { continue }
                if proxy.isActive { try proxy.writeInbound(bytes) }
                moved = true
            }
            while let data = try proxy.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let bytes) = data else { continue }
                if client.isActive { try client.writeInbound(bytes) }
                moved = true
            }
        }
    }

    /// The client opens a stream with this request head (pseudo-fields included).
    func request(_ fields: [(String, String)], endStream: Bool = true) throws -> ClientStream {
        let opened = multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(ClientStream.Reader()) }
        }
        loop.run()
        let channel = try opened.wait()
        let stream = ClientStream(channel: channel, reader: try channel.pipeline.syncOperations.handler(type: ClientStream.Reader.self))
        channel.writeAndFlush(HTTP2Frame.FramePayload.headers(.init(headers: HPACKHeaders(fields), endStream: endStream)), promise: nil)
        try deliver()
        return stream
    }

    /// A GET of `path` from the origin.
    func get(_ path: String) throws -> ClientStream {
        try request([(":method", "GET"), (":scheme", "http"), (":authority", "origin.test"), (":path", path)])
    }

    /// The client resets `stream` (RST_STREAM with `code`).
    func reset(_ stream: ClientStream, code: HTTP2ErrorCode = .cancel) throws {
        stream.channel.writeAndFlush(HTTP2Frame.FramePayload.rstStream(code), promise: nil)
        try deliver()
    }

    /// What the proxy wrote to server connection `index`.
    func serverReceived(_ index: Int) throws -> String {
        try servers.received(index)
    }

    /// Server connection `index` sends these bytes.
    func serverSends(_ bytes: String, on index: Int) throws {
        try servers.opened[index].writeInbound(ByteBuffer(string: bytes))
        try deliver()
    }

    /// The client closes its connection.
    func clientCloses() throws {
        try client.close().wait()
        if proxy.isActive { try proxy.close().wait() }
        loop.run()
    }

    func finish() throws {
        if client.isActive { _ = try client.finish(acceptAlreadyClosed: true) }
        if proxy.isActive { _ = try proxy.finish(acceptAlreadyClosed: true) }
        try servers.finish()
    }
}

/// One stream the playbook's client opened, and what came back on it.
struct ClientStream {
    let channel: any Channel
    let reader: Reader

    final class Reader: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        private(set) var headers: [HPACKHeaders] = []
        private(set) var body = ByteBuffer()
        private(set) var ended = false
        private(set) var resetCode: HTTP2ErrorCode?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                headers.append(frame.headers)
                if frame.endStream { ended = true }
            case .data(let frame):
                if case .byteBuffer(var bytes) = frame.data { body.writeBuffer(&bytes) }
                if frame.endStream { ended = true }
            case .rstStream(let code):
                resetCode = code
            default:
                break
            }
        }
    }

    var status: String? { reader.headers.first?.first(name: ":status") }
    var text: String { String(buffer: reader.body) }
}
