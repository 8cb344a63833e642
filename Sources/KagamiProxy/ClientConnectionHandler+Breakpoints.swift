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
        let request = exchange.requestToHold()
        exchange.state.holdAtRequestBreakpoint()
        hold(exchange, phase: .request, request: request, response: nil)
    }

    /// The whole response has arrived and the rules ran: the server connection is let go
    /// while the client waits.
    func holdResponse(_ exchange: Exchange, position: Int) {
        guard let response = exchange.collectedFlowResponse else { return }
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
            exchange.useEdited(edited)
            continueRequest(exchange, after: position)
        case (.request, _):
            continueRequest(exchange, after: position)
        case (.response, .executeResponse(let edited)):
            exchange.useEdited(edited)
            continueResponse(exchange, after: position)
        case (.response, _), (.message, _):
            if exchange.clientVersion.minor == 0 { exchange.collectedResponse?.head.version = .http1_0 }
            continueResponse(exchange, after: position)
        }
    }
}
