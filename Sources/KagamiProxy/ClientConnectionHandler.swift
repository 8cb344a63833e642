import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOPosix
import KagamiRules

/// Settings every client connection shares.
struct ConnectionSettings: Sendable {
    var mode: ProxyServer.Mode
    var captureLimit: Int
    var connectTimeout: TimeAmount
    var responseTimeout: TimeAmount
    var sink: any FlowSink
    /// Set when HTTPS interception is on.
    var identities: InterceptionIdentities?
    var sslProxying: SSLProxyingList
    var upstreamVerificationDisabled: Bool
    /// The rules in force; read once per exchange, replaceable while running.
    var rules: ActiveRules
    var breakpoints: Breakpoints
    /// Every server connection goes through it (the upstream allow list).
    var gate: UpstreamGate
}

/// One exchange in progress on a client connection.
final class Exchange {
    var recorder: FlowRecorder
    /// Where the request goes and what is sent: rules (Map Remote, Rewrite) may change both.
    var target: ProxyTarget
    var upstreamHead: HTTPRequestHead
    /// The request as the client sent it: what rule locations match.
    let clientRequest: FlowRequest
    /// The rules this exchange runs under (fixed when it starts).
    var rules: RulePipeline?
    /// A Rewrite Body rule needs the whole request body before the request can be decided.
    var holdingRequestBody = false
    /// An answer decided before the request was fully read: sent once it is.
    var localAnswer: FlowResponse?
    /// A Rewrite Body rule needs the whole response body before it goes to the client.
    var heldResponseHead: HTTPResponseHead?
    var heldResponseBody: ByteBuffer?
    static let maximumHeldBody = 32 << 20
    var breakpoint = ExchangeBreakpoint()
    /// The throttling profile shaping this exchange, and whether its latency was added yet.
    var throttle: ThrottleProfile?
    var throttleLatencyAdded = false
    let clientVersion: HTTPVersion
    var upstream: UpstreamConnection?
    /// Request parts that arrived before the server connection was ready.
    var pendingParts: [HTTPClientRequestPart] = []
    var requestComplete = false
    var responseStarted = false
    var clientKeepAlive: Bool
    var upstreamKeepAlive = true
    var timeout: Scheduled<Void>?
    /// What was sent to the server so far, kept while it is small enough to send again if a
    /// reused connection turns out to be closed; nil once it is not.
    var replayable: [HTTPClientRequestPart]? = []
    var replayableBytes = 0
    var retries = 0
    static let maximumReplayableBytes = 1 << 20

    init(recorder: FlowRecorder, target: ProxyTarget, upstreamHead: HTTPRequestHead, clientHead: HTTPRequestHead) {
        self.recorder = recorder
        self.target = target
        self.upstreamHead = upstreamHead
        self.clientRequest = recorder.flow.request
        self.clientVersion = clientHead.version
        self.clientKeepAlive = clientHead.isKeepAlive
    }
}

/// The last handler on a client connection. It reads requests, sends them to the server (or
/// opens a tunnel for CONNECT), relays the response back, and records each exchange.
final class ClientConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamDelegate {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let settings: ConnectionSettings
    let pool: UpstreamPool
    private(set) var context: ChannelHandlerContext?
    private(set) var exchange: Exchange?
    /// A CONNECT waiting for its `.end` or its server connection.
    private var pendingTunnel: (target: ProxyTarget, recorder: FlowRecorder)?
    private var readsPaused = false
    private var readPending = false
    private var clientAddress: String?
    /// Set on connections that arrived through an intercepted CONNECT.
    private let origin: InterceptedOrigin?

