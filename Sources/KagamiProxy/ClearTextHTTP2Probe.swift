import NIOCore

/// Finds out whether a server speaks HTTP/2 in clear text (h2c) with prior knowledge, before any
/// request goes out. Kagami opens with the HTTP/2 connection preface; a server that speaks h2c
/// answers with its own preface, a SETTINGS frame (RFC 9113 §3.4), and one that does not
/// answers in HTTP/1.x ("HTTP/1.1 400 …"), closes, or says nothing. The probe sits in front of
/// the HTTP/2 handler, reads the first bytes, and either hands them on and leaves, or settles
/// `false` so the exchange can go in HTTP/1.1 instead.
final class ClearTextHTTP2Probe: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The frame type of SETTINGS, the fourth byte of a frame header.
    private static let settingsFrameType: UInt8 = 0x04

    /// True when the server's first frame was SETTINGS.
    let speaksHTTP2: EventLoopPromise<Bool>
    private let timeout: TimeAmount
    private var received: ByteBuffer?
    private var deadline: Scheduled<Void>?

    init(eventLoop: any EventLoop, timeout: TimeAmount) {
        self.speaksHTTP2 = eventLoop.makePromise()
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = speaksHTTP2
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            promise.succeed(false)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var earlier = received.take() {
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        guard bytes.readableBytes >= 4, let type = bytes.getInteger(at: bytes.readerIndex + 3, as: UInt8.self) else {
            received = bytes
            return
        }
        deadline?.cancel()
        guard type == Self.settingsFrameType else {
            speaksHTTP2.succeed(false)
            return
        }
        speaksHTTP2.succeed(true)
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        speaksHTTP2.succeed(false)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        // Settled already when removed after a SETTINGS frame; otherwise the connection is
        // going away undecided.
        speaksHTTP2.succeed(false)
    }
}
