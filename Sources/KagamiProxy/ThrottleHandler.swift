import KagamiControl
import KagamiFlow
import KagamiRules
import NIOCore

/// Throttling on the wire: the first handler of a pipeline, so it shapes TLS records too. On a
/// server connection, what arrives is the download (the response on its way to the client) and
/// what leaves is the upload (the request); on a client connection, for answers Kagami makes
/// itself, the other way round. Chunks leave at the shaper's instants on event-loop timers (on
/// the loop's own clock), never by blocking. While too much waits, reads stop (incoming) and the
/// handler reports itself not writable (outgoing), so the queues stay bounded. The exchange
/// using the connection sets the profile; nil passes bytes through.
final class ThrottleHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var incoming: ThrottleQueue<EventLoopClock, Never>
    private var outgoing: ThrottleQueue<EventLoopClock, EventLoopPromise<Void>>
    private var incomingTimer: Scheduled<Void>?
    private var outgoingTimer: Scheduled<Void>?
    private var profile: ThrottleProfile?
    private var random = SystemRandomNumberGenerator()
    private var context: ChannelHandlerContext?
    private var readPending = false
    /// Events from the peer that must wait until the bytes before them have been released.
    private var heldInactive = false
    private var heldInputClosed = false
    /// On a server connection: the server closing its side ends a close-delimited response
    /// (HTTP/1.0), so that end waits behind the bytes before it instead of closing the channel
    /// (and with it this handler's timers) while they are still queued.
    var holdsEndOfInput = false
    private var heldError: (any Error)?
    /// Set once a message was lost or the connection is closing: nothing more goes through.
    private var failed = false
    private var closing = false

    /// False while the outgoing queue is full: whoever writes should wait.
    var isWritable: Bool { !outgoing.isPaused }

    /// `incoming`: which way what arrives goes, `.download` on a server connection.
    init(incoming direction: ThrottleDirection = .download) {
        incoming = ThrottleQueue(clock: EventLoopClock(), direction: direction)
        outgoing = ThrottleQueue(clock: EventLoopClock(), direction: direction == .download ? .upload : .download)
    }

    /// Shapes what follows with `profile` (nil: unshaped). A degraded period (stability) is
    /// drawn here, once per exchange.
    func shape(_ profile: ThrottleProfile?) {
        self.profile = profile
        let quality = profile.map { ThrottleConditions(profile: $0).quality(using: &random) } ?? 1
        incoming.shape(profile, quality: quality)
        outgoing.shape(profile, quality: quality)
        failed = closing
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if holdsEndOfInput {
            _ = context.channel.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard holdsEndOfInput, let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if incoming.isEmpty {
            endInput(context: context)
        } else {
            heldInputClosed = true
        }
    }

    /// The server's side is closed and everything it sent is released: the decoder reads the
    /// end of a close-delimited body, then the connection closes as it would have.
    private func endInput(context: ChannelHandlerContext) {
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    // MARK: Incoming

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard incoming.isShaping || !incoming.isEmpty else {
            context.fireChannelRead(data)
            return
        }
        guard !failed else { return }
        incoming.enqueue(unwrapInboundIn(data), tag: nil, now: Self.now(context))
        releaseIncoming(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Shaped bytes get their read-complete as they are released.
        if incoming.isEmpty { context.fireChannelReadComplete() }
    }

    func read(context: ChannelHandlerContext) {
        if incoming.isPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelOutgoingQueue(ChannelError.ioOnClosedChannel)
        if incoming.isEmpty {
            context.fireChannelInactive()
        } else {
            heldInactive = true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if incoming.isEmpty {
            context.fireErrorCaught(error)
        } else if heldError == nil {
            heldError = error
        }
    }

    private func releaseIncoming(context: ChannelHandlerContext) {
        incomingTimer?.cancel()
        incomingTimer = nil
        let (chunks, lost) = incoming.takeDue(at: Self.now(context), using: &random)
        for chunk in chunks {
            context.fireChannelRead(wrapInboundOut(chunk.bytes))
            // Whatever ran on that read may have closed the connection.
            guard self.context != nil, !failed else { return }
        }
        if !chunks.isEmpty { context.fireChannelReadComplete() }
        guard self.context != nil, !failed else { return }
        if lost {
            lose(incoming.direction, context: context)
            return
        }
        if !incoming.isPaused, readPending {
            readPending = false
            context.read()
        }
        if let next = incoming.nextRelease {
            incomingTimer = schedule(at: next, context: context) { handler, context in handler.releaseIncoming(context: context) }
        } else {
            deliverHeldEvents(context: context)
        }
    }

    private func deliverHeldEvents(context: ChannelHandlerContext) {
        if let error = heldError {
            heldError = nil
            context.fireErrorCaught(error)
        }
        if heldInputClosed {
            heldInputClosed = false
            endInput(context: context)
        }
        if heldInactive {
            heldInactive = false
            context.fireChannelInactive()
        }
    }

    // MARK: Outgoing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard outgoing.isShaping || !outgoing.isEmpty, case .byteBuffer(let buffer) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        guard !failed else {
            promise?.fail(ThrottleLoss(profile: profile, direction: outgoing.direction))
            return
        }
        let wasPaused = outgoing.isPaused
        outgoing.enqueue(buffer, tag: promise, now: Self.now(context))
        releaseOutgoing(context: context)
        if !wasPaused, outgoing.isPaused { context.fireChannelWritabilityChanged() }
    }

    private func releaseOutgoing(context: ChannelHandlerContext) {
        outgoingTimer?.cancel()
        outgoingTimer = nil
        let wasPaused = outgoing.isPaused
        let (chunks, lost) = outgoing.takeDue(at: Self.now(context), using: &random)
        for chunk in chunks {
            context.write(wrapOutboundOut(.byteBuffer(chunk.bytes)), promise: chunk.tag)
        }
        if !chunks.isEmpty { context.flush() }
        guard self.context != nil, !failed else { return }
        if lost {
            lose(outgoing.direction, context: context)
            return
        }
        if let next = outgoing.nextRelease {
            outgoingTimer = schedule(at: next, context: context) { handler, context in handler.releaseOutgoing(context: context) }
        }
        if wasPaused, !outgoing.isPaused { context.fireChannelWritabilityChanged() }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Whoever closes no longer wants what is waiting.
        closing = true
        failed = true
        cancelTimers()
        _ = incoming.removeAll()
        cancelOutgoingQueue(ChannelError.ioOnClosedChannel)
        if heldInactive {
            heldInactive = false
            context.fireChannelInactive()
        }
        context.close(mode: mode, promise: promise)
    }

    // MARK: Timers and loss

    private static func now(_ context: ChannelHandlerContext) -> EventLoopClock.Instant {
        EventLoopClock.Instant(context.eventLoop.now)
    }

    private func schedule(
        at instant: EventLoopClock.Instant, context: ChannelHandlerContext,
        _ release: @escaping (ThrottleHandler, ChannelHandlerContext) -> Void
    ) -> Scheduled<Void> {
        context.eventLoop.assumeIsolated().scheduleTask(deadline: instant.deadline) { [weak self] in
            guard let self, let context = self.context else { return }
            release(self, context)
        }
    }

    private func cancelTimers() {
        incomingTimer?.cancel()
        incomingTimer = nil
        outgoingTimer?.cancel()
        outgoingTimer = nil
    }

    private func cancelOutgoingQueue(_ error: any Error) {
        outgoingTimer?.cancel()
        outgoingTimer = nil
        for chunk in outgoing.removeAll() { chunk.tag?.fail(error) }
    }

    /// The network lost a message: the connection fails the way a dropped one does, after the
    /// current call returns (the exchange may be in the middle of sending).
    private func lose(_ direction: ThrottleDirection, context: ChannelHandlerContext) {
        failed = true
        cancelTimers()
        _ = incoming.removeAll()
        let error = ThrottleLoss(profile: profile, direction: direction)
        cancelOutgoingQueue(error)
        context.eventLoop.assumeIsolated().execute { [weak self] in
            guard let self, let context = self.context else { return }
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}

/// A message the throttling profile's reliability lost.
struct ThrottleLoss: Error, CustomStringConvertible {
    var profile: ThrottleProfile?
    var direction: ThrottleDirection

    var description: String {
        let what = direction == .download ? "the response" : "the request"
        guard let profile else { return "throttling lost \(what)" }
        return "throttling lost \(what) (profile \"\(profile.name)\", reliability \(Self.percent(profile.reliability))%)"
    }

    private static func percent(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension ThrottleHandler {
    /// Runs `write` with what it writes to the client shaped by `profile`, for answers Kagami
    /// makes itself (Map Local, 403). The handler joins the client's pipeline the first time and
    /// stays, unshaped between such answers; the bytes written keep their release instants.
    static func shapingClientWrites(_ profile: ThrottleProfile?, pipeline: ChannelPipeline.SynchronousOperations, _ write: () -> Void) {
        guard let profile else { return write() }
        let handler: ThrottleHandler
        if let existing = try? pipeline.handler(type: ThrottleHandler.self) {
            handler = existing
        } else {
            handler = ThrottleHandler(incoming: .upload)
            do {
                try pipeline.addHandler(handler, position: .first)
            } catch {
                return write()
            }
        }
        handler.shape(profile)
        write()
        handler.shape(nil)
    }
}

// MARK: CONNECT tunnels

extension ThrottleHandler {
    /// What a tunnel's CONNECT is matched as: the host and port, the path unknown.
    static func tunnelRequest(_ target: ProxyTarget) -> FlowRequest {
        FlowRequest(method: "CONNECT", scheme: "https", host: target.host, port: target.port, target: "/")
    }

    /// Opens a tunnel's server connection, after the profile's latency when it is throttled.
    static func connect(
        after profile: ThrottleProfile?, on loop: any EventLoop, _ connect: @escaping () -> EventLoopFuture<any Channel>
    ) -> EventLoopFuture<any Channel> {
        guard let profile, profile.latencyMs > 0 else { return connect() }
        return loop.assumeIsolated().flatScheduleTask(deadline: loop.now + TimeAmount(profile.latency), connect).futureResult
    }

    /// Shapes a relayed tunnel on its server connection (bytes as they are, TLS or not) and
    /// returns its recorder with the throttling noted.
    static func throttle(tunnel serverChannel: any Channel, profile: ThrottleProfile?, recorder: FlowRecorder) -> FlowRecorder {
        guard let profile else { return recorder }
        var recorder = recorder
        recorder.addRuleApplications([RulePipeline.throttleApplication(profile)])
        let handler = ThrottleHandler()
        let pipeline = serverChannel.pipeline.syncOperations
        do {
            try pipeline.addHandler(handler, position: .first)
            try pipeline.handler(type: TunnelRelayHandler.self).throttle = handler
        } catch {
            return recorder
        }
        handler.shape(profile)
        return recorder
    }
}
