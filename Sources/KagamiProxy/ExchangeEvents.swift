import KagamiControl
import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2

// The exchange as a layer without I/O: every event the connection reads or is told comes in
// here, with the time and the hooks; what should happen goes out as `ExchangeCommand`s, which
// the client connection's handler carries out. `ExchangeLayerTests` drives it with values.

// MARK: The client's request

extension Exchange {
    /// The request head was read (and routed): the hooks' head step decides whether the whole
    /// request is collected first; otherwise the request hooks run now.
    func begin(hooks: ExchangeHooks) -> [ExchangeCommand] {
        guard hooks.requestHead(self) else { return runRequestHooks(hooks, from: 0) }
        // A hook (a breakpoint, a Rewrite Body rule) decides the request at its end, with its body.
        state.collectRequest()
        guard state.expectsContinue else { return [] }
        // The proxy reads the body before any server is asked: it tells the client to send it,
        // and the server gets it whole, with nothing left to agree to.
        upstreamHead.headers.remove(name: "expect")
        return [.toClient(.head(HTTPResponseHead(version: clientVersion, status: .continue))), .flushClient]
    }

    func clientSentBody(_ buffer: ByteBuffer, hooks: ExchangeHooks, now: NIODeadline) -> [ExchangeCommand] {
        switch state.requestBodyReceived() {
        case .forward:
            recorder.requestBodyPart(buffer)
            return sending(.body(.byteBuffer(buffer)), now: now)
        case .collect:
            pendingParts.append(.body(.byteBuffer(buffer)))
            return collectedRequestGrew(by: buffer.readableBytes) ? runRequestHooks(hooks, from: 0) : []
        case .discard:
            return []
        }
    }

    func clientSentEnd(_ trailers: HTTPHeaders?, hooks: ExchangeHooks, now: NIODeadline) -> [ExchangeCommand] {
        switch state.requestEndReceived() {
        case .forward:
            return sending(.end(trailers), now: now)
        case .answerLocally:
            return localAnswer.map { answerLocally(with: $0) } ?? []
        case .decideCollected:
            pendingParts.append(.end(trailers))
            return runRequestHooks(hooks, from: 0)
        case .ignore:
            return []
        }
    }

    /// The client sent all it will (`ExchangeStateMachine.clientInputClosed` decides): a request
    /// it completed is still answered, but a client that gave up is not waited for long.
    func clientInputClosed() -> [ExchangeCommand] {
        guard state.clientInputClosed(held: breakpoint.heldID != nil) == .answerThenClose else { return [.closeClient] }
        clientKeepAlive = false
        return [.after(timeouts.clientHalfClose, .clientHalfClosed)]
    }

    /// The request hooks from `index` on (`ExchangeHooks.runRequest`) and what they leave it
    /// to: once all let the request go, it goes to the server (and the client's reads wait
    /// until the server connection takes it).
    func runRequestHooks(_ hooks: ExchangeHooks, from index: Int) -> [ExchangeCommand] {
        guard !state.isFinished else { return [] }
        switch hooks.runRequest(self, from: index) {
        case .connect:
            return [.pauseClientReads] + connecting(hooks: hooks)
        case .answer(let response):
            return answerLocally(with: response)
        case .drop(let reason):
            return ending(with: FlowError(.aborted, reason)) + [.closeClient]
        case .reset(let reason):
            return ending(with: FlowError(.connectionReset, reason)) + [.resetClient]
        case .wait:
            return [.pauseClientReads]
        case .holdAtBreakpoint(let position):
            return holdRequest(at: position)
        case .delay(let latency, let position):
            return [.pauseClientReads, .after(latency, .requestHooks(from: position + 1))]
        case .waitFor(let wait, let position):
            return [.pauseClientReads, .when(wait, .requestHooks(from: position))]
        }
    }

    /// When the session store is behind the traffic, the request waits before it goes out (and
    /// the client's reads with it), so traffic slows to what the store can keep instead of
    /// Kagami's memory growing.
    func connecting(hooks: ExchangeHooks) -> [ExchangeCommand] {
        hooks.isBehind ? [.pauseClientReads, .after(.milliseconds(2), .connect)] : [.connectServer]
    }

