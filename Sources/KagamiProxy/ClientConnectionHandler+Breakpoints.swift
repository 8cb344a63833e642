import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import NIOCore
import NIOHTTP1

/// Where an exchange stands with the breakpoints.
struct ExchangeBreakpoint {
    var stops: BreakpointStops?
    /// Set while the exchange is held.
    var heldID: UUID?
    /// The breakpoint hook's place in the hook list: the hooks after it go on once decided.
    var hookPosition = 0
    var heldSince: Date?
    var phase: HeldExchange.Phase = .request
    /// Request body bytes read while waiting for the request's end.
    var requestBytes = 0
    var autoContinue: Scheduled<Void>?

    var stopsAtRequest: Bool { stops?.request ?? false }
    var stopsAtResponse: Bool { stops?.response ?? false }
}

// Holding never blocks the event loop: the handler stops at a point where it would otherwise
// go on (connect upstream, write the response) and picks up from there when the decision comes
// back through `Breakpoints`, hopping onto this channel's loop.
extension ClientConnectionHandler {
    /// The whole request has been read and the rules ran: it waits, and so do client reads.
    func holdRequest(_ exchange: Exchange, position: Int) {
        pauseClientReads()
        exchange.breakpoint.hookPosition = position
        var body = ByteBuffer()
        for case .body(.byteBuffer(var part)) in exchange.pendingParts { body.writeBuffer(&part) }
        // Recorded afresh, as the rules may or may not have recorded it already.
        let request = FlowRequest(
            method: exchange.upstreamHead.method.rawValue, scheme: exchange.target.scheme, host: exchange.target.host,
            port: exchange.target.port, target: exchange.upstreamHead.uri, version: exchange.recorder.flow.request.version,
            headers: HeaderFields(exchange.upstreamHead.headers),
            body: FlowBody(data: Data(body.readableBytesView)))
        exchange.recorder.setRequest(request, headers: exchange.upstreamHead.headers)
        exchange.recorder.requestBodyPart(body)
        exchange.state.holdAtRequestBreakpoint()
        hold(exchange, phase: .request, request: request, response: nil)
    }

    /// A request body too large to hold whole (for a breakpoint or a Rewrite Body rule) goes
    /// on streaming: without stopping, and without the body rewrite, so an upload of any size
    /// passes in bounded memory.
    func heldRequestBodyGrew(_ exchange: Exchange, by count: Int) {
        exchange.breakpoint.requestBytes += count
        guard exchange.breakpoint.requestBytes > Exchange.maximumHeldBody else { return }
        let stopping = exchange.breakpoint.stopsAtRequest
        exchange.breakpoint.stops?.request = false
        exchange.state.stopCollectingRequest()
        exchange.recorder.addRuleApplications([RuleApplication(
            name: stopping ? "Breakpoint" : "Rewrite",
            description: "request body over \(Exchange.maximumHeldBody >> 20) MB: passed on \(stopping ? "without stopping" : "unchanged")")])
        for case .body(.byteBuffer(let part)) in exchange.pendingParts { exchange.recorder.requestBodyPart(part) }
        runRequestHooks(exchange, from: 0)
    }

    /// The whole response has arrived and the rules ran: the server connection is let go
    /// while the client waits.
    func holdResponse(_ exchange: Exchange, position: Int) {
        guard let (head, body) = exchange.collectedResponse else { return }
        exchange.breakpoint.hookPosition = position
        exchange.state.holdAtResponseBreakpoint()
        exchange.disarmTimeout()
        if let upstream = exchange.upstream {
            upstream.handler.delegate = nil
            if exchange.state.isRequestComplete && exchange.upstreamKeepAlive {
                pool.release(upstream)
            } else {
                upstream.channel.close(promise: nil)
            }
            exchange.upstream = nil
        }
        var response = FlowResponse(head)
        response.body = FlowBody(data: Data(body.readableBytesView))
        hold(exchange, phase: .response, request: exchange.recorder.requestSoFar, response: response)
    }

