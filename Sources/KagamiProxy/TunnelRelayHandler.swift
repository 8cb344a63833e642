import KagamiFlow
import NIOCore

/// Joins two connections byte for byte (a CONNECT tunnel, an upgraded connection). Reads on one
/// side wait while the other side can't take more, so a fast sender can't fill memory. On a
/// WebSocket connection each side's bytes go through the `WebSocketRelay`, which passes them on
/// (and, where a message tool acts, messages of its own) and reads messages out of them.
final class TunnelRelayHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: TunnelRelayHandler?
    private var context: ChannelHandlerContext?
    private var readPending = false
    private var behindCheckScheduled = false
    private(set) var bytesRead = 0
    private(set) var isClosed = false
    /// Called once, when the first side closes: it records the connection and then calls what
    /// it is given, which lets the other side close — so a client sees its tunnel or socket end
    /// only once the session keeps it.
    var onFinished: ((_ then: @escaping @Sendable () -> Void) -> Void)?
    /// Throttling on this side's connection: while its queue is full, this side can't take more.
    weak var throttle: ThrottleHandler?
    /// The WebSocket relay, and which direction this side's reads are.
    var websocket: (WebSocketRelay, WebSocketMessage.Direction)?

    static func join(_ a: TunnelRelayHandler, _ b: TunnelRelayHandler) {
        a.partner = b
        b.partner = a
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if !context.channel.isActive { isClosed = true }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    /// Writes bytes that are not relayed (the CONNECT reply) straight to this side.
    func writeRaw(_ buffer: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    /// Writes bytes the other side read (or the WebSocket relay made) to this side.
    func write(_ buffer: ByteBuffer, flush: Bool) {
        guard let context else { return }
        if buffer.readableBytes > 0 { context.write(wrapOutboundOut(buffer), promise: nil) }
        if flush { context.flush() }
    }

    /// Joins both sides of a WebSocket through `relay`: the client's reads are its sent messages.
    static func join(client: TunnelRelayHandler, server: TunnelRelayHandler, through relay: WebSocketRelay) {
        client.websocket = (relay, .send)
        server.websocket = (relay, .receive)
        relay.passOn = { [weak client, weak server] buffer, direction, flush in
            (direction == .send ? server : client)?.write(buffer, flush: flush)
        }
        relay.resumeReading = { [weak client, weak server] direction in
            (direction == .send ? client : server)?.resumeReads()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        bytesRead += buffer.readableBytes
        if let (relay, direction) = websocket {
            relay.read(buffer, from: direction)
        } else {
            partner?.context?.write(wrapOutboundOut(buffer), promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The messages go to the session before their bytes go out to the peer.
        websocket?.0.flush()
        partner?.context?.flush()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if isWritable { partner?.resumeReads() }
        context.fireChannelWritabilityChanged()
    }

    /// Reads again if a read waited (for the other side, or for a held WebSocket message).
    func resumeReads() {
        if readPending, let context {
            readPending = false
            read(context: context)
        }
    }

    private var isWritable: Bool { (context?.channel.isWritable ?? true) && (throttle?.isWritable ?? true) }
    private var partnerIsWritable: Bool { partner?.isWritable ?? true }

    func read(context: ChannelHandlerContext) {
        if let (relay, direction) = websocket, relay.isWaiting(direction) {
            // A message this side sent is held: what it sends next waits behind it.
            readPending = true
            return
        }
        if let (relay, _) = websocket, relay.isBehind {
            // The session is behind the messages: look again shortly, rather than let what
            // waits to be written grow with the socket.
            guard !behindCheckScheduled else { return }
            behindCheckScheduled = true
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(2)) { [weak self] in
                guard let self, let context = self.context else { return }
                self.behindCheckScheduled = false
                self.read(context: context)
            }
            return
        }
        if partnerIsWritable {
            context.read()
        } else {
            readPending = true
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        let finished = onFinished ?? partner?.onFinished
        onFinished = nil
        partner?.onFinished = nil
        if let partner, let partnerContext = partner.context, !partner.isClosed {
            // Let what is already queued for the other side go out, then close it.
            let loop = context.eventLoop
            let other = NIOLoopBound(partnerContext, eventLoop: loop)
            let closeOther: @Sendable () -> Void = {
                loop.execute {
                    let partnerContext = other.value
                    partnerContext.writeAndFlush(NIOAny(ByteBuffer())).assumeIsolated().whenComplete { _ in
                        partnerContext.close(promise: nil)
                    }
                }
            }
            if let finished { finished(closeOther) } else { closeOther() }
        } else {
            finished?({})
        }
        context.fireChannelInactive()
    }

    /// This side sent all it will (a half-close): the other side is told the same once what
    /// this side sent has gone out, and may still answer; the tunnel ends when that side closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard let partnerContext = partner?.context, !(partner?.isClosed ?? true) else {
            context.close(promise: nil)
            return
        }
        websocket?.0.flush()
        partnerContext.flush()
        let promise = partnerContext.eventLoop.makePromise(of: Void.self)
        partnerContext.close(mode: .output, promise: promise)
        // A side that can't half-close (TLS without it) closes whole, as before.
        promise.futureResult.assumeIsolated().whenFailure { _ in partnerContext.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