    /// Answers with a response the rules made (Map Local, 403), once the request is read;
    /// throttling's latency comes first (the hooks stopped before it).
    func answerLocally(with response: FlowResponse) -> [ExchangeCommand] {
        guard state.answerLocally() == .answerNow else {
            localAnswer = response
            return []
        }
        if let latency = takeThrottleLatency() { return [.pauseClientReads, .after(latency, .answer(response))] }
        let (head, close) = localAnswerHead(response, requestRead: finish())
        let body = ByteBuffer(bytes: response.body.data)
        recorder.responseHead(head)
        recorder.responseBodyPart(body)
        // An answer with trailers (a gRPC call's status, from Map Local) to an HTTP/2 client:
        // its head, body and trailers go out as the server's would.
        if let trailers = response.trailers, clientVersion.major == 2 {
            let fields = HTTPHeaders(trailers.pairs)
            recorder.responseTrailers(fields)
            return [.ended, .record(recorder.finish(error: nil), then: [
                .toClient(.head(head)), .toClient(.body(.byteBuffer(body))), .endResponse(fields, close: close), .resumeClientReads,
            ])]
        }
        return [.ended, .record(recorder.finish(error: nil), then: [.answer(head, body, close: close, shaping: throttle)])]
    }

    /// A timer this exchange set fired.
    func timerFired(_ timer: ExchangeTimer, hooks: ExchangeHooks) -> [ExchangeCommand] {
        guard !state.isFinished else { return [] }
        switch timer {
        case .requestHooks(let index): return runRequestHooks(hooks, from: index)
        case .answer(let response): return answerLocally(with: response)
        case .connect: return connecting(hooks: hooks)
        case .clientHalfClosed: return state.hasResponseStarted ? [] : [.closeClient]
        }
    }
}

// MARK: The server connection

extension Exchange {
    /// The pool gave the exchange a server connection: shaped as the exchange is, it gets the
    /// request's head and what of the request waited for it; the client's reads go on once
    /// the connection takes more.
    func serverConnected(_ connection: ServerConnectionFacts, now: NIODeadline) -> [ExchangeCommand] {
        server = connection
        recorder.connected(to: connection.remoteAddress, tlsHandshake: connection.isReused ? nil : connection.tlsHandshake)
        var commands: [ExchangeCommand] = [.shapeServer(throttle), .toServer(.head(upstreamHead))]
        let parts = pendingParts
        pendingParts = []
        for part in parts { commands += sending(part, now: now) }
        return commands + [.flushServer, .resumeClientReadsUnlessServerIsFull]
    }

    /// A part of the request for the server: it goes now when a connection is there and waits
    /// for one otherwise; what goes is kept to send again (`RequestReplay`). Once the request's
    /// end is out, the server's silence counts; throttling holds the request back, and then it
    /// counts once the end has left (`requestLeft`).
    func sending(_ part: HTTPClientRequestPart, now: NIODeadline) -> [ExchangeCommand] {
        guard server != nil else {
            pendingParts.append(part)
            return []
        }
        replay.sent(part)
        guard case .end(let trailers) = part else { return [.toServer(part), .pauseClientWhileServerIsFull] }
        return [.endRequest(trailers)] + (throttle == nil ? armTimeout(now: now) : [])
    }

    /// The request's end was written to the server.
    func requestLeft(now: NIODeadline) -> [ExchangeCommand] {
        recorder.requestSent()
        guard throttle != nil, !state.isFinished else { return [] }
        return armTimeout(now: now)
    }
}

// MARK: The server's response

extension Exchange {
    func serverSentHead(_ received: HTTPResponseHead, tls: TLSInfo?, hooks: ExchangeHooks, now: NIODeadline) -> [ExchangeCommand] {
        var commands = armTimeoutOnceRequestIsSent(now: now)
        switch state.responseHeadReceived(status: Int(received.status.code), collect: hooks.needsWholeResponse(self)) {
        case .relayInformational:
            commands.append(.toClient(.head(received)))
        case .collect:
            // Held until the body is complete, for a Rewrite Body rule or a breakpoint.
            recorder.firstByteArrived()
            recorder.setTLS(tls)
            collectedResponse = (received, ByteBuffer())
            upstreamKeepAlive = received.isKeepAlive
        case .relay:
            recorder.setTLS(tls)
            var head = received
            hooks.responseHead(self, head: &head)
            commands.append(.toClient(.head(relaying(head))))
        case .upgrade:
            // Sent as is: no framing, no rules (the handshake's headers are the protocol's).
            recorder.setTLS(tls)
            recorder.responseHead(received)
            switchingHead = received
            commands += [.toClient(.head(received)), .flushClient]
        case .rejectUpgrade:
            commands += failBeforeResponse(UpgradeError.notRequested)
        case .ignore:
            break
        }
        return commands
    }