    private func hold(_ exchange: Exchange, phase: HeldExchange.Phase, request: FlowRequest, response: FlowResponse?) {
        guard let context else { return }
        let breakpoints = settings.breakpoints
        let id = UUID()
        let now = Date()
        exchange.breakpoint.heldID = id
        exchange.breakpoint.heldSince = now
        exchange.breakpoint.phase = phase
        let held = HeldExchange(
            id: id, flowID: exchange.recorder.flow.id, phase: phase, heldAt: now, request: request, response: response,
            locations: exchange.breakpoint.stops?.locations ?? [])
        let loop = context.eventLoop
        let parties = NIOLoopBound((handler: self, exchange: exchange), eventLoop: loop)
        breakpoints.hold(held) { resolution in
            loop.execute { parties.value.handler.resume(parties.value.exchange, id: id, with: resolution) }
        }
        if let seconds = breakpoints.autoContinueSeconds {
            exchange.breakpoint.autoContinue = loop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
                breakpoints.autoContinue(id)
            }
        }
    }

    /// The client left while its exchange was held: nobody is waiting for a decision any more.
    func releaseHeld(_ exchange: Exchange) {
        guard let id = exchange.breakpoint.heldID else { return }
        exchange.breakpoint.heldID = nil
        exchange.breakpoint.autoContinue?.cancel()
        settings.breakpoints.release(id)
    }

    private func resume(_ exchange: Exchange, id: UUID, with resolution: BreakpointResolution) {
        guard !exchange.state.isFinished, exchange.breakpoint.heldID == id, context != nil else { return }
        exchange.state.resumeFromRequestBreakpoint()
        exchange.breakpoint.heldID = nil
        exchange.breakpoint.autoContinue?.cancel()
        let phase = exchange.breakpoint.phase
        let waited = exchange.breakpoint.heldSince.map { Date().timeIntervalSince($0) } ?? 0
        exchange.recorder.held(phase, for: waited)
        let locations = exchange.breakpoint.stops?.locations.map(\.displayString).joined(separator: ", ") ?? ""
        exchange.recorder.addRuleApplications([RuleApplication(
            name: "Breakpoint \(locations)",
            description: "\(phase.rawValue) held \(String(format: "%.1f", waited)) s, then \(resolution.outcome)")])
        let position = exchange.breakpoint.hookPosition
        switch (phase, resolution) {
        case (_, .abort):
            exchange.collectedResponse = nil
            respondWithError(exchange, status: .badGateway, error: FlowError(.aborted, "aborted at a \(phase.rawValue) breakpoint"))
        case (.request, .executeRequest(let edited)):
            useEditedRequest(edited, in: exchange)
            continueRequest(exchange, after: position)
        case (.request, _):
            continueRequest(exchange, after: position)
        case (.response, .executeResponse(let edited)):
            useEditedResponse(edited, in: exchange)
            continueResponse(exchange, after: position)
        case (.response, _), (.message, _):
            if exchange.clientVersion.minor == 0 { exchange.collectedResponse?.head.version = .http1_0 }
            continueResponse(exchange, after: position)
        }
    }

    private func useEditedRequest(_ request: FlowRequest, in exchange: Exchange) {
        var headers = HTTPHeaders(request.headers.pairs)
        let body = request.body.data
        headers.remove(name: "transfer-encoding")
        if !body.isEmpty || headers.contains(name: "content-length") {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        let previous = exchange.target
        let target = ProxyTarget(scheme: request.scheme, host: request.host, port: request.port, path: request.target)
        // The Host header follows an edited URL unless it was edited too.
        if target.hostHeader != previous.hostHeader, headers["host"].first == previous.hostHeader {
            headers.replaceOrAdd(name: "Host", value: target.hostHeader)
        }
        exchange.target = target
        exchange.upstreamHead = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.target, headers: headers)
        let buffer = ByteBuffer(bytes: body)
        exchange.pendingParts = body.isEmpty ? [.end(nil)] : [.body(.byteBuffer(buffer)), .end(nil)]
        exchange.recorder.setRequest(request, headers: headers)
        exchange.recorder.requestBodyPart(buffer)
    }

    /// The response as edited at the breakpoint replaces the held one (trailers included).
    private func useEditedResponse(_ edited: FlowResponse, in exchange: Exchange) {
        guard var (head, _) = exchange.collectedResponse else { return }
        head.status = HTTPResponseStatus(code: edited.status, reason: edited.reason)
        head.headers = HTTPHeaders(edited.headers.pairs)
        head.headers.remove(name: "transfer-encoding")
        let body = ByteBuffer(bytes: edited.body.data)
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        if exchange.clientVersion.minor == 0 { head.version = .http1_0 }
        exchange.collectedResponse = (head, body)
        exchange.collectedTrailers = nil
    }
}
