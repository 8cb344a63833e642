import KagamiControl
import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import KagamiRules
import KagamiScenarios

/// The last handler on a client connection: the executor of its exchanges. What it reads from
/// the client and from the server, and what it is told (a breakpoint's decision, a timer),
/// goes to the exchange in progress (`Exchange`, `ExchangeEvents.swift`), which decides; the
/// `ExchangeCommand`s it returns are carried out here. CONNECT is taken before it by
/// `ConnectTunnelHandler`; an upgraded connection (WebSocket) leaves it for a relay.
final class ClientConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamDelegate {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let settings: ConnectionContext
    let pool: any UpstreamSource
    private(set) var context: ChannelHandlerContext?
    private(set) var exchange: Exchange?
    /// The server connection of the exchange in progress (`connectServer`), and whose it is.
    private var upstream: (exchange: ObjectIdentifier, connection: UpstreamConnection)?
    private var reads = ReadGate()
    private var clientAddress: String?
    /// Closes a connection that sends no complete request head in time (see `clientIdleTimeout`).
    /// Exchanges cost it no timer work: they only note when the connection became idle.
    private var idleTimer: MovingDeadlineTimer?
    private var idleSince: NIODeadline?
    /// Ends the exchange in progress when the server stays silent past its `timeoutDeadline`:
    /// the parts of an exchange, and the exchanges of a busy connection, only move the deadline.
    private var responseTimer: MovingDeadlineTimer?
    /// Set on connections that arrived through an intercepted CONNECT.
    private let origin: InterceptedOrigin?
    /// Set on the handler of an HTTP/2 stream (one exchange per stream): its connection's
    /// streams reset before they reached a server.
    private let streamResets: StreamResets?
    private var isStream: Bool { streamResets != nil }
    /// Why the client closed the stream, when it reset it.
    private var streamReset: HTTP2ErrorCode?

