import KagamiControl
import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import KagamiRules
import KagamiScenarios

/// What every client connection of one proxy shares: its `ProxyOptions` read and in event-loop
/// time, and the live objects (rules, breakpoints, hooks, the upstream gate, limits).
struct ConnectionContext: Sendable {
    var mode: ProxyServer.Mode
    var captureLimit: Int
    var connectTimeout: TimeAmount
    var responseTimeout: TimeAmount
    /// No complete request head for this long (after connecting or after the last exchange):
    /// the connection is closed.
    var clientIdleTimeout: TimeAmount
    /// How long the server's answer may take to begin once the client closed its side.
    var clientHalfCloseTimeout: TimeAmount
    /// Set when HTTPS interception is on.
    var identities: InterceptionIdentities?
    var sslProxying: LiveSSLProxying
    var upstreamVerificationDisabled: Bool
    /// The rules in force; read once per exchange, replaceable while running.
    var rules: ActiveRules
    var breakpoints: Breakpoints
    /// Every server connection goes through it (the upstream allow list).
    var gate: UpstreamGate
    /// What acts on each exchange, in order: rules, breakpoints, throttling, recording.
    var hooks: ExchangeHooks
    /// The WebSockets open through the proxy, for messages injected from the admin API.
    var webSockets: LiveWebSockets
    /// What each client address may cost in HTTP/2 stream resets.
    var budget: ClientBudget
    /// The client connections open, and which of them only wait for a request.
    var connections: ClientConnectionLimit
}

/// The last handler on a client connection. It reads requests, sends them to the server, relays
/// the response back, and records each exchange; where each exchange stands is its
/// `ExchangeStateMachine`, which decides what every event leads to. CONNECT is taken before it
/// by `ConnectTunnelHandler`; an upgraded connection (WebSocket) leaves it for a relay.
final class ClientConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamDelegate {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let settings: ConnectionContext
    let pool: any UpstreamSource
    private(set) var context: ChannelHandlerContext?
    private(set) var exchange: Exchange?
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
                self.timedOut(exchange, stalled: exchange.timeoutStalled)
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
            switch exchange.state.requestBodyReceived() {
            case .forward:
                exchange.recorder.requestBodyPart(buffer)
                send(.body(.byteBuffer(buffer)), in: exchange)
            case .collect:
                exchange.pendingParts.append(.body(.byteBuffer(buffer)))
                if exchange.collectedRequestGrew(by: buffer.readableBytes) { runRequestHooks(exchange, from: 0) }
            case .discard:
                break
            }
        case .end(let trailers):
            guard let exchange else { return }
            switch exchange.state.requestEndReceived() {
            case .forward:
                send(.end(trailers), in: exchange)
            case .answerLocally:
                if let answer = exchange.localAnswer { answerLocally(exchange, with: answer) }
            case .decideCollected:
                exchange.pendingParts.append(.end(trailers))
                runRequestHooks(exchange, from: 0)
            case .ignore:
                break
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstream?.handler.flush()
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { exchange?.upstream?.handler.resumeReads() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let exchange {
            let error = exchange.clientLeft(resetting: streamReset)
            end(exchange)
            releaseHeld(exchange)
            exchange.upstream?.handler.delegate = nil
            exchange.upstream?.channel.close(promise: nil)
            if let streamResets, streamReset != nil {
                streamResets.reset(exchange.recorder, error: error, answered: exchange.state.hasResponseStarted)
            } else {
                settings.hooks.ended(exchange.recorder.finish(error: error))
            }
        }
        context.fireChannelInactive()
    }

    /// The client sent all it will (`ExchangeStateMachine.clientInputClosed` decides): a request
    /// it completed is still answered, but a client that gave up is not waited for long: when
    /// the answer hasn't begun within `clientHalfCloseTimeout`, the exchange ends as one the
    /// client left.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard let exchange, exchange.state.clientInputClosed(held: exchange.breakpoint.heldID != nil) == .answerThenClose else {
            context.close(promise: nil)
            return
        }
        exchange.clientKeepAlive = false
        context.eventLoop.assumeIsolated().scheduleTask(in: settings.clientHalfCloseTimeout) { [weak self] in
            guard let self, self.exchange === exchange, !exchange.state.hasResponseStarted else { return }
            self.context?.close(promise: nil)
        }
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
        let exchange = Exchange(recorder: recorder, target: target, upstreamHead: upstreamHead, clientHead: head)
        self.exchange = exchange
        if settings.hooks.requestHead(exchange) {
            // A hook (a breakpoint, a Rewrite Body rule) decides the request at its end, with its body.
            exchange.state.collectRequest()
            if exchange.state.expectsContinue {
                // The proxy reads the body before any server is asked: it tells the client to
                // send it, and the server gets it whole, with nothing left to agree to.
                exchange.upstreamHead.headers.remove(name: "expect")
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
            return
        }
        runRequestHooks(exchange, from: 0)
    }

