import KagamiControl
import Foundation
import KagamiFlow
import NIOCore
import NIOSSL
import NIOTLS

/// Who the client of an intercepted tunnel thinks it is talking to.
struct InterceptedOrigin {
    var scheme: String
    var host: String
    var port: Int
    /// The client side of the TLS connection; nil for plain HTTP inside the tunnel.
    var tls: ClientTLSState?
}

/// What was negotiated with the client on an intercepted connection.
final class ClientTLSState {
    var serverName: String?
    var version: String?
    var alpn: String?
    var handshakeCompleted = false
    /// The description of a plaintext alert the client sent during the handshake.
    var clientAlert: UInt8?
}

/// First handler of an intercepted tunnel: looks at the client's first bytes, then builds the
/// rest of the pipeline — TLS termination with a certificate for the SNI name (or the CONNECT
/// host) followed by HTTP, or HTTP directly when the client speaks plain HTTP in the tunnel.
final class TunnelProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let target: ProxyTarget
    private let settings: ConnectionContext
    private let pool: any UpstreamSource
    private let recordFailure: (FlowError) -> Void
    private var buffered: ByteBuffer?
    private var context: ChannelHandlerContext?

    init(target: ProxyTarget, settings: ConnectionContext, pool: any UpstreamSource, recordFailure: @escaping (FlowError) -> Void) {
        self.target = target
        self.settings = settings
        self.pool = pool
        self.recordFailure = recordFailure
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes bytes straight to the client (the CONNECT reply).
    func writeRaw(_ buffer: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        buffered.gather(unwrapInboundIn(data))
        guard let buffered else { return }
        switch TLSClientHello.inspect(Array(buffered.readableBytesView.prefix(5 + 16_384 + 2048))) {
        case .needMoreBytes:
            return
        case .notTLS:
            configure(tls: false, serverName: nil, context: context)
        case .tls(let serverName):
            configure(tls: true, serverName: serverName, context: context)
        }
    }

    private func configure(tls: Bool, serverName: String?, context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        do {
            var origin = InterceptedOrigin(scheme: tls ? "https" : "http", host: target.host, port: target.port)
            if tls, let identities = settings.identities {
                let state = ClientTLSState()
                state.serverName = serverName
                let name = serverName ?? target.host
                let tlsHandler = NIOSSLServerHandler(context: try identities.serverContext(for: name))
                try pipeline.addHandler(ClientTLSAlertReader(state: state))
                try pipeline.addHandler(tlsHandler)
                try pipeline.addHandler(ClientTLSObserver(state: state, host: name, tlsHandler: tlsHandler, recordFailure: recordFailure))
                origin.tls = state
                // HTTP/2 or HTTP/1.1, as the client and Kagami agree by ALPN. Over TLS, HTTP/2
                // is chosen by ALPN only (RFC 9113 §3.3): no preface to sniff for, and no
                // sniffer's timer to set and cancel on every connection.
                let shared = NIOLoopBound((pool: pool, origin: origin), eventLoop: context.eventLoop)
                let settings = settings
                try pipeline.addHandler(ApplicationProtocolNegotiationHandler { result, channel in
                    channel.eventLoop.makeCompletedFuture {
                        let (pool, origin) = shared.value
                        let handlers = channel.pipeline.syncOperations
                        if case .negotiated("h2") = result {
                            try HTTP2ClientSide.configure(handlers, channel: channel, settings: settings, pool: pool, origin: origin)
                        } else {
                            try ProxyServer.addHTTP1Handlers(handlers, settings: settings, pool: pool, origin: origin)
                        }
                    }
                })
            } else {
                try ProxyServer.addHTTPHandlers(pipeline, settings: settings, pool: pool, origin: origin)
            }
        } catch {
            recordFailure(FlowError(.tlsFailure, "could not intercept \(target.authority): \(error)"))
            context.close(promise: nil)
            return
        }
        if let buffered {
            self.buffered = nil
            context.fireChannelRead(wrapInboundOut(buffered))
        }
        pipeline.removeHandler(context: context, promise: nil)
    }
}