    init(settings: ConnectionSettings, pool: UpstreamPool, origin: InterceptedOrigin? = nil) {
        self.settings = settings
        self.pool = pool
        self.origin = origin
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if let address = context.channel.remoteAddress, let ip = address.ipAddress, let port = address.port {
            clientAddress = ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Client side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.method == .CONNECT {
                beginTunnel(head, context: context)
            } else {
                beginExchange(head, context: context)
            }
        case .body(let buffer):
            guard let exchange, exchange.localAnswer == nil else { return }
            if exchange.holdingRequestBody {
                exchange.pendingParts.append(.body(.byteBuffer(buffer)))
                heldRequestBodyGrew(exchange, by: buffer.readableBytes)
                return
            }
            exchange.recorder.requestBodyPart(buffer)
            send(.body(.byteBuffer(buffer)), in: exchange)
        case .end(let trailers):
            if pendingTunnel != nil {
                openTunnel(context: context)
                return
            }
            guard let exchange else { return }
            exchange.requestComplete = true
            if let answer = exchange.localAnswer {
                answerLocally(exchange, with: answer)
            } else if exchange.holdingRequestBody {
                exchange.holdingRequestBody = false
                exchange.pendingParts.append(.end(trailers))
                if applyRequestRules(exchange) {
                    pauseClientReads()
                    if exchange.breakpoint.stopsAtRequest {
                        holdRequest(exchange)
                        return
                    }
                    connectUpstream(exchange)
                }
            } else {
                send(.end(trailers), in: exchange)
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
            self.exchange = nil
            exchange.timeout?.cancel()
            releaseHeld(exchange)
            exchange.upstream?.handler.delegate = nil
            exchange.upstream?.channel.close(promise: nil)
            let what = exchange.responseStarted ? "during the response" : "before the response"
            settings.sink.record(exchange.recorder.finish(error: FlowError(.clientDisconnected, "the client closed the connection \(what)")))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if readsPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func pauseClientReads() { readsPaused = true }

    func resumeClientReads() {
        readsPaused = false
        if readPending, let context {
            readPending = false
            context.read()
        }
    }

    // MARK: Exchanges

    private func beginExchange(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target: ProxyTarget
        var headers = head.headers
        headers.remove(name: "proxy-connection")
        let repeatOf = RepeatMark.take(from: &headers)
        switch settings.mode {
        case .forward where origin != nil:
            guard let origin else { return }
            if head.uri.hasPrefix("/") || head.uri == "*" {
                target = ProxyTarget(scheme: origin.scheme, host: origin.host, port: origin.port, path: head.uri)
            } else if let absolute = try? ProxyTarget(absoluteURL: head.uri) {
                target = absolute
            } else {
                respondWithoutUpstream(head, status: .badRequest, message: "Kagami: invalid request target \"\(head.uri)\"")
                return
            }
        case .forward:
            do {
                target = try ProxyTarget(absoluteURL: head.uri)
            } catch {
                respondWithoutUpstream(head, status: .badRequest, message: "Kagami is an HTTP proxy: send requests in absolute form (http://host/path). \(error)")
                return
            }
            if target.host.lowercased() == CertificatePage.host {
                serveCertificatePage(head)
                return
            }
            // A repeat (kagami repeat) may ask for https in absolute form: Kagami talks TLS itself.
            guard target.scheme == "http" || repeatOf != nil else {
                respondWithoutUpstream(head, status: .notImplemented, message: "https:// URLs must be sent through a CONNECT tunnel")
                return
            }
            headers.remove(name: "proxy-authorization")
            if !headers.contains(name: "host") { headers.add(name: "Host", value: target.hostHeader) }
        case .reverse(let upstream):
            let base = upstream.path.hasSuffix("/") ? String(upstream.path.dropLast()) : upstream.path
            target = ProxyTarget(scheme: upstream.scheme, host: upstream.host, port: upstream.port, path: base + (head.uri.hasPrefix("/") ? head.uri : "/" + head.uri))
            // As Charles's reverse proxies do unless told to preserve it: the server sees its own name.
            headers.replaceOrAdd(name: "Host", value: target.hostHeader)
        }
        let upstreamHead = HTTPRequestHead(version: .http1_1, method: head.method, uri: target.path, headers: headers)
        var recorder = FlowRecorder(
            mode: settings.mode.flowMode, clientAddress: clientAddress, target: target, head: upstreamHead,
            captureLimit: settings.captureLimit, allocator: context.channel.allocator
        )
        recorder.setVersion(head.version)
        if let repeatOf { recorder.markRepeat(of: repeatOf) }
        let exchange = Exchange(recorder: recorder, target: target, upstreamHead: upstreamHead, clientHead: head)
        self.exchange = exchange
        exchange.breakpoint.stops = settings.breakpoints.stops(for: exchange.clientRequest)
        if let rules = settings.rules.current {
            exchange.rules = rules
            exchange.throttle = rules.throttleProfile(for: exchange.clientRequest)
            if exchange.breakpoint.stopsAtRequest || rules.requestBodyNeeded(for: exchange.clientRequest) {
                // Decided at the request's end, with its body.
                exchange.holdingRequestBody = true
                return
            }
            guard applyRequestRules(exchange) else { return }
        } else if exchange.breakpoint.stopsAtRequest {
            exchange.holdingRequestBody = true
            return
        }
        pauseClientReads()
        connectUpstream(exchange)
    }

    /// Runs the request side of the rules; false when they answered or refused the request.
    func applyRequestRules(_ exchange: Exchange) -> Bool {
        guard let rules = exchange.rules else { return true }
        var request = exchange.clientRequest
        var heldBody: ByteBuffer?
        if exchange.requestComplete {
            var body = ByteBuffer()
            for case .body(.byteBuffer(var part)) in exchange.pendingParts { body.writeBuffer(&part) }
            request.body = FlowBody(data: Data(body.readableBytesView))
            heldBody = body
        }
        let verdict = rules.processRequest(request)
        exchange.recorder.addRuleApplications(verdict.applications)
        switch verdict.action {
        case .forward(let forwarded):
            if heldBody != nil, forwarded.body.data != request.body.data {
                exchange.pendingParts = forwarded.body.data.isEmpty ? [.end(nil)] : [.body(.byteBuffer(ByteBuffer(bytes: forwarded.body.data))), .end(nil)]
            } else if heldBody == nil, forwarded == request {
                return true
            }
            var headers = HTTPHeaders(forwarded.headers.map { ($0.name, $0.value) })
            if heldBody != nil, headers.contains(name: "content-length") {
                headers.replaceOrAdd(name: "Content-Length", value: String(forwarded.body.data.count))
            }
            exchange.target = ProxyTarget(scheme: forwarded.scheme, host: forwarded.host, port: forwarded.port, path: forwarded.target)
            exchange.upstreamHead = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: forwarded.method), uri: forwarded.target, headers: headers)
            exchange.recorder.setRequest(forwarded, headers: headers)
            for case .body(.byteBuffer(let part)) in exchange.pendingParts { exchange.recorder.requestBodyPart(part) }
            return true
        case .block(.dropConnection):
            self.exchange = nil
            settings.sink.record(exchange.recorder.finish(error: FlowError(.aborted, "blocked by the rules: connection dropped")))
            context?.close(promise: nil)
            return false
        case .block(.forbidden):
            answerLocally(exchange, with: RulePipeline.forbiddenResponse)
            return false
        case .respond(let local):
            // A file that vanished since the rule matched: the real server answers.
            guard let response = local.loaded() else { return true }
            answerLocally(exchange, with: response)
            return false
        }
    }

    /// Answers with a response the rules made (Map Local, 403), once the request is read.
    private func answerLocally(_ exchange: Exchange, with response: FlowResponse) {
        guard exchange.requestComplete else {
            exchange.localAnswer = response
            return
        }
        guard let context else { return }
        if waitThrottleLatency(exchange, then: { [weak self] in self?.answerLocally(exchange, with: response) }) { return }
        self.exchange = nil
        let headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        let head = HTTPResponseHead(version: exchange.clientVersion, status: HTTPResponseStatus(statusCode: response.status, reasonPhrase: response.reason), headers: headers)
        let body = ByteBuffer(bytes: response.body.data)
        exchange.recorder.responseHead(head)
        exchange.recorder.responseBodyPart(body)
        settings.sink.record(exchange.recorder.finish(error: nil))
        ThrottleHandler.shapingClientWrites(exchange.throttle, pipeline: context.pipeline.syncOperations) {
            writeLocal(head, body, close: !exchange.clientKeepAlive || headers[canonicalForm: "connection"].contains("close"), context: context)
        }
    }

    /// Throttling's latency, once per request, before it goes out or is answered locally (a
    /// retry on a fresh connection adds none). True when `resume` runs once it has passed.
    private func waitThrottleLatency(_ exchange: Exchange, then resume: @escaping () -> Void) -> Bool {
        guard let profile = exchange.throttle, !exchange.throttleLatencyAdded, let context else { return false }
        exchange.throttleLatencyAdded = true
        exchange.recorder.addRuleApplications([RulePipeline.throttleApplication(profile)])
        guard profile.latencyMs > 0 else { return false }
        pauseClientReads()
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(profile.latency)) { [weak self] in
            guard let self, self.exchange === exchange else { return }
            resume()
        }
        return true
    }