    /// The request hooks from `index` on (`ExchangeHooks.runRequest`), and what they leave it
    /// to: once all let the request go, it goes to the server (and the client's reads wait
    /// until the server connection takes it).
    func runRequestHooks(_ exchange: Exchange, from index: Int) {
        guard !exchange.state.isFinished else { return }
        switch settings.hooks.runRequest(exchange, from: index) {
        case .connect:
            pauseClientReads()
            connectUpstream(exchange)
        case .answer(let response):
            answerLocally(exchange, with: response)
        case .drop(let reason):
            end(exchange)
            settings.hooks.ended(exchange.recorder.finish(error: FlowError(.aborted, reason)))
            context?.close(promise: nil)
        case .reset(let reason):
            end(exchange)
            settings.hooks.ended(exchange.recorder.finish(error: FlowError(.connectionReset, reason)))
            resetClientConnection()
        case .wait:
            pauseClientReads()
        case .holdAtBreakpoint(let position):
            holdRequest(exchange, position: position)
        case .delay(let latency, let position):
            guard let context else { return }
            pauseClientReads()
            context.eventLoop.assumeIsolated().scheduleTask(in: latency) { [weak self] in
                self?.continueRequest(exchange, after: position)
            }
        }
    }

    /// A hook that held the request (a breakpoint, throttling's latency) lets it go on.
    func continueRequest(_ exchange: Exchange, after position: Int) {
        guard !exchange.state.isFinished else { return }
        runRequestHooks(exchange, from: position + 1)
    }

    /// Answers with a response the rules made (Map Local, 403), once the request is read.
    private func answerLocally(_ exchange: Exchange, with response: FlowResponse) {
        guard exchange.state.answerLocally() == .answerNow else {
            exchange.localAnswer = response
            return
        }
        guard let context else { return }
        // Throttling's latency comes before a local answer too (the hooks stopped before it).
        if let latency = exchange.takeThrottleLatency() {
            pauseClientReads()
            context.eventLoop.assumeIsolated().scheduleTask(in: latency) { [weak self] in
                guard !exchange.state.isFinished else { return }
                self?.answerLocally(exchange, with: response)
            }
            return
        }
        let (head, close) = exchange.localAnswerHead(response, requestRead: end(exchange))
        let body = ByteBuffer(bytes: response.body.data)
        exchange.recorder.responseHead(head)
        exchange.recorder.responseBodyPart(body)
        answer(head, body, close: close, recording: exchange.recorder.finish(error: nil), context: context, shaping: exchange.throttle)
    }