/// Sits behind the TLS handler on an intercepted connection: notes what was negotiated, records
/// a client that refused Kagami's certificate (it does not trust the CA, or pins), and closes a
/// connection Kagami ends without keeping it, or its TLS state, longer than the client needs.
final class ClientTLSObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer

    /// How long a connection Kagami closed waits for the client to close its side (NIOSSL's
    /// default shutdown timeout, which this wait replaces).
    static let closeTimeout = TimeAmount.seconds(5)

    private let state: ClientTLSState
    private let host: String
    private let tlsHandler: NIOSSLServerHandler
    private let recordFailure: (FlowError) -> Void
    private var failureRecorded = false
    /// Kagami has asked to close the connection.
    private var closing = false
    /// The client has closed its side (a FIN).
    private var clientLeft = false
    /// Closes the connection if the client has not closed its side in `closeTimeout`.
    private var giveUp: Scheduled<Void>?

    init(state: ClientTLSState, host: String, tlsHandler: NIOSSLServerHandler, recordFailure: @escaping (FlowError) -> Void) {
        self.state = state
        self.host = host
        self.tlsHandler = tlsHandler
        self.recordFailure = recordFailure
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        giveUp?.cancel()
        giveUp = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            state.handshakeCompleted = true
            state.alpn = negotiated
            state.version = tlsHandler.tlsVersion.map(TLSNames.version)
            // BoringSSL holds its session tickets until Kagami's first write: nothing goes back
            // to a client that has just sent its Finished, and a client without TCP_NODELAY holds
            // its request until that Finished is acknowledged.
            context.channel.acknowledgeReceivedBytes()
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            clientLeft = true
            if closing { closeUnderTLS(context: context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !state.handshakeCompleted {
            let reason = state.clientAlert.map(TLSNames.alert) ?? TLSNames.reason(error)
            fail("client rejected the certificate for \(host): \(reason) (does it trust Kagami's CA? does it pin certificates?)")
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        giveUp?.cancel()
        giveUp = nil
        if !state.handshakeCompleted {
            fail("client closed the connection during the TLS handshake for \(host) (it may not trust Kagami's CA, or it pins certificates)")
        }
        context.fireChannelInactive()
    }

    /// Kagami closing: the client gets a close_notify after everything Kagami wrote, and the
    /// connection closes once the client has closed its side, as a FIN (most clients, once they
    /// have read the response) or its own close_notify, or after `closeTimeout`.
    ///
    /// The TLS handler is asked to close only its output, not the whole connection: closing the
    /// whole connection, it would wait for the client's close_notify under a timer of its own,
    /// and when the connection closes another way (the client's FIN, since the proxy allows
    /// half-closed clients) that timer is not cancelled and keeps the handler, its buffers and its
    /// BoringSSL connection (about 35 KB) for its 5 seconds: hundreds of megabytes at a thousand
    /// new connections a second. The wait here is cancelled when the connection closes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        if let promise { context.channel.closeFuture.cascade(to: promise) }
        guard !closing else { return }
        closing = true
        if !context.channel.isActive {
            context.close(mode: .all, promise: nil)
        } else if clientLeft {
            closeUnderTLS(context: context, sendingCloseNotify: true)
        } else if let tlsContext = try? context.pipeline.syncOperations.context(handler: tlsHandler) {
            // Set before the close, which may end the connection at once (and cancel it).
            let bound = NIOLoopBound(tlsContext, eventLoop: context.eventLoop)
            giveUp = context.eventLoop.scheduleTask(in: Self.closeTimeout) {
                bound.value.close(mode: .all, promise: nil)
            }
            context.close(mode: .output, promise: nil)
        } else {
            context.close(mode: .all, promise: nil)
        }
    }

    /// Closes the socket under the TLS handler once what Kagami wrote has gone out, the
    /// close_notify first when `sendingCloseNotify` (nothing more can come from this client).
    private func closeUnderTLS(context: ChannelHandlerContext, sendingCloseNotify: Bool = false) {
        guard let tlsContext = try? context.pipeline.syncOperations.context(handler: tlsHandler) else {
            context.close(mode: .all, promise: nil)
            return
        }
        // An empty write queued behind everything written so far completes once that is out.
        let written = context.eventLoop.makePromise(of: Void.self)
        tlsContext.writeAndFlush(NIOAny(ByteBuffer()), promise: written)
        let bound = NIOLoopBound((context, tlsContext), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in
            let (context, tlsContext) = bound.value
            if sendingCloseNotify { context.close(mode: .output, promise: nil) }
            tlsContext.close(mode: .all, promise: nil)
        }
    }

    private func fail(_ message: String) {
        guard !failureRecorded else { return }
        failureRecorded = true
        recordFailure(FlowError(.tlsFailure, message))
    }
}

enum TLSNames {
    static func version(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1.0"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }

    /// A short reason from a BoringSSL error: alerts the peer sent, verification failures.
    static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        let known: [(String, String)] = [
            ("TLSV1_ALERT_UNKNOWN_CA", "unknown CA"),
            ("SSLV3_ALERT_BAD_CERTIFICATE", "bad certificate"),
            ("SSLV3_ALERT_CERTIFICATE_UNKNOWN", "certificate unknown"),
            ("SSLV3_ALERT_CERTIFICATE_EXPIRED", "certificate expired"),
            ("TLSV1_ALERT_ACCESS_DENIED", "access denied"),
            ("TLSV1_ALERT_PROTOCOL_VERSION", "no common protocol version"),
            ("NO_SHARED_CIPHER", "no shared cipher"),
            ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed"),
            ("WRONG_VERSION_NUMBER", "not TLS"),
        ]
        for (code, reason) in known where text.contains(code) {
            return reason
        }
        if text.contains("failedToValidateHostname") || text.contains("unableToValidateCertificate") {
            return "the certificate does not match the host name"
        }
        // BoringSSL's own code for anything else, e.g. DECRYPTION_FAILED_OR_BAD_RECORD_MAC.
        if let range = text.range(of: #"OPENSSL_internal:[A-Z0-9_]+"#, options: .regularExpression) {
            return "TLS error \(text[range].dropFirst("OPENSSL_internal:".count))"
        }
        return text
    }
}