    func serverSentBody(_ received: ByteBuffer, now: NIODeadline) -> [ExchangeCommand] {
        var commands = armTimeoutOnceRequestIsSent(now: now)
        switch state.responseBodyReceived() {
        case .collect:
            var buffer = received
            collectedResponse?.body.writeBuffer(&buffer)
            if (collectedResponse?.body.readableBytes ?? 0) > Exchange.maximumHeldBody {
                // Too large to collect: it goes on as received, unchanged; the rest streams.
                recorder.addRuleApplications([RuleApplication(
                    name: breakpoint.stopsAtResponse ? "Breakpoint" : "Rewrite",
                    description: "response body over \(Exchange.maximumHeldBody >> 20) MB: passed on unchanged")])
                commands += sendCollectedResponse(holdingBody: false)
            }
        case .relay:
            recorder.responseBodyPart(received)
            if responseBody.received(received.readableBytes) == .holdAsLast {
                finalBodyPart = received
            } else {
                commands += [.toClient(.body(.byteBuffer(received))), .pauseServerWhileClientIsFull]
            }
        case .ignore:
            break
        }
        return commands
    }

    func serverSentEnd(_ trailers: HTTPHeaders?, hooks: ExchangeHooks, now: NIODeadline) -> [ExchangeCommand] {
        let commands = armTimeoutOnceRequestIsSent(now: now)
        switch state.responseEndReceived() {
        case .decideCollected:
            collectedTrailers = trailers
            return commands + runResponseHooks(hooks, from: 0)
        case .finish:
            // An HTTP/2 client gets the status of a trailers-only gRPC answer as trailers too:
            // its head and end go out as two frames, and gRPC reads the status at the end.
            return commands + finishResponse(trailers: trailers ?? trailersOnlyStatus)
        case .switchProtocols:
            return commands + [.switchProtocols(switchingHead ?? HTTPResponseHead(version: .http1_1, status: .switchingProtocols))]
        case .ignore:
            return commands
        }
    }

    /// The response hooks from `index` on, over the collected response
    /// (`ExchangeHooks.runResponse`); once all let it go, it goes to the client and the
    /// exchange finishes.
    func runResponseHooks(_ hooks: ExchangeHooks, from index: Int) -> [ExchangeCommand] {
        guard !state.isFinished else { return [] }
        switch hooks.runResponse(self, from: index) {
        case .send:
            return sendCollectedResponse(holdingBody: true) + finishResponse(trailers: collectedTrailers)
        case .holdAtBreakpoint(let position):
            return holdResponse(at: position)
        case .resetMidBody(let reason):
            return resetMidBody(reason: reason)
        }
    }

    /// Sends the collected response's head, and its body unless it is the whole body of a
    /// finished response (`holdingBody`), which waits for the session like any final part.
    private func sendCollectedResponse(holdingBody: Bool) -> [ExchangeCommand] {
        guard let (head, body) = collectedResponse else { return [] }
        collectedResponse = nil
        state.startStreamingResponse()
        recorder.responseHead(head)
        recorder.responseBodyPart(body)
        if holdingBody, body.readableBytes > 0 {
            finalBodyPart = body
            return [.toClient(.head(head))]
        }
        return [.toClient(.head(head)), .toClient(.body(.byteBuffer(body)))]
    }

    /// The collected response's head and the first half of its body, then a reset: an app sees
    /// the connection lost while the body is arriving.
    private func resetMidBody(reason: String) -> [ExchangeCommand] {
        guard let (head, body) = collectedResponse else { return [] }
        collectedResponse = nil
        let half = body.getSlice(at: body.readerIndex, length: body.readableBytes / 2) ?? ByteBuffer()
        recorder.responseHead(head)
        recorder.responseBodyPart(half)
        return [releasingServer(reuse: false), .toClient(.head(head)), .toClient(.body(.byteBuffer(half))), .flushClient]
            + ending(with: FlowError(.connectionReset, reason)) + [.resetClient]
    }

