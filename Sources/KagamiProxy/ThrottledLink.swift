import KagamiRules
import NIOCore

/// Throttling on the wire of a server connection: the first handler of its pipeline, so it
/// shapes the bytes the server sends (download: the response on its way to the client) and
/// the bytes sent to it (upload: the request), TLS records included. Chunks leave at the
/// shaper's instants on event-loop timers, never by blocking. While too much waits, reads from
/// the server stop (download) and the link reports itself not writable (upload), so the queue
/// stays bounded. The exchange using the connection sets the profile; nil passes bytes through.
final class ThrottledLink: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var download = ThrottleQueue<ContinuousClock, Never>(clock: ContinuousClock(), direction: .download)
    private var upload = ThrottleQueue<ContinuousClock, EventLoopPromise<Void>>(clock: ContinuousClock(), direction: .upload)
    private var downloadTimer: Scheduled<Void>?
    private var uploadTimer: Scheduled<Void>?
    private var profile: ThrottleProfile?
    private var random = SystemRandomNumberGenerator()
    private var context: ChannelHandlerContext?
    private var readPending = false
    /// Events from the server that must wait until the bytes before them have been released.
    private var heldInactive = false
    private var heldError: (any Error)?
    /// Set once a message was lost or the connection is closing: nothing more goes through.
    private var failed = false
    private var closing = false

    /// False while the upload queue is full: the request body should wait.
    var isWritable: Bool { !upload.isPaused }

    /// Shapes what follows with `profile` (nil: unshaped). A degraded period (stability) is
    /// drawn here, once per exchange.
    func shape(_ profile: ThrottleProfile?) {
        self.profile = profile
        let quality = profile.map { ThrottleConditions(profile: $0).quality(using: &random) } ?? 1
        download.shape(profile, quality: quality)
        upload.shape(profile, quality: quality)
        failed = closing
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    // MARK: Download

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard download.isShaping || !download.isEmpty else {
            context.fireChannelRead(data)
            return
        }
        guard !failed else { return }
        download.enqueue(unwrapInboundIn(data), tag: nil, now: .now)
        releaseDownload(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Shaped bytes get their read-complete as they are released.
        if download.isEmpty { context.fireChannelReadComplete() }
    }

    func read(context: ChannelHandlerContext) {
        if download.isPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelUploadQueue(ChannelError.ioOnClosedChannel)
        if download.isEmpty {
            context.fireChannelInactive()
        } else {
            heldInactive = true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if download.isEmpty {
            context.fireErrorCaught(error)
        } else if heldError == nil {
            heldError = error
        }
    }

    private func releaseDownload(context: ChannelHandlerContext) {
        downloadTimer?.cancel()
        downloadTimer = nil
        let (chunks, lost) = download.takeDue(at: .now, using: &random)
        for chunk in chunks {
            context.fireChannelRead(wrapInboundOut(chunk.bytes))
            // Whatever ran on that read may have closed the connection.
            guard self.context != nil, !failed else { return }
        }
        if !chunks.isEmpty { context.fireChannelReadComplete() }
        guard self.context != nil, !failed else { return }
        if lost {
            lose(.download, context: context)
            return
        }
        if !download.isPaused, readPending {
            readPending = false
            context.read()
        }
        if let next = download.nextRelease {
            downloadTimer = schedule(at: next, context: context) { link, context in link.releaseDownload(context: context) }
        } else {
            deliverHeldEvents(context: context)
        }
    }

    private func deliverHeldEvents(context: ChannelHandlerContext) {
        if let error = heldError {
            heldError = nil
            context.fireErrorCaught(error)
        }
        if heldInactive {
            heldInactive = false
            context.fireChannelInactive()
        }
    }

    // MARK: Upload

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard upload.isShaping || !upload.isEmpty, case .byteBuffer(let buffer) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        guard !failed else {
            promise?.fail(ThrottleLoss(profile: profile, direction: .upload))
            return
        }
        let wasPaused = upload.isPaused
        upload.enqueue(buffer, tag: promise, now: .now)
        releaseUpload(context: context)
        if !wasPaused, upload.isPaused { context.fireChannelWritabilityChanged() }
    }

    private func releaseUpload(context: ChannelHandlerContext) {
        uploadTimer?.cancel()
        uploadTimer = nil
        let wasPaused = upload.isPaused
        let (chunks, lost) = upload.takeDue(at: .now, using: &random)
        for chunk in chunks {
            context.write(wrapOutboundOut(.byteBuffer(chunk.bytes)), promise: chunk.tag)
        }
        if !chunks.isEmpty { context.flush() }
        guard self.context != nil, !failed else { return }
        if lost {
            lose(.upload, context: context)
            return
        }
        if let next = upload.nextRelease {
            uploadTimer = schedule(at: next, context: context) { link, context in link.releaseUpload(context: context) }
        }
        if wasPaused, !upload.isPaused { context.fireChannelWritabilityChanged() }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Whoever closes no longer wants what is waiting.
        closing = true
        failed = true
        cancelTimers()
        _ = download.removeAll()
        cancelUploadQueue(ChannelError.ioOnClosedChannel)
        if heldInactive {
            heldInactive = false
            context.fireChannelInactive()
        }
        context.close(mode: mode, promise: promise)
    }

    // MARK: Timers and loss

    private func schedule(
        at instant: ContinuousClock.Instant, context: ChannelHandlerContext,
        _ release: @escaping (ThrottledLink, ChannelHandlerContext) -> Void
    ) -> Scheduled<Void> {
        let delay = max(ContinuousClock.now.duration(to: instant), .zero)
        return context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [weak self] in
            guard let self, let context = self.context else { return }
            release(self, context)
        }
    }

    private func cancelTimers() {
        downloadTimer?.cancel()
        downloadTimer = nil
        uploadTimer?.cancel()
        uploadTimer = nil
    }

    private func cancelUploadQueue(_ error: any Error) {
        uploadTimer?.cancel()
        uploadTimer = nil
        for chunk in upload.removeAll() { chunk.tag?.fail(error) }
    }

    /// The network lost a message: the connection fails the way a dropped one does, after the
    /// current call returns (the exchange may be in the middle of sending).
    private func lose(_ direction: ThrottleDirection, context: ChannelHandlerContext) {
        failed = true
        cancelTimers()
        _ = download.removeAll()
        let error = ThrottleLoss(profile: profile, direction: direction)
        cancelUploadQueue(error)
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
