import KagamiControl
import KagamiFlow
import KagamiRules
import NIOCore
import NIOHTTP1
import NIOPosix

/// CONNECT on a client connection: sits before the `ClientConnectionHandler` and takes the
/// CONNECT requests, passing every other request on. Once the request is read it either
/// relays the tunnel's bytes untouched to the server, or (HTTPS interception) answers it and
/// hands the connection to a `TunnelProtocolSniffer`, which serves the requests inside as
/// exchanges. Either way the connection stops speaking HTTP/1 at this level.
final class ConnectTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let settings: ConnectionContext
    private let pool: any UpstreamSource
    /// Set on connections that arrived through an intercepted CONNECT (no interception inside).
    private let origin: InterceptedOrigin?
    /// A CONNECT waiting for its `.end` or its server connection.
    private var pendingTunnel: (target: ProxyTarget, recorder: FlowRecorder)?
    private var readPending = false
    private var clientAddress: String?
    private var context: ChannelHandlerContext?

    init(settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin?) {
        self.settings = settings
        self.pool = pool
        self.origin = origin
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        clientAddress = context.channel.remoteAddress?.authorityText
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head) where head.method == .CONNECT:
            beginTunnel(head, context: context)
        case .body where pendingTunnel != nil:
            break
        case .end where pendingTunnel != nil:
            openTunnel(context: context)
        default:
            context.fireChannelRead(data)
        }
    }

    func read(context: ChannelHandlerContext) {
        if pendingTunnel != nil {
            readPending = true
        } else {
            context.read()
        }
    }

    /// The HTTP handlers leave: a CONNECT reply goes out as raw bytes (an HTTP encoder would
    /// frame it), and the decoder, removed last, hands any bytes it already read to the relay.
    private func removeHTTPHandlers(_ pipeline: ChannelPipeline.SynchronousOperations) throws {
        for name in [ProxyServer.HandlerName.encoder, ProxyServer.HandlerName.serverPipeline, ProxyServer.HandlerName.errors] {
            pipeline.removeHandler(name: name, promise: nil)
        }
        pipeline.removeHandler(try pipeline.handler(type: ClientConnectionHandler.self), promise: nil)
    }

    private func writeAndClose(_ head: HTTPResponseHead, _ body: ByteBuffer, context: ChannelHandlerContext) {
        pendingTunnel = nil
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    fileprivate func beginTunnel(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        settings.connections.busy(context.channel)
        let target: ProxyTarget
        do {
            target = try ProxyTarget(connectAuthority: head.uri)
        } catch {
            let (responseHead, body) = ErrorPage.response(status: .badRequest, message: "Kagami: bad CONNECT target: \(error)", version: head.version, close: true)
            writeAndClose(responseHead, body, context: context)
            return
        }
        var recorder = FlowRecorder(
            mode: .tunnel, clientAddress: clientAddress, target: target, head: head,
            captureLimit: 0
        )
        recorder.setVersion(head.version)
        // Bytes after the CONNECT belong to the tunnel, not to the HTTP parser: reads wait.
        pendingTunnel = (target, recorder)
    }

    fileprivate func openTunnel(context: ChannelHandlerContext) {
        guard let (target, recorder) = pendingTunnel else { return }
        // A destination refused without a lookup (outside the allow list, Kagami's own
        // listeners) gets its 403 at the CONNECT, decrypted or not, not a TLS error inside.
        if let refusal = settings.gate.refusal(host: target.host, port: target.port) {
            pendingTunnel = nil
            refuse(recorder, target: target, error: refusal, context: context)
            return
        }
        // Block List and Allow List see tunnels as they see requests, through the hooks.
        if let verdict = settings.hooks.tunnel(ThrottleHandler.tunnelRequest(target)), case .block(let action) = verdict.action {
            pendingTunnel = nil
            block(recorder, action: action, applications: verdict.applications, context: context)
            return
        }
        if settings.identities != nil, origin == nil, settings.sslProxying.current.intercepts(host: target.host, port: target.port) {
            pendingTunnel = nil
            intercept(target: target, recorder: recorder, context: context)
            return
        }
        let clientChannel = context.channel
        let throttle = settings.rules.current?.throttleProfile(for: ThrottleHandler.tunnelRequest(target))
        let bootstrap = ClientBootstrap(group: context.eventLoop)
            .connectTimeout(settings.timeouts.connect)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TunnelRelayHandler())
                }
            }
        let gate = settings.gate
        let eventLoop = context.eventLoop
        ThrottleHandler.connect(after: throttle, on: eventLoop) { gate.connect(bootstrap, host: target.host, port: target.port, on: eventLoop) }
            .assumeIsolated()
            .whenComplete { [weak self] result in
                guard let self, let context = self.context, clientChannel.isActive else {
                    if case .success(let channel) = result { channel.close(promise: nil) }
                    return
                }
                self.pendingTunnel = nil
                switch result {
                case .success(let serverChannel):
                    let recorder = ThrottleHandler.throttle(tunnel: serverChannel, profile: throttle, recorder: recorder)
                    self.joinTunnel(serverChannel: serverChannel, recorder: recorder, context: context)
                case .failure(let error):
                    self.refuse(recorder, target: target, error: error, context: context)
                }
            }
    }

    /// Answers the CONNECT with the error page for `error` (403, 502, 504), once the session
    /// keeps the tunnel's record, and closes.
    private func refuse(_ recorder: FlowRecorder, target: ProxyTarget, error: any Error, context: ChannelHandlerContext) {
        let (status, flowError) = UpstreamFailure.classify(error, target: target, connectTimeout: settings.timeouts.connect)
        let (head, body) = ErrorPage.response(status: status, message: "Kagami: \(flowError.message)", version: .http1_1, close: true, error: flowError.kind)
        answerOnceKept(recorder, head: head, body: body, error: flowError, context: context)
    }

    /// Refuses the CONNECT as the rules say: 403 with the rules' page once the session keeps the
    /// tunnel's record, or the connection dropped.
    private func block(_ recorder: FlowRecorder, action: BlockAction, applications: [RuleApplication], context: ChannelHandlerContext) {
        var recorder = recorder
        recorder.addRuleApplications(applications)
        switch action {
        case .dropConnection:
            settings.hooks.ended(recorder.finish(error: FlowError(.aborted, "blocked by the rules: connection dropped")))
            context.close(promise: nil)
        case .forbidden:
            let forbidden = RulePipeline.forbiddenResponse
            var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: forbidden.status), headers: HTTPHeaders(forbidden.headers.pairs))
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            answerOnceKept(recorder, head: head, body: ByteBuffer(bytes: forbidden.body.data), error: nil, context: context)
        }
    }

    /// Answers the CONNECT with Kagami's own response once the session keeps the tunnel's
    /// record (with `error`, when it failed), and closes.
    private func answerOnceKept(_ recorder: FlowRecorder, head: HTTPResponseHead, body: ByteBuffer, error: FlowError?, context: ChannelHandlerContext) {
        var recorder = recorder
        recorder.localResponse(status: head.status, headers: head.headers, body: body)
        let eventLoop = context.eventLoop
        let written = NIOLoopBound((handler: self, context: context), eventLoop: eventLoop)
        settings.hooks.ended(recorder.finish(error: error)) {
            eventLoop.execute {
                let (handler, context) = written.value
                handler.writeAndClose(head, body, context: context)
            }
        }
    }

    fileprivate func joinTunnel(serverChannel: any Channel, recorder: FlowRecorder, context: ChannelHandlerContext) {
        let hooks = settings.hooks
        var recorder = recorder
        recorder.connected(to: serverChannel.remoteAddress?.authorityText)
        let established = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: 200, reasonPhrase: "Connection Established"))
        recorder.responseHead(established)
        do {
            let serverRelay = try serverChannel.pipeline.syncOperations.handler(type: TunnelRelayHandler.self)
            let clientRelay = TunnelRelayHandler()
            TunnelRelayHandler.join(clientRelay, serverRelay)
            let record = TunnelRecord(recorder: recorder, hooks: hooks, client: clientRelay, server: serverRelay)
            clientRelay.onFinished = record.finish
            serverRelay.onFinished = record.finish

            // The HTTP handlers leave; the CONNECT reply goes out as raw bytes (an HTTP encoder
            // would frame it), and the decoder hands any bytes it already read to the relay.
            let pipeline = context.pipeline.syncOperations
            try removeHTTPHandlers(pipeline)
            try pipeline.addHandler(clientRelay)
            clientRelay.writeRaw(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"))
            let channel = context.channel
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(name: ProxyServer.HandlerName.decoder, promise: nil)
            channel.read()
        } catch {
            serverChannel.close(promise: nil)
            context.close(promise: nil)
        }
    }

    /// Answers the CONNECT and hands the connection to a `TunnelProtocolSniffer`, which
    /// terminates TLS (or reads plain HTTP) and serves the requests inside as exchanges.
    fileprivate func intercept(target: ProxyTarget, recorder: FlowRecorder, context: ChannelHandlerContext) {
        let failureRecorder = FailureOnce(recorder: recorder, hooks: settings.hooks)
        let sniffer = TunnelProtocolSniffer(target: target, settings: settings, pool: pool, recordFailure: failureRecorder.record)
        let pipeline = context.pipeline.syncOperations
        do {
            try removeHTTPHandlers(pipeline)
            try pipeline.addHandler(sniffer)
        } catch {
            context.close(promise: nil)
            return
        }
        sniffer.writeRaw(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"))
        let channel = context.channel
        pipeline.removeHandler(context: context, promise: nil)
        pipeline.removeHandler(name: ProxyServer.HandlerName.decoder, promise: nil)
        channel.read()
    }
}