    /// The response is complete: the server connection goes back to the pool (or closes), and
    /// the response's end goes out once the exchange is kept in the session: a client that
    /// saw an exchange complete finds it there even if Kagami is killed right after. The
    /// session commits in groups, so this costs a client at most one group's write.
    func finishResponse(trailers: HTTPHeaders?) -> [ExchangeCommand] {
        // Decided before `finish`, which leaves the exchange finished.
        let ending = state.finishResponse(serverKeepsAlive: upstreamKeepAlive, clientKeepsAlive: clientKeepAlive)
        finish()
        var last: [ExchangeCommand] = []
        if let finalBodyPart { last.append(.toClient(.body(.byteBuffer(finalBodyPart)))) }
        finalBodyPart = nil
        last.append(.endResponse(trailers, close: ending.closeClient))
        if let trailers { recorder.responseTrailers(trailers) }
        return [.ended, releasingServer(reuse: ending.reuseServerConnection), .record(recorder.finish(error: nil), then: last), .resumeClientReads]
    }
}

// MARK: Failures and time

extension Exchange {
    /// The server connection was lost (or never came: `error`), with the state machine deciding
    /// whether the request is sent again on a fresh connection.
    func serverLost(_ error: any Error, hooks: ExchangeHooks) -> [ExchangeCommand] {
        let attempt = server.map {
            ExchangeStateMachine.ServerAttempt(reusedConnection: $0.isReused, requestKept: replay.isKept, retries: replay.retries)
        }
        switch state.upstreamLost(ExchangeStateMachine.ConnectionLoss(error), attempt: attempt) {
        case .retryOnFreshConnection:
            // The pooled connection was found dropped: the kept request goes again on a new one.
            guard let sent = replay.takeForRetry() else { return failBeforeResponse(error) }
            disarmTimeout()
            pendingParts = sent + pendingParts
            return [releasingServer(reuse: false)] + connecting(hooks: hooks)
        case .failBeforeResponse:
            return failBeforeResponse(error)
        case .failDuringResponse:
            let failure = UpstreamFailure.classifyDuringBody(error, target: target, received: recorder.flow.response?.body.size ?? 0)
            // The status line is already out: closing is the only way to tell the client.
            return [releasingServer(reuse: false)] + ending(with: failure) + [.closeClient]
        case .ignore:
            return []
        }
    }

    /// The server takes the request's body again: its stall no longer counts (the response
    /// timer, armed once the request has ended, stays).
    func serverReadsAgain() {
        if !state.isRequestComplete, !state.hasResponseStarted { disarmTimeout() }
    }

    /// No server connection, or none that answered: the client gets an error page.
    func failBeforeResponse(_ error: any Error) -> [ExchangeCommand] {
        let (status, flowError) = UpstreamFailure.classify(error, target: target, connectTimeout: timeouts.connect)
        return [releasingServer(reuse: false)] + fail(status: status, error: flowError)
    }

    /// The server stayed silent past `timeoutDeadline`.
    func responseTimedOut() -> [ExchangeCommand] {
        let error = UpstreamFailure.silence(of: target, stalled: timeoutStalled, for: timeouts.response)
        switch state.responseTimedOut() {
        case .closeClient:
            return [releasingServer(reuse: false)] + ending(with: error) + [.closeClient]
        case .answerGatewayTimeout:
            return [releasingServer(reuse: false)] + fail(status: .gatewayTimeout, error: error)
        }
    }

    /// Answers the client with a short plain-text page and records the exchange with `error`.
    func fail(status: HTTPResponseStatus, error: FlowError) -> [ExchangeCommand] {
        let close = !finish() || !clientKeepAlive
        let (head, body) = ErrorPage.response(status: status, message: "Kagami: \(error.message)", version: clientVersion, close: close, error: error.kind)
        recorder.localResponse(status: status, headers: head.headers, body: body)
        return [.ended, .record(recorder.finish(error: error), then: [.answer(head, body, close: close, shaping: nil)])]
    }

    /// The exchange ends with `error` and is recorded; what the client is told is the caller's.
    private func ending(with error: FlowError) -> [ExchangeCommand] {
        finish()
        return [.ended, .record(recorder.finish(error: error), then: [])]
    }