    /// When the session store is behind the traffic, the request waits before it goes out
    /// (and the client's reads with it), so traffic slows to what the store can keep instead
    /// of Kagami's memory growing. True when `resume` runs once the store keeps up.
    private func waitForSink(_ exchange: Exchange, then resume: @escaping () -> Void) -> Bool {
        guard settings.hooks.isBehind, let context else { return false }
        pauseClientReads()
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(2)) {
            guard !exchange.state.isFinished else { return }
            resume()
        }
        return true
    }

    func connectUpstream(_ exchange: Exchange) {
        if waitForSink(exchange, then: { [weak self] in self?.connectUpstream(exchange) }) { return }
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
                self.failBeforeResponse(exchange, error: error)
            }
        }
    }

    private func attach(_ connection: UpstreamConnection, to exchange: Exchange) {
        exchange.upstream = connection
        exchange.recorder.connected(to: connection.remoteAddress, tlsHandshake: connection.isReused ? nil : connection.handshakeDuration)
        connection.handler.delegate = self
        connection.shape(with: exchange.throttle)
        connection.handler.write(.head(exchange.upstreamHead))
        let parts = exchange.pendingParts
        exchange.pendingParts = []
        for part in parts { send(part, in: exchange) }
        connection.handler.flush()
        if connection.isWritable { resumeClientReads() }
    }

    private func send(_ part: HTTPClientRequestPart, in exchange: Exchange) {
        guard let upstream = exchange.upstream else {
            exchange.pendingParts.append(part)
            return
        }
        exchange.replay.sent(part)
        if case .end = part {
            let promise = upstream.channel.eventLoop.makePromise(of: Void.self)
            // (Held until the write completes or the connection closes.)
            promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
                exchange.recorder.requestSent()
                if exchange.throttle != nil, !exchange.state.isFinished { self?.armTimeout(exchange) }
            }
            upstream.handler.write(part, promise: promise)
            upstream.handler.flush()
            // Throttling holds the request back: then the server's silence counts once it has left.
            if exchange.throttle == nil { armTimeout(exchange) }
        } else {
            upstream.handler.write(part)
            if !upstream.isWritable {
                // Pause before flushing: the flush may drain at once and report the channel
                // writable again, which resumes reads.
                pauseClientReads()
                // A server that stops reading the request must not hold the exchange forever.
                armTimeout(exchange, stalled: true)
                upstream.handler.flush()
            }
        }
    }

    /// `stalled`: the server stopped taking the request's body, rather than not answering.
    private func armTimeout(_ exchange: Exchange, stalled: Bool = false) {
        guard let context else { return }
        exchange.timeoutDeadline = context.eventLoop.now + settings.responseTimeout
        exchange.timeoutStalled = stalled
        responseTimer?.start()
    }

    private func timedOut(_ exchange: Exchange, stalled: Bool) {
        let error = UpstreamFailure.silence(of: exchange.target, stalled: stalled, for: settings.responseTimeout)
        exchange.upstream?.handler.delegate = nil
        exchange.upstream?.channel.close(promise: nil)
        switch exchange.state.responseTimedOut() {
        case .closeClient:
            end(exchange)
            settings.hooks.ended(exchange.recorder.finish(error: error))
            context?.close(promise: nil)
        case .answerGatewayTimeout:
            respondWithError(exchange, status: .gatewayTimeout, error: error)
        }
    }

    // MARK: Server side

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard let exchange, let context else { return }
        if exchange.state.isRequestComplete { armTimeout(exchange) }
        switch part {
        case .head(var head):
            let collect = settings.hooks.needsWholeResponse(exchange)
            switch exchange.state.responseHeadReceived(status: Int(head.status.code), collect: collect) {
            case .relayInformational:
                context.write(wrapOutboundOut(.head(head)), promise: nil)
            case .collect:
                // Held until the body is complete, for a Rewrite Body rule or a breakpoint.
                exchange.recorder.firstByteArrived()
                exchange.recorder.setTLS(tlsInfo(for: exchange))
                exchange.collectedResponse = (head, context.channel.allocator.buffer(capacity: 0))
                exchange.upstreamKeepAlive = head.isKeepAlive
            case .relay:
                exchange.recorder.setTLS(tlsInfo(for: exchange))
                settings.hooks.responseHead(exchange, head: &head)
                context.write(wrapOutboundOut(.head(exchange.relaying(head))), promise: nil)
            case .upgrade:
                // Sent as is: no framing, no rules (the handshake's headers are the protocol's).
                exchange.recorder.setTLS(tlsInfo(for: exchange))
                exchange.recorder.responseHead(head)
                exchange.switchingHead = head
                context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            case .rejectUpgrade:
                failBeforeResponse(exchange, error: UpgradeError.notRequested)
            case .ignore:
                break
            }
        case .body(var buffer):
            switch exchange.state.responseBodyReceived() {
            case .collect:
                exchange.collectedResponse?.body.writeBuffer(&buffer)
                if (exchange.collectedResponse?.body.readableBytes ?? 0) > Exchange.maximumHeldBody {
                    releaseOversizedResponse(exchange)
                }
            case .relay:
                exchange.recorder.responseBodyPart(buffer)
                if exchange.responseBody.received(buffer.readableBytes) == .holdAsLast {
                    exchange.finalBodyPart = buffer
                    break
                }
                context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                if !context.channel.isWritable {
                    exchange.upstream?.handler.pauseReads()
                    context.flush()
                }
            case .ignore:
                break
            }
        case .end(let trailers):
            switch exchange.state.responseEndReceived() {
            case .decideCollected:
                exchange.collectedTrailers = trailers
                runResponseHooks(exchange, from: 0)
            case .finish:
                // An HTTP/2 client gets the status of a trailers-only gRPC answer as trailers
                // too: its head and end go out as two frames, and gRPC reads the status at the end.
                finish(exchange, trailers: trailers ?? exchange.trailersOnlyStatus)
            case .switchProtocols:
                switchProtocols(exchange, head: exchange.switchingHead ?? HTTPResponseHead(version: .http1_1, status: .switchingProtocols), context: context)
            case .ignore:
                break
            }
        }
    }

    /// The response hooks from `index` on, over the collected response
    /// (`ExchangeHooks.runResponse`); once all let it go, it goes to the client and the
    /// exchange finishes.
    func runResponseHooks(_ exchange: Exchange, from index: Int) {
        guard !exchange.state.isFinished else { return }
        switch settings.hooks.runResponse(exchange, from: index) {
        case .send:
            sendCollectedResponse(exchange, holdingBody: true)
            finish(exchange, trailers: exchange.collectedTrailers)
        case .holdAtBreakpoint(let position):
            holdResponse(exchange, position: position)
        case .resetMidBody(let reason):
            resetMidBody(exchange, reason: reason)
        }
    }

    /// The collected response's head and the first half of its body, then a reset: an app sees
    /// the connection lost while the body is arriving.
    private func resetMidBody(_ exchange: Exchange, reason: String) {
        guard let context, let (head, body) = exchange.collectedResponse else { return }
        exchange.collectedResponse = nil
        if let upstream = exchange.upstream {
            upstream.handler.delegate = nil
            upstream.channel.close(promise: nil)
            exchange.upstream = nil
        }
        let half = body.getSlice(at: body.readerIndex, length: body.readableBytes / 2) ?? ByteBuffer()
        exchange.recorder.responseHead(head)
        exchange.recorder.responseBodyPart(half)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(half))), promise: nil)
        end(exchange)
        settings.hooks.ended(exchange.recorder.finish(error: FlowError(.connectionReset, reason)))
        resetClientConnection()
    }

    /// Closes the client connection with a TCP reset (SO_LINGER 0) rather than a FIN; on an
    /// HTTP/2 stream, closing sends RST_STREAM and the connection stays.
    private func resetClientConnection() {
        guard let context else { return }
        guard !isStream, let socket = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A hook that held the response (a breakpoint) lets it go on.
    func continueResponse(_ exchange: Exchange, after position: Int) {
        guard !exchange.state.isFinished else { return }
        runResponseHooks(exchange, from: position + 1)
    }

    /// A response too large to collect goes on as received, unchanged; the rest streams.
    private func releaseOversizedResponse(_ exchange: Exchange) {
        exchange.recorder.addRuleApplications([RuleApplication(name: exchange.breakpoint.stopsAtResponse ? "Breakpoint" : "Rewrite", description: "response body over \(Exchange.maximumHeldBody >> 20) MB: passed on unchanged")])
        sendCollectedResponse(exchange, holdingBody: false)
    }

    /// Sends the collected response's head, and its body unless it is the whole body of a
    /// finished response (`holdingBody`), which waits for the session like any final part.
    private func sendCollectedResponse(_ exchange: Exchange, holdingBody: Bool) {
        guard let context, let (head, body) = exchange.collectedResponse else { return }
        exchange.collectedResponse = nil
        exchange.state.startStreamingResponse()
        exchange.recorder.responseHead(head)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        exchange.recorder.responseBodyPart(body)
        if holdingBody, body.readableBytes > 0 {
            exchange.finalBodyPart = body
        } else {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
    }

    func upstreamReadComplete() {
        context?.flush()
    }

    func upstreamWritabilityChanged(isWritable: Bool) {
        guard isWritable else { return }
        // The server reads again: the stall timer goes (the response timer, armed once the
        // request has ended, stays).
        if let exchange, !exchange.state.isRequestComplete, !exchange.state.hasResponseStarted {
            exchange.disarmTimeout()
        }
        resumeClientReads()
    }

    func upstreamFailed(_ error: any Error) {
        upstreamLost(error)
    }

    func upstreamClosed() {
        upstreamLost(ChannelError.eof)
    }

    private func upstreamLost(_ error: any Error) {
        guard let exchange else { return }
        let attempt = exchange.upstream.map {
            ExchangeStateMachine.ServerAttempt(reusedConnection: $0.isReused, requestKept: exchange.replay.isKept, retries: exchange.replay.retries)
        }
        switch exchange.state.upstreamLost(Self.loss(error), attempt: attempt) {
        case .retryOnFreshConnection:
            retryOnFreshConnection(exchange, after: error)
        case .failBeforeResponse:
            exchange.upstream = nil
            failBeforeResponse(exchange, error: error)
        case .failDuringResponse:
            exchange.upstream = nil
            failDuringResponse(exchange, error: UpstreamFailure.classifyDuringBody(error, target: exchange.target, received: exchange.recorder.flow.response?.body.size ?? 0))
        case .ignore:
            break
        }
    }

    /// The server closed the connection (what a keep-alive connection it dropped while idle
    /// looks like), or something else failed.
    private static func loss(_ error: any Error) -> ExchangeStateMachine.ConnectionLoss {
        switch error {
        case ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed: .closedByServer
        case let io as IOError where io.errnoCode == ECONNRESET || io.errnoCode == EPIPE: .closedByServer
        default: .failed
        }
    }

    /// Sends the kept request again on a new connection (the pooled one was found dropped).
    private func retryOnFreshConnection(_ exchange: Exchange, after error: any Error) {
        guard let upstream = exchange.upstream, let sent = exchange.replay.takeForRetry() else {
            exchange.upstream = nil
            return failBeforeResponse(exchange, error: error)
        }
        upstream.handler.delegate = nil
        upstream.channel.close(promise: nil)
        exchange.disarmTimeout()
        exchange.upstream = nil
        exchange.pendingParts = sent + exchange.pendingParts
        connectUpstream(exchange)
    }

    func finish(_ exchange: Exchange, trailers: HTTPHeaders?) {
        guard let context else { return }
        // Decided before `end`, which leaves the exchange finished.
        let ending = exchange.state.finishResponse(serverKeepsAlive: exchange.upstreamKeepAlive, clientKeepsAlive: exchange.clientKeepAlive)
        end(exchange)
        if let upstream = exchange.upstream {
            upstream.handler.delegate = nil
            if ending.reuseServerConnection {
                pool.release(upstream)
            } else {
                upstream.channel.close(promise: nil)
            }
        }
        let closeAfter = ending.closeClient
        // The response's end goes out once the exchange is kept in the session: a client that
        // saw an exchange complete finds it there even if Kagami is killed right after. The
        // session commits in groups, so this costs a client at most one group's write.
        let loop = context.eventLoop
        let client = NIOLoopBound(context, eventLoop: loop)
        let finalPart = exchange.finalBodyPart
        exchange.finalBodyPart = nil
        if let trailers { exchange.recorder.responseTrailers(trailers) }
        settings.hooks.ended(exchange.recorder.finish(error: nil)) {
            loop.execute {
                let context = client.value
                if let finalPart { context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(finalPart))), promise: nil) }
                let written = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers)))
                if closeAfter {
                    written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                }
            }
        }
        resumeClientReads()
    }

    private func failBeforeResponse(_ exchange: Exchange, error: any Error) {
        let (status, flowError) = UpstreamFailure.classify(error, target: exchange.target, connectTimeout: settings.connectTimeout)
        exchange.upstream?.handler.delegate = nil
        exchange.upstream?.channel.close(promise: nil)
        exchange.upstream = nil
        respondWithError(exchange, status: status, error: flowError)
    }

    private func failDuringResponse(_ exchange: Exchange, error: FlowError) {
        end(exchange)
        settings.hooks.ended(exchange.recorder.finish(error: error))
        // The status line is already out: closing is the only way to tell the client.
        context?.close(promise: nil)
    }

    /// Ends the exchange on this connection: later events and callbacks for it find it finished.
    /// Returns whether its request had been read completely.
    @discardableResult
    func end(_ exchange: Exchange) -> Bool {
        exchange.disarmTimeout()
        if self.exchange === exchange {
            self.exchange = nil
            idleSince = context?.eventLoop.now
            idleTimer?.start()
            if !isStream, let channel = context?.channel { settings.connections.waitingForRequest(channel) }
        }
        return exchange.state.finish()
    }

    /// Answers the client with a short plain-text page and records the exchange with `error`.
    func respondWithError(_ exchange: Exchange, status: HTTPResponseStatus, error: FlowError) {
        guard let context else { return }
        let close = !end(exchange) || !exchange.clientKeepAlive
        let (head, body) = ErrorPage.response(status: status, message: "Kagami: \(error.message)", version: exchange.clientVersion, close: close, error: error.kind)
        exchange.recorder.localResponse(status: status, headers: head.headers, body: body)
        answer(head, body, close: close, recording: exchange.recorder.finish(error: error), context: context)
    }

    /// Records `flow` and, once the session keeps it, writes a response Kagami made itself (an
    /// error page, a Map Local file, a Block List 403): a client never sees an answer a crash
    /// could lose. `shaping` throttles the writes like the server's would be.
    private func answer(
        _ head: HTTPResponseHead, _ body: ByteBuffer, close: Bool, recording flow: Flow, context: ChannelHandlerContext,
        shaping throttle: ThrottleProfile? = nil
    ) {
        let loop = context.eventLoop
        let written = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        settings.hooks.ended(flow) {
            loop.execute {
                let (handler, context) = written.value
                guard context.channel.isActive else { return }
                ThrottleHandler.shapingClientWrites(throttle, pipeline: context.pipeline.syncOperations) {
                    handler.writeLocal(head, body, close: close, context: context)
                }
            }
        }
    }

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
        var info = exchange.upstream?.tlsDetails() ?? TLSInfo()
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

