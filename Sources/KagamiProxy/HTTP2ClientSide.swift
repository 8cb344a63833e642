import NIOCore
import NIOHTTP1
import NIOHTTP2

/// HTTP/2 with a client (RFC 9113): after ALPN chose `h2` on an intercepted TLS connection, or
/// when a plain connection opens with the connection preface (h2c with prior knowledge). Each
/// stream is one exchange: `HTTP2FramePayloadToHTTP1ServerCodec` turns its frames into the
/// request and response parts a `ClientConnectionHandler` on that stream reads and writes, so
/// rules, breakpoints, throttling and recording act on a stream as on an HTTP/1.1 exchange.
/// Flow control is per stream: a stream whose handler stops reading gets no more window.
enum HTTP2ClientSide {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (RFC 9113 §3.4).
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Streams a client may open at once on one connection.
    static let maximumConcurrentStreams = 256

    /// Adds HTTP/2 to `pipeline` (from its current end): the connection handler, the stream
    /// multiplexer, and per stream the codec and an exchange handler.
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations, channel: any Channel,
        settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin?
    ) throws {
        // Streams come and go on it: never closed to make room for another client.
        settings.connections.busy(channel)
        let resets = StreamResets(hooks: settings.hooks, budget: settings.budget, connection: channel)
        let shared = NIOLoopBound((pool: pool, origin: origin, resets: resets), eventLoop: channel.eventLoop)
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
        ]
        var streams = NIOHTTP2Handler.StreamConfiguration()
        // A stream's window: what a client may send ahead before its handler reads.
        streams.targetWindowSize = 1 << 20
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connection, streamConfiguration: streams, position: .last
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                let (pool, origin, resets) = shared.value
                let handlers = stream.pipeline.syncOperations
                try handlers.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try handlers.addHandler(ClientConnectionHandler(settings: settings, pool: pool, origin: origin, streamResets: resets))
            }
        }
        // A connection error (bad HPACK, a frame that breaks the protocol) has been answered
        // with GOAWAY by then: the connection closes.
        try pipeline.addHandler(HTTP2ConnectionErrorHandler())
        try pipeline.addHandler(StreamResetsCloser(resets))
    }
}

/// Closes an HTTP/2 connection on an error the connection handler reported (it sent GOAWAY
/// first), instead of leaving it open and idle; `failed` hears the error first.
final class HTTP2ConnectionErrorHandler: ChannelInboundHandler {
    typealias InboundIn = Never
    private let failed: ((any Error) -> Void)?

    init(failed: ((any Error) -> Void)? = nil) {
        self.failed = failed
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream's error (answered with RST_STREAM) ends that stream only.
        if error is NIOHTTP2Errors.StreamError { return }
        failed?(error)
        context.close(promise: nil)
    }
}

/// The first handler of a plain client connection: a client that opens with the HTTP/2
/// preface gets HTTP/2 (h2c with prior knowledge: a reverse proxy in front of a gRPC service,
/// an h2c client inside a CONNECT tunnel); any other gets the HTTP/1.1 handlers. Either way
/// they are added behind this handler once the first bytes say which, and it leaves.
final class HTTP2PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let settings: ConnectionContext
    private let pool: any UpstreamSource
    private let origin: InterceptedOrigin?
    private var buffered: ByteBuffer?

    init(settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin?) {
        self.settings = settings
        self.pool = pool
        self.origin = origin
    }

    /// A client that sends nothing is closed after the client idle timeout, as one that sends
    /// an incomplete request head is.
    private var idleTimer: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: settings.clientIdleTimeout) {
            bound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        buffered.gather(unwrapInboundIn(data))
        guard let bytes = buffered else { return }
        let seen = bytes.readableBytesView.prefix(HTTP2ClientSide.preface.count)
        let isPreface = seen.elementsEqual(HTTP2ClientSide.preface.prefix(seen.count))
        // A prefix of the preface so far: wait for the rest.
        if isPreface, seen.count < HTTP2ClientSide.preface.count { return }
        let pipeline = context.pipeline.syncOperations
        do {
            if isPreface {
                try HTTP2ClientSide.configure(pipeline, channel: context.channel, settings: settings, pool: pool, origin: origin)
            } else {
                try ProxyServer.addHTTP1Handlers(pipeline, settings: settings, pool: pool, origin: origin)
            }
        } catch {
            context.close(promise: nil)
            return
        }
        buffered = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        pipeline.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        buffered = nil
        context.fireChannelInactive()
    }

    /// The client half-closed before saying which protocol it speaks: nothing to answer.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.closeOnInputClosed(event)
    }
}

extension ChannelHandlerContext {
    /// Closes the channel when `event` says the client shut its side; passes any other event on.
    func closeOnInputClosed(_ event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            close(promise: nil)
        } else {
            fireUserInboundEventTriggered(event)
        }
    }
}

extension HTTP2ErrorCode {
    /// The name RFC 9113 §7 gives the code (`CANCEL`, `PROTOCOL_ERROR`…), or its number.
    var rfcName: String {
        switch self {
        case .noError: "NO_ERROR"
        case .protocolError: "PROTOCOL_ERROR"
        case .internalError: "INTERNAL_ERROR"
        case .flowControlError: "FLOW_CONTROL_ERROR"
        case .settingsTimeout: "SETTINGS_TIMEOUT"
        case .streamClosed: "STREAM_CLOSED"
        case .frameSizeError: "FRAME_SIZE_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        case .cancel: "CANCEL"
        case .compressionError: "COMPRESSION_ERROR"
        case .connectError: "CONNECT_ERROR"
        case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: "INADEQUATE_SECURITY"
        case .http11Required: "HTTP_1_1_REQUIRED"
        default: "0x\(String(networkCode, radix: 16))"
        }
    }
}