    /// The server's silence counts from `now` once the request is sent; `stalled`: the server
    /// stopped taking the request's body, rather than not answering.
    func armTimeout(now: NIODeadline, stalled: Bool = false) -> [ExchangeCommand] {
        timeoutDeadline = now + timeouts.response
        timeoutStalled = stalled
        return [.startResponseTimer]
    }

    private func armTimeoutOnceRequestIsSent(now: NIODeadline) -> [ExchangeCommand] {
        state.isRequestComplete ? armTimeout(now: now) : []
    }

    /// Ends the exchange: later events and callbacks for it find it finished. Returns whether
    /// its request had been read completely.
    @discardableResult
    func finish() -> Bool {
        disarmTimeout()
        return state.finish()
    }
}

// MARK: Breakpoints

// Holding never blocks the event loop: the exchange stops at a point where it would otherwise
// go on (connect upstream, write the response) and picks up from there when the decision comes
// back (`resolved`).
extension Exchange {
    /// The whole request has been read and the rules ran: it waits, and so do client reads.
    private func holdRequest(at position: Int) -> [ExchangeCommand] {
        breakpoint.hookPosition = position
        let request = requestToHold()
        state.holdAtRequestBreakpoint()
        return [.pauseClientReads, .hold(held(.request, request: request, response: nil))]
    }

    /// The whole response has arrived and the rules ran: the server connection is let go
    /// while the client waits.
    private func holdResponse(at position: Int) -> [ExchangeCommand] {
        guard var response = collectedFlowResponse else { return [] }
        // The trailers are part of what is held and edited (a gRPC call's status).
        response.trailers = collectedTrailers.map { HeaderFields($0) }
        breakpoint.hookPosition = position
        state.holdAtResponseBreakpoint()
        disarmTimeout()
        let reuse = state.isRequestComplete && upstreamKeepAlive
        return [releasingServer(reuse: reuse), .hold(held(.response, request: recorder.requestSoFar, response: response))]
    }

    private func held(_ phase: HeldExchange.Phase, request: FlowRequest, response: FlowResponse?) -> HeldExchange {
        let now = wallClock()
        let id = UUID()
        breakpoint.heldID = id
        breakpoint.heldSince = now
        breakpoint.phase = phase
        if let loading = breakpoint.loading {
            return HeldExchange(id: id, flowID: recorder.flow.id, phase: phase, heldAt: now, request: request, locations: [], reason: loading.reason)
        }
        return HeldExchange(
            id: id, flowID: recorder.flow.id, phase: phase, heldAt: now, request: request, response: response,
            locations: breakpoint.stops?.locations ?? [])
    }

    /// The breakpoints decided about the hold `id`: the exchange goes on from where it stopped.
    func resolved(_ resolution: BreakpointResolution, id: UUID, hooks: ExchangeHooks) -> [ExchangeCommand] {
        guard !state.isFinished, breakpoint.heldID == id else { return [] }
        switch resolve(resolution, at: wallClock()) {
        case .fail(let error): return fail(status: .badGateway, error: error)
        case .continueRequest(let position): return runRequestHooks(hooks, from: position + 1)
        case .continueResponse(let position): return runResponseHooks(hooks, from: position + 1)
        }
    }

    /// The client left: the exchange ends as one it left (the error returned, for the
    /// connection to record it as it sees fit: a reset HTTP/2 stream is counted, not always
    /// stored), nobody waits for a breakpoint's decision any longer, and the server connection
    /// closes.
    func clientClosed(resetting reset: HTTP2ErrorCode?) -> (commands: [ExchangeCommand], error: FlowError) {
        let error = clientLeft(resetting: reset)
        finish()
        var commands: [ExchangeCommand] = [.ended]
        if let id = breakpoint.heldID {
            breakpoint.heldID = nil
            commands.append(.releaseHold(id))
        }
        commands.append(releasingServer(reuse: false))
        return (commands, error)
    }
}

extension ExchangeStateMachine.ConnectionLoss {
    /// The server closed the connection (what a keep-alive connection it dropped while idle
    /// looks like), or something else failed.
    init(_ error: any Error) {
        switch error {
        case ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed: self = .closedByServer
        case let io as IOError where io.errnoCode == ECONNRESET || io.errnoCode == EPIPE: self = .closedByServer
        default: self = .failed
        }
    }
}