/// Records a failed interception (client refused the certificate) at most once.
final class FailureOnce {
    private var recorder: FlowRecorder?
    private let hooks: ExchangeHooks

    init(recorder: FlowRecorder, hooks: ExchangeHooks) {
        self.recorder = recorder
        self.hooks = hooks
    }

    func record(_ error: FlowError) {
        guard var recorder else { return }
        self.recorder = nil
        hooks.ended(recorder.finish(error: error))
    }
}

/// Records a tunnel when one of its sides closes, before the other side is closed.
final class TunnelRecord {
    private var recorder: FlowRecorder
    private let hooks: ExchangeHooks
    private var client: TunnelRelayHandler?
    private var server: TunnelRelayHandler?
    private var done = false

    init(recorder: FlowRecorder, hooks: ExchangeHooks, client: TunnelRelayHandler, server: TunnelRelayHandler) {
        self.recorder = recorder
        self.hooks = hooks
        self.client = client
        self.server = server
    }

    func finish(then: @escaping @Sendable () -> Void) {
        guard !done else { return then() }
        done = true
        recorder.countTunnelBytes(up: client?.bytesRead ?? 0, down: server?.bytesRead ?? 0)
        client = nil
        server = nil
        hooks.ended(recorder.finish(error: nil), stored: then)
    }
}