    init(settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin? = nil, streamResets: StreamResets? = nil) {
        self.settings = settings
        self.pool = pool
        self.origin = origin
        self.streamResets = streamResets
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        idleSince = context.eventLoop.now
        let idleTimeout = settings.clientIdleTimeout
        idleTimer = MovingDeadlineTimer(
            on: context.eventLoop,
            deadline: { [weak self] in self?.idleSince.map { $0 + idleTimeout } },
            expired: { [weak self] in self?.context?.close(promise: nil) })
        idleTimer?.start()
        responseTimer = MovingDeadlineTimer(
            on: context.eventLoop,
            deadline: { [weak self] in
                guard let exchange = self?.exchange, !exchange.state.isFinished else { return nil }
                return exchange.timeoutDeadline
            },
            expired: { [weak self] in
                guard let self, let exchange = self.exchange else { return }
                self.execute(exchange.responseTimedOut(), for: exchange)
            })
        clientAddress = context.channel.remoteAddress?.authorityText
    }


    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        responseTimer?.cancel()
        self.context = nil
    }

    // MARK: Client side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            beginExchange(head, context: context)
        case .body(let buffer):
            guard let exchange else { return }
            execute(exchange.clientSentBody(buffer, hooks: settings.hooks, now: context.eventLoop.now), for: exchange)
        case .end(let trailers):
            guard let exchange else { return }
            execute(exchange.clientSentEnd(trailers, hooks: settings.hooks, now: context.eventLoop.now), for: exchange)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        upstream?.connection.handler.flush()
        // Part of a request read, and nothing goes back to the client until the rest comes: a
        // client without TCP_NODELAY holds the rest until this part is acknowledged.
        if let exchange, !exchange.state.isRequestComplete { context.channel.acknowledgeReceivedBytes() }
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { upstream?.connection.handler.resumeReads() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let exchange {
            let (commands, error) = exchange.clientClosed(resetting: streamReset)
            execute(commands, for: exchange)
            if let streamResets, streamReset != nil {
                streamResets.reset(exchange.recorder, error: error, answered: exchange.state.hasResponseStarted)
            } else {
                settings.hooks.ended(exchange.recorder.finish(error: error))
            }
        }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard let exchange else {
            context.close(promise: nil)
            return
        }
        execute(exchange.clientInputClosed(), for: exchange)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The client reset its stream (RST_STREAM): said on the exchange it ends.
        if let closed = error as? NIOHTTP2Errors.StreamClosed { streamReset = closed.errorCode }
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit() { context.read() }
    }

    func pauseClientReads() { reads.close() }

    func resumeClientReads() {
        if reads.open(), let context { context.read() }
    }

    // MARK: Exchanges

    private func beginExchange(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        idleSince = nil
        if !isStream { settings.connections.busy(context.channel) }
        let target: ProxyTarget, upstreamHead: HTTPRequestHead, repeatOf: UUID?
        switch RequestRoute(head, mode: settings.mode, origin: origin) {
        case .server(let server, let sentHead, let repeatID):
            (target, upstreamHead, repeatOf) = (server, sentHead, repeatID)
        case .certificatePage:
            serveCertificatePage(head)
            return
        case .refuse(let status, let message):
            respondWithoutUpstream(head, status: status, message: message)
            return
        }
        var recorder = FlowRecorder(
            mode: settings.mode.flowMode, clientAddress: clientAddress, target: target, head: upstreamHead,
            captureLimit: settings.captureLimit
        )
        recorder.setVersion(head.version)
        if let repeatOf { recorder.markRepeat(of: repeatOf) }
        // A stream's id is settled once its request has arrived. Asked on the stream's own
        // loop, the answer is already there and the callback runs at once.
        if isStream {
            var id: Int?
            context.channel.getOption(HTTP2StreamChannelOptions.streamID).assumeIsolated().whenSuccess { id = Int($0) }
            if let id { recorder.setStream(id) }
        }
        let exchange = Exchange(recorder: recorder, target: target, upstreamHead: upstreamHead, clientHead: head, timeouts: settings.timeouts)
        self.exchange = exchange
        execute(exchange.begin(hooks: settings.hooks), for: exchange)
    }

    // MARK: Carrying out what the exchange decides

    /// Carries out `commands` for `exchange`, in order (`ExchangeCommand`).
    func execute(_ commands: [ExchangeCommand], for exchange: Exchange) {
        for command in commands { execute(command, for: exchange) }
    }

    private func execute(_ command: ExchangeCommand, for exchange: Exchange) {
        // What needs no connection is carried out even once the client's is gone.
        switch command {
        case .ended:
            return ended(exchange)
        case .letServerGo(let reuse):
            guard let upstream = takeUpstream(of: exchange) else { return }
            upstream.handler.delegate = nil
            if reuse { pool.release(upstream) } else { upstream.channel.close(promise: nil) }
            return
        case .record(let flow, let then):
            guard !then.isEmpty, let loop = context?.eventLoop else { return settings.hooks.ended(flow) }
            let parties = NIOLoopBound((handler: self, exchange: exchange, then: then), eventLoop: loop)
            settings.hooks.ended(flow) {
                loop.execute { parties.value.handler.execute(parties.value.then, for: parties.value.exchange) }
            }
            return
        case .releaseHold(let id):
            exchange.breakpoint.autoContinue?.cancel()
            return settings.breakpoints.release(id)
        default:
            break
        }
        guard let context else { return }
        switch command {
        case .toClient(let part):
            context.write(wrapOutboundOut(part), promise: nil)
        case .flushClient:
            context.flush()
        case .endResponse(let trailers, let close):
            let written = context.writeAndFlush(wrapOutboundOut(.end(trailers)))
            if close { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
        case .answer(let head, let body, let close, let throttle):
            guard context.channel.isActive else { return }
            ThrottleHandler.shapingClientWrites(throttle, pipeline: context.pipeline.syncOperations) {
                self.writeLocal(head, body, close: close, context: context)
            }
        case .pauseServerWhileClientIsFull:
            if !context.channel.isWritable {
                upstream(of: exchange)?.handler.pauseReads()
                context.flush()
            }
        case .pauseClientReads:
            pauseClientReads()
        case .resumeClientReads:
            resumeClientReads()
        case .closeClient:
            context.close(promise: nil)
        case .resetClient:
            resetClientConnection(context)
        case .toServer(let part):
            upstream(of: exchange)?.handler.write(part)
        case .endRequest(let trailers):
            guard let upstream = upstream(of: exchange) else { return }
            let loop = upstream.channel.eventLoop
            let promise = loop.makePromise(of: Void.self)
            // (Held until the write completes or the connection closes.)
            promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
                let commands = exchange.requestLeft(now: loop.now)
                self?.execute(commands, for: exchange)
            }
            upstream.handler.write(.end(trailers), promise: promise)
            upstream.handler.flush()
        case .flushServer:
            upstream(of: exchange)?.handler.flush()
        case .shapeServer(let profile):
            upstream(of: exchange)?.shape(with: profile)
        case .pauseClientWhileServerIsFull:
            guard let upstream = upstream(of: exchange), !upstream.isWritable else { return }
            // Pause before flushing: the flush may drain at once and report the connection
            // writable again, which resumes reads.
            pauseClientReads()
            execute(exchange.armTimeout(now: context.eventLoop.now, stalled: true), for: exchange)
            upstream.handler.flush()
        case .resumeClientReadsUnlessServerIsFull:
            if upstream(of: exchange)?.isWritable == true { resumeClientReads() }
        case .connectServer:
            connectUpstream(exchange)
        case .startResponseTimer:
            responseTimer?.start()
        case .switchProtocols(let head):
            switchProtocols(exchange, head: head, context: context)
        case .after(let delay, let timer):
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [weak self] in
                guard let self, !exchange.state.isFinished else { return }
                self.execute(exchange.timerFired(timer, hooks: self.settings.hooks), for: exchange)
            }
        case .when(let wait, let timer):
            let done = context.eventLoop.makePromise(of: Void.self)
            done.completeWithTask { await wait.work() }
            done.futureResult.assumeIsolated().whenComplete { [weak self] _ in
                guard let self, !exchange.state.isFinished else { return }
                self.execute(exchange.timerFired(timer, hooks: self.settings.hooks), for: exchange)
            }
        case .hold(let held):
            hold(held, of: exchange, on: context.eventLoop)
        case .ended, .letServerGo, .record, .releaseHold:
            break
        }
    }

    /// The exchange is over on this connection: it waits for its next request.
    private func ended(_ exchange: Exchange) {
        guard self.exchange === exchange else { return }
        self.exchange = nil
        idleSince = context?.eventLoop.now
        idleTimer?.start()
        if !isStream, let channel = context?.channel { settings.connections.waitingForRequest(channel) }
    }

    /// Ends the exchange on this connection (a switch of protocols leaves it for a relay).
    func end(_ exchange: Exchange) {
        exchange.finish()
        ended(exchange)
    }

    private func connectUpstream(_ exchange: Exchange) {
        let target = exchange.target
        // An HTTP/2 request goes to the server in HTTP/2 when the server agrees: over TLS, ALPN
        // asks; in clear text the pool opens with the HTTP/2 preface and falls back to HTTP/1.1
        // when the server doesn't answer it (`ClearTextHTTP2Probe`).
        let key = UpstreamPool.Key(host: target.host, port: target.port, tls: target.scheme == "https", http2: exchange.clientVersion.major == 2)
        pool.acquire(key) { [weak self] result in
            guard let self, !exchange.state.isFinished else {
                if case .success(let connection) = result { connection.channel.close(promise: nil) }
                return
            }
            switch result {
            case .success(let connection):
                self.attach(connection, to: exchange)
            case .failure(let error):
                self.execute(exchange.failBeforeResponse(error), for: exchange)
            }
        }
    }

    private func attach(_ connection: UpstreamConnection, to exchange: Exchange) {
        upstream = (ObjectIdentifier(exchange), connection)
        connection.handler.delegate = self
        let facts = ServerConnectionFacts(
            remoteAddress: connection.remoteAddress, tlsHandshake: connection.handshakeDuration,
            isReused: connection.isReused)
        execute(exchange.serverConnected(facts, now: connection.channel.eventLoop.now), for: exchange)
    }

    /// The server connection of `exchange`, if it has one.
    func upstream(of exchange: Exchange) -> UpstreamConnection? {
        upstream?.exchange == ObjectIdentifier(exchange) ? upstream?.connection : nil
    }

    /// The server connection of `exchange` leaves it (to the pool, closed, or to a relay).
    func takeUpstream(of exchange: Exchange) -> UpstreamConnection? {
        guard let connection = upstream(of: exchange) else { return nil }
        upstream = nil
        return connection
    }

    /// Closes the client connection with a TCP reset (SO_LINGER 0) rather than a FIN; on an
    /// HTTP/2 stream, closing sends RST_STREAM and the connection stays.
    private func resetClientConnection(_ context: ChannelHandlerContext) {
        guard !isStream, let socket = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Server side

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard let exchange, let context else { return }
        let now = context.eventLoop.now
        switch part {
        case .head(let head):
            execute(exchange.serverSentHead(head, tls: tlsInfo(for: exchange), hooks: settings.hooks, now: now), for: exchange)
        case .body(let buffer):
            execute(exchange.serverSentBody(buffer, now: now), for: exchange)
        case .end(let trailers):
            execute(exchange.serverSentEnd(trailers, hooks: settings.hooks, now: now), for: exchange)
        }
    }

    func upstreamReadComplete() {
        context?.flush()
    }

    func upstreamWritabilityChanged(isWritable: Bool) {
        guard isWritable else { return }
        exchange?.serverReadsAgain()
        resumeClientReads()
    }

    func upstreamFailed(_ error: any Error) {
        guard let exchange else { return }
        execute(exchange.serverLost(error, hooks: settings.hooks), for: exchange)
    }

    func upstreamClosed() {
        upstreamFailed(ChannelError.eof)
    }

    // MARK: Answers without an exchange

    /// A request Kagami can't forward at all (bad target): answer it and close, since its
    /// body (if any) will not be read.
    private func respondWithoutUpstream(_ head: HTTPRequestHead, status: HTTPResponseStatus, message: String) {
        guard let context else { return }
        let (responseHead, body) = ErrorPage.response(status: status, message: message, version: head.version, close: true)
        writeLocal(responseHead, body, close: true, context: context)
    }

    /// Writes a response Kagami makes itself to a request it read completely.
    fileprivate func writeLocalResponse(_ responseHead: HTTPResponseHead, _ body: ByteBuffer, head: HTTPRequestHead) {
        guard let context else { return }
        writeLocal(responseHead, body, close: !head.isKeepAlive, context: context)
    }

    private func writeLocal(_ head: HTTPResponseHead, _ body: ByteBuffer, close: Bool, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            resumeClientReads()
        }
    }
}

extension ClientConnectionHandler {
    /// TLS facts for an exchange: the client's side of an intercepted connection and the
    /// server's certificate.
    fileprivate func tlsInfo(for exchange: Exchange) -> TLSInfo? {
        guard exchange.target.scheme == "https" else { return nil }
        var info = upstream(of: exchange)?.tlsDetails() ?? TLSInfo()
        if let client = origin?.tls {
            info.serverName = client.serverName
            info.clientVersion = client.version
            info.alpn = client.alpn
        }
        info.upstreamVerificationDisabled = settings.upstreamVerificationDisabled
        return info
    }

    fileprivate func serveCertificatePage(_ head: HTTPRequestHead) {
        let path = (try? ProxyTarget(absoluteURL: head.uri).path) ?? "/"
        let page = CertificatePage.response(path: path, authority: settings.identities?.authority)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: page.contentType)
        headers.add(name: "Content-Length", value: String(page.body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-store")
        if let disposition = page.disposition { headers.add(name: "Content-Disposition", value: disposition) }
        let responseHead = HTTPResponseHead(version: head.version, status: page.status, headers: headers)
        writeLocalResponse(responseHead, page.body, head: head)
    }
}