extension FlowResponse {
    init(_ head: HTTPResponseHead) {
        self.init(
            status: Int(head.status.code), reason: head.status.reasonPhrase, version: head.version.description,
            headers: HeaderFields(head.headers))
    }
}

extension HTTPRequestHead {
    /// `Expect: 100-continue` from an HTTP/1.1 (or later) client: it waits for a 100 (Continue)
    /// before it sends its body (RFC 9110 §10.1.1). An HTTP/1.0 client is sent no 100.
    var expectsContinue: Bool {
        (version.major, version.minor) >= (1, 1) && headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
    }
}

extension HTTPResponseHead {
    /// Takes status and headers from a response the rules returned.
    mutating func apply(_ response: FlowResponse) {
        if Int(status.code) != response.status || status.reasonPhrase != response.reason {
            status = HTTPResponseStatus(code: response.status, reason: response.reason)
        }
        let fields = HTTPHeaders(response.headers.pairs)
        if !fields.elementsEqual(headers, by: { $0.name == $1.name && $0.value == $1.value }) {
            headers = fields
        }
    }
}

extension HTTPResponseStatus {
    /// The status with `reason` as its phrase: NIO's `init(statusCode:reasonPhrase:)` gives a
    /// code it knows its standard phrase, so "503 Down For Maintenance" would go out as
    /// "503 Service Unavailable".
    init(code: Int, reason: String) {
        let standard = HTTPResponseStatus(statusCode: code)
        self = reason.isEmpty || reason == standard.reasonPhrase ? standard : .custom(code: UInt(code), reasonPhrase: reason)
    }
}
