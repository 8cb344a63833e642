import KagamiCertificates
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOSSL
import X509

/// What a server connection reports to the exchange using it.
protocol UpstreamDelegate: AnyObject {
    func upstreamReceived(_ part: HTTPClientResponsePart)
    func upstreamReadComplete()
    func upstreamWritabilityChanged(isWritable: Bool)
    func upstreamFailed(_ error: any Error)
    func upstreamClosed()
}

/// The last handler on a server connection: hands response parts to the exchange that owns
/// the connection, and holds reads back while the client can't take more (backpressure).
final class UpstreamHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    weak var delegate: (any UpstreamDelegate)?
    /// Called once when the connection closes, so an idle pool can forget it.
    var onClose: (() -> Void)?
    /// Why the connection closed, when something other than the server's own close did it (the
    /// HTTP/2 connection a stream was on failing): reported to the exchange instead of a close.
    var closeReason: (() -> (any Error)?)?
    /// Present once an exchange on this connection was throttled; its queue counts as unwritable.
    weak var throttle: ThrottleHandler?
    private var reads = ReadGate()
    private var context: ChannelHandlerContext?
    /// A request went out and its response has not ended: Kagami writes nothing more to the
    /// server until it has, so what the server sent meanwhile is acknowledged at once.
    private var awaitingResponseEnd = false

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let delegate else {
            // Bytes on an idle connection: the server is confused or closing; don't reuse it.
            context.close(promise: nil)
            return
        }
        let part = unwrapInboundIn(data)
        if case .end = part { awaitingResponseEnd = false }
        delegate.upstreamReceived(part)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if awaitingResponseEnd { context.channel.acknowledgeReceivedBytes() }
        delegate?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        delegate?.upstreamWritabilityChanged(isWritable: context.channel.isWritable && (throttle?.isWritable ?? true))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let delegate = self.delegate
        self.delegate = nil
        delegate?.upstreamFailed(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let delegate = self.delegate
        self.delegate = nil
        if let reason = closeReason?() {
            delegate?.upstreamFailed(reason)
        } else {
            delegate?.upstreamClosed()
        }
        onClose?()
        onClose = nil
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit() { context.read() }
    }

    func pauseReads() { reads.close() }

    func resumeReads() {
        if reads.open(), let context { context.read() }
    }

    func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>? = nil) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if case .head = part { awaitingResponseEnd = true }
        context.write(wrapOutboundOut(part), promise: promise)
    }

    func flush() { context?.flush() }
}

/// A connection to a server, on the event loop of the client connections that use it.
final class UpstreamConnection {
    let key: UpstreamPool.Key
    let channel: any Channel
    let handler: UpstreamHandler
    /// True when it served an earlier exchange (for a stream: when its connection did).
    var isReused = false
    /// One stream of an HTTP/2 connection (`UpstreamHTTP2Session`): used once, never pooled.
    var isStream = false
    /// How long its TLS handshake took (TLS connections).
    var handshakeDuration: TimeAmount?
    /// Closes the connection once it has stayed idle in the pool too long (see `UpstreamPool`).
    var idleTimer: MovingDeadlineTimer?
    /// When it went back to the pool; nil while an exchange uses it.
    var idleSince: NIODeadline?

    init(key: UpstreamPool.Key, channel: any Channel, handler: UpstreamHandler) {
        self.key = key
        self.channel = channel
        self.handler = handler
    }

    /// Worked out once the handshake is done: every exchange on the connection reports the
    /// same, and hashing and parsing the certificate per exchange cost a third of the CPU.
    private var settledTLSDetails: TLSInfo?

    /// The server's certificate and TLS version, for HTTPS connections.
    func tlsDetails() -> TLSInfo? {
        if let settledTLSDetails { return settledTLSDetails }
        // A stream's TLS is its connection's.
        let connection = channel.parent ?? channel
        guard key.tls, let handler = try? connection.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) else { return nil }
        var info = TLSInfo(version: handler.tlsVersion.map(TLSNames.version))
        defer { if info.version != nil { settledTLSDetails = info } }
        if let peer = handler.peerCertificate, let der = try? peer.toDERBytes() {
            info.certificateFingerprintSHA256 = CertificateAuthority.fingerprint(der: der)
            if let certificate = try? Certificate(derEncoded: der) {
                info.certificateSubject = certificate.subject.description
                info.certificateIssuer = certificate.issuer.description
            }
        }
        return info
    }

    private var settledRemoteAddress: String?

    /// The server's address as each exchange on the connection records it, written once.
    var remoteAddress: String? {
        if let settledRemoteAddress { return settledRemoteAddress }
        settledRemoteAddress = channel.remoteAddress.map { $0.authorityText ?? "\($0)" }
        return settledRemoteAddress
    }
}