    /// When the session store is behind the traffic, the request waits before it goes out
    /// (and the client's reads with it), so traffic slows to what the store can keep instead
    /// of Kagami's memory growing. True when `resume` runs once the store keeps up.
    private func waitForSink(_ exchange: Exchange, then resume: @escaping () -> Void) -> Bool {
        guard settings.sink.isBehind, let context else { return false }
        pauseClientReads()
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(2)) { [weak self] in
            guard let self, self.exchange === exchange else { return }
            resume()
        }
        return true
    }

    func connectUpstream(_ exchange: Exchange) {
        if waitForSink(exchange, then: { [weak self] in self?.connectUpstream(exchange) }) { return }
        if waitThrottleLatency(exchange, then: { [weak self] in self?.connectUpstream(exchange) }) { return }
        let target = exchange.target
        pool.acquire(UpstreamPool.Key(host: target.host, port: target.port, tls: target.scheme == "https")) { [weak self] result in
            guard let self else { return }
            guard self.exchange === exchange else {
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
        exchange.recorder.connected(to: connection.remoteAddress)
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
        if exchange.replayable != nil {
            if case .body(.byteBuffer(let buffer)) = part { exchange.replayableBytes += buffer.readableBytes }
            if exchange.replayableBytes > Exchange.maximumReplayableBytes {
                exchange.replayable = nil
            } else {
                exchange.replayable?.append(part)
            }
        }
        if case .end = part {
            let promise = upstream.channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.assumeIsolated().whenSuccess { [weak self, weak exchange] in
                guard let exchange else { return }
                exchange.recorder.requestSent()
                if exchange.throttle != nil, self?.exchange === exchange { self?.armTimeout(exchange) }
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
        exchange.timeout?.cancel()
        guard let context else { return }
        exchange.timeout = context.eventLoop.assumeIsolated().scheduleTask(in: settings.responseTimeout) { [weak self, weak exchange] in
            guard let self, let exchange, self.exchange === exchange else { return }
            self.timedOut(exchange, stalled: stalled)
        }
    }

    private func timedOut(_ exchange: Exchange, stalled: Bool) {
        let within = UpstreamFailure.seconds(settings.responseTimeout)
        let error = stalled
            ? FlowError(.timeout, "\(exchange.target.authority) stopped reading the request for \(within)")
            : FlowError(.timeout, "no response from \(exchange.target.authority) within \(within)")
        exchange.upstream?.handler.delegate = nil
        exchange.upstream?.channel.close(promise: nil)
        if exchange.responseStarted {
            self.exchange = nil
            settings.sink.record(exchange.recorder.finish(error: error))
            context?.close(promise: nil)
        } else {
            respondWithError(exchange, status: .gatewayTimeout, error: error)
        }
    }

    // MARK: Server side

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard let exchange, let context else { return }
        if exchange.requestComplete { armTimeout(exchange) }
        switch part {
        case .head(var head):
            let code = head.status.code
            if code >= 100 && code < 200 && code != 101 {
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                return
            }
            exchange.recorder.setTLS(tlsInfo(for: exchange))
            if exchange.breakpoint.stopsAtResponse || exchange.rules?.responseBodyNeeded(for: exchange.clientRequest) == true {
                // Held until the body is complete, for a Rewrite Body rule or a breakpoint.
                exchange.heldResponseHead = head
                exchange.heldResponseBody = context.channel.allocator.buffer(capacity: 0)
                exchange.upstreamKeepAlive = head.isKeepAlive
                return
            }
            if let rules = exchange.rules {
                let verdict = rules.processResponse(FlowResponse(head), for: exchange.clientRequest)
                exchange.recorder.addRuleApplications(verdict.applications)
                head.apply(verdict.response)
            }
            exchange.recorder.responseHead(head)
            exchange.responseStarted = true
            exchange.upstreamKeepAlive = head.isKeepAlive
            if !head.isKeepAlive { exchange.clientKeepAlive = false }
            if exchange.clientVersion.minor == 0 {
                // An HTTP/1.0 client can't read chunked framing: send the body raw and close.
                head.version = .http1_0
                if head.headers[canonicalForm: "transfer-encoding"].contains(where: { $0.lowercased() == "chunked" }) {
                    head.headers.remove(name: "transfer-encoding")
                    exchange.clientKeepAlive = false
                }
                if !head.headers.contains(name: "content-length") { exchange.clientKeepAlive = false }
            }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        case .body(var buffer):
            if exchange.heldResponseBody != nil {
                exchange.heldResponseBody?.writeBuffer(&buffer)
                if (exchange.heldResponseBody?.readableBytes ?? 0) > Exchange.maximumHeldBody {
                    releaseHeldResponse(exchange, rewrite: false)
                }
                return
            }
            exchange.recorder.responseBodyPart(buffer)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            if !context.channel.isWritable {
                exchange.upstream?.handler.pauseReads()
                context.flush()
            }
        case .end(let trailers):
            if exchange.breakpoint.stopsAtResponse, exchange.heldResponseHead != nil {
                holdResponse(exchange, trailers: trailers)
                return
            }
            if exchange.heldResponseHead != nil {
                releaseHeldResponse(exchange, rewrite: true)
            }
            finish(exchange, trailers: trailers)
        }
    }

    /// Sends a held response on: rewritten by the rules when it is complete, as received when
    /// it grew too large to hold (the rest then streams).
    private func releaseHeldResponse(_ exchange: Exchange, rewrite: Bool) {
        guard let context, var head = exchange.heldResponseHead, var body = exchange.heldResponseBody else { return }
        exchange.heldResponseHead = nil
        exchange.heldResponseBody = nil
        if rewrite {
            applyResponseRules(exchange, head: &head, body: &body)
        } else {
            exchange.recorder.addRuleApplications([RuleApplication(name: exchange.breakpoint.stopsAtResponse ? "Breakpoint" : "Rewrite", description: "response body over \(Exchange.maximumHeldBody >> 20) MB: passed on unchanged")])
        }
        exchange.recorder.responseHead(head)
        exchange.responseStarted = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        exchange.recorder.responseBodyPart(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
    }

    /// Runs the response side of the rules on a whole response.
    func applyResponseRules(_ exchange: Exchange, head: inout HTTPResponseHead, body: inout ByteBuffer) {
        guard let rules = exchange.rules else { return }
        var response = FlowResponse(head)
        response.body = FlowBody(data: Data(body.readableBytesView))
        let verdict = rules.processResponse(response, for: exchange.clientRequest)
        exchange.recorder.addRuleApplications(verdict.applications)
        head.apply(verdict.response)
        if verdict.response.body.data != response.body.data {
            body = ByteBuffer(bytes: verdict.response.body.data)
            head.headers.remove(name: "transfer-encoding")
            head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        }
    }

    func upstreamReadComplete() {
        context?.flush()
    }

    func upstreamWritabilityChanged(isWritable: Bool) {
        guard isWritable else { return }
        // The server reads again: the stall timer goes (the response timer, armed once the
        // request has ended, stays).
        if let exchange, !exchange.requestComplete, !exchange.responseStarted {
            exchange.timeout?.cancel()
            exchange.timeout = nil
        }
        resumeClientReads()
    }

    func upstreamFailed(_ error: any Error) {
        guard let exchange else { return }
        if retryOnFreshConnection(exchange, after: error) { return }
        exchange.upstream = nil
        if exchange.responseStarted {
            failDuringResponse(exchange, error: UpstreamFailure.classifyDuringBody(error, target: exchange.target, received: exchange.recorder.flow.response?.body.size ?? 0))
        } else {
            failBeforeResponse(exchange, error: error)
        }
    }

    func upstreamClosed() {
        guard let exchange else { return }
        if retryOnFreshConnection(exchange, after: ChannelError.eof) { return }
        exchange.upstream = nil
        if exchange.responseStarted {
            failDuringResponse(exchange, error: UpstreamFailure.classifyDuringBody(ChannelError.eof, target: exchange.target, received: exchange.recorder.flow.response?.body.size ?? 0))
        } else {
            failBeforeResponse(exchange, error: ChannelError.eof)
        }
    }

    /// A reused keep-alive connection the server had already dropped: send the request again on
    /// a new connection, when nothing of the response came back and all of the request is kept.
    private func retryOnFreshConnection(_ exchange: Exchange, after error: any Error) -> Bool {
        guard let upstream = exchange.upstream, upstream.isReused, !exchange.responseStarted,
              let sent = exchange.replayable, exchange.retries < 2 else { return false }
        switch error {
        case ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed: break
        case let io as IOError where io.errnoCode == ECONNRESET || io.errnoCode == EPIPE: break
        default: return false
        }
        upstream.handler.delegate = nil
        upstream.channel.close(promise: nil)
        exchange.timeout?.cancel()
        exchange.upstream = nil
        exchange.retries += 1
        exchange.pendingParts = sent + exchange.pendingParts
        exchange.replayable = []
        exchange.replayableBytes = 0
        connectUpstream(exchange)
        return true
    }

    func finish(_ exchange: Exchange, trailers: HTTPHeaders?) {
        guard let context else { return }
        exchange.timeout?.cancel()
        self.exchange = nil
        if let upstream = exchange.upstream {
            upstream.handler.delegate = nil
            if exchange.requestComplete && exchange.upstreamKeepAlive {
                pool.release(upstream)
            } else {
                upstream.channel.close(promise: nil)
            }
        }
        let closeAfter = !exchange.clientKeepAlive || !exchange.requestComplete
        // The response's end goes out once the exchange is kept in the session: a client that
        // saw an exchange complete finds it there even if Kagami is killed right after. The
        // session commits in groups, so this costs a client at most one group's write.
        let loop = context.eventLoop
        let client = NIOLoopBound(context, eventLoop: loop)
        settings.sink.record(exchange.recorder.finish(error: nil)) {
            loop.execute {
                let context = client.value
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
        exchange.timeout?.cancel()
        self.exchange = nil
        settings.sink.record(exchange.recorder.finish(error: error))
        // The status line is already out: closing is the only way to tell the client.
        context?.close(promise: nil)
    }

    /// Answers the client with a short plain-text page and records the exchange with `error`.
    func respondWithError(_ exchange: Exchange, status: HTTPResponseStatus, error: FlowError) {
        guard let context else { return }
        exchange.timeout?.cancel()
        self.exchange = nil
        let (head, body) = localResponse(status: status, message: "Kagami: \(error.message)", version: exchange.clientVersion, close: !exchange.requestComplete || !exchange.clientKeepAlive)
        exchange.recorder.localResponse(status: status, headers: head.headers, body: body)
        settings.sink.record(exchange.recorder.finish(error: error))
        writeLocal(head, body, close: !exchange.requestComplete || !exchange.clientKeepAlive, context: context)
    }

    /// A request Kagami can't forward at all (bad target): answer it and close, since its
    /// body (if any) will not be read.
    private func respondWithoutUpstream(_ head: HTTPRequestHead, status: HTTPResponseStatus, message: String) {
        guard let context else { return }
        let (responseHead, body) = localResponse(status: status, message: message, version: head.version, close: true)
        writeLocal(responseHead, body, close: true, context: context)
    }

    private func localResponse(status: HTTPResponseStatus, message: String, version: HTTPVersion, close: Bool) -> (HTTPResponseHead, ByteBuffer) {
        let body = ByteBuffer(string: message + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if close { headers.add(name: "Connection", value: "close") }
        return (HTTPResponseHead(version: version, status: status, headers: headers), body)
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

    // MARK: CONNECT tunnels

    private func beginTunnel(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target: ProxyTarget
        do {
            target = try ProxyTarget(connectAuthority: head.uri)
        } catch {
            respondWithoutUpstream(head, status: .badRequest, message: "Kagami: bad CONNECT target: \(error)")
            return
        }
        var recorder = FlowRecorder(
            mode: .tunnel, clientAddress: clientAddress, target: target, head: head,
            captureLimit: 0, allocator: context.channel.allocator
        )
        recorder.setVersion(head.version)
        pendingTunnel = (target, recorder)
        // Bytes after the CONNECT belong to the tunnel, not to the HTTP parser.
        pauseClientReads()
    }

    private func openTunnel(context: ChannelHandlerContext) {
        guard let (target, recorder) = pendingTunnel else { return }
        if settings.identities != nil, origin == nil, settings.sslProxying.intercepts(host: target.host, port: target.port) {
            pendingTunnel = nil
            intercept(target: target, recorder: recorder, context: context)
            return
        }
        let clientChannel = context.channel
        let throttle = settings.rules.current?.throttleProfile(for: ThrottleHandler.tunnelRequest(target))
        let bootstrap = ClientBootstrap(group: context.eventLoop)
            .connectTimeout(settings.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
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
                    let (status, flowError) = UpstreamFailure.classify(error, target: target, connectTimeout: self.settings.connectTimeout)
                    var recorder = recorder
                    let (head, body) = self.localResponse(status: status, message: "Kagami: \(flowError.message)", version: .http1_1, close: true)
                    recorder.localResponse(status: status, headers: head.headers, body: body)
                    self.settings.sink.record(recorder.finish(error: flowError))
                    self.writeLocal(head, body, close: true, context: context)
                }
            }
    }

    private func joinTunnel(serverChannel: any Channel, recorder: FlowRecorder, context: ChannelHandlerContext) {
        let sink = settings.sink
        var recorder = recorder
        recorder.connected(to: serverChannel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" })
        let established = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: 200, reasonPhrase: "Connection Established"))
        recorder.responseHead(established)
        do {
            let serverRelay = try serverChannel.pipeline.syncOperations.handler(type: TunnelRelayHandler.self)
            let clientRelay = TunnelRelayHandler()
            TunnelRelayHandler.join(clientRelay, serverRelay)
            let record = TunnelRecord(recorder: recorder, sink: sink, client: clientRelay, server: serverRelay)
            clientRelay.onFinished = record.finish
            serverRelay.onFinished = record.finish

            // The HTTP handlers leave; the CONNECT reply goes out as raw bytes (an HTTP encoder
            // would frame it), and the decoder hands any bytes it already read to the relay.
            let pipeline = context.pipeline.syncOperations
            for name in [ProxyServer.HandlerName.encoder, ProxyServer.HandlerName.serverPipeline, ProxyServer.HandlerName.errors] {
                pipeline.removeHandler(name: name, promise: nil)
            }
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
}

extension ClientConnectionHandler {
    /// Answers the CONNECT and hands the connection to a `TunnelProtocolSniffer`, which
    /// terminates TLS (or reads plain HTTP) and serves the requests inside as exchanges.
    fileprivate func intercept(target: ProxyTarget, recorder: FlowRecorder, context: ChannelHandlerContext) {
        let sink = settings.sink
        let failureRecorder = FailureOnce(recorder: recorder, sink: sink)
        let sniffer = TunnelProtocolSniffer(target: target, settings: settings, pool: pool, recordFailure: failureRecorder.record)
        let pipeline = context.pipeline.syncOperations
        for name in [ProxyServer.HandlerName.encoder, ProxyServer.HandlerName.serverPipeline, ProxyServer.HandlerName.errors] {
            pipeline.removeHandler(name: name, promise: nil)
        }
        do {
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

/// Records a failed interception (client refused the certificate) at most once.
final class FailureOnce {
    private var recorder: FlowRecorder?
    private let sink: any FlowSink

    init(recorder: FlowRecorder, sink: any FlowSink) {
        self.recorder = recorder
        self.sink = sink
    }

    func record(_ error: FlowError) {
        guard var recorder else { return }
        self.recorder = nil
        sink.record(recorder.finish(error: error))
    }
}

/// Records a tunnel once both of its sides have closed.
final class TunnelRecord {
    private var recorder: FlowRecorder
    private let sink: any FlowSink
    private var client: TunnelRelayHandler?
    private var server: TunnelRelayHandler?
    private var done = false

    init(recorder: FlowRecorder, sink: any FlowSink, client: TunnelRelayHandler, server: TunnelRelayHandler) {
        self.recorder = recorder
        self.sink = sink
        self.client = client
        self.server = server
    }

    func finish() {
        guard !done else { return }
        done = true
        recorder.countTunnelBytes(up: client?.bytesRead ?? 0, down: server?.bytesRead ?? 0)
        client = nil
        server = nil
        sink.record(recorder.finish(error: nil))
    }
}

extension FlowResponse {
    init(_ head: HTTPResponseHead) {
        self.init(
            status: Int(head.status.code), reason: head.status.reasonPhrase, version: head.version.description,
            headers: HeaderFields(head.headers.map { ($0.name, $0.value) }))
    }
}

extension HTTPResponseHead {
    /// Takes status and headers from a response the rules returned.
    mutating func apply(_ response: FlowResponse) {
        if Int(status.code) != response.status || status.reasonPhrase != response.reason {
            status = HTTPResponseStatus(statusCode: response.status, reasonPhrase: response.reason)
        }
        let fields = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        if !fields.elementsEqual(headers, by: { $0.name == $1.name && $0.value == $1.value }) {
            headers = fields
        }
    }
}
