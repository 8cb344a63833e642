import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import KagamiScenarios
import NIOCore
import NIOHTTP1
import NIOHTTP2

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
    /// Where the exchange stands; every event goes through it.
    var state: ExchangeStateMachine
    /// An answer decided before the request was fully read: sent once it is.
    var localAnswer: FlowResponse?
    /// A response collected whole for a Rewrite Body rule or a breakpoint, and its trailers.
    var collectedResponse: (head: HTTPResponseHead, body: ByteBuffer)?
    var collectedTrailers: HTTPHeaders?
    /// The `grpc-*` fields of an HTTP/2 answer that had no body and no trailers of its own.
    var trailersOnlyStatus: HTTPHeaders?
    /// The 101 sent on, until the connection switches.
    var switchingHead: HTTPResponseHead?
    /// How much of a Content-Length response body is still to come, while it streams.
    var responseBody = ResponseBodyCountdown()
    /// The part that completes a response's body: it goes to the client only once the exchange
    /// is kept in the session, so a client never sees an exchange complete that a crash loses.
    var finalBodyPart: ByteBuffer?
    static let maximumHeldBody = 32 << 20
    var breakpoint = ExchangeBreakpoint()
    /// The state the scenario in force put this exchange's operation in (`ScenarioHook`).
    var scenarioState: OperationState?
    /// The scenario, named in an error state's own answer.
    var scenarioName: String?
    /// The throttling profile shaping this exchange, and whether its latency was added yet.
    var throttle: ThrottleProfile?
    var throttleLatencyAdded = false
    let clientVersion: HTTPVersion
    /// The server connection the request goes on, as far as the exchange knows it: nil until
    /// the pool gives one (request parts wait in `pendingParts` meanwhile), and once it is let go.
    var server: ServerConnectionFacts?
    /// Request parts that arrived before the server connection was ready, or collected for a hook.
    var pendingParts: [HTTPClientRequestPart] = []
    var clientKeepAlive: Bool
    var upstreamKeepAlive = true
    /// When the server's silence ends the exchange; nil while it is not timed. The connection's
    /// response timer reads it.
    var timeoutDeadline: NIODeadline?
    /// Whether that silence is the server not reading the request (rather than not answering).
    var timeoutStalled = false
    /// What was sent to the server so far, to send again if a reused connection turns out closed.
    var replay = RequestReplay()
    let timeouts: ExchangeTimeouts
    /// The time a breakpoint's hold is measured in.
    let wallClock: () -> Date

    init(
        recorder: FlowRecorder, target: ProxyTarget, upstreamHead: HTTPRequestHead, clientHead: HTTPRequestHead,
        timeouts: ExchangeTimeouts = .standard, wallClock: @escaping () -> Date = Date.init
    ) {
        self.timeouts = timeouts
        self.wallClock = wallClock
        self.recorder = recorder
        self.target = target
        self.upstreamHead = upstreamHead
        self.clientRequest = recorder.flow.request
        self.clientVersion = clientHead.version
        // After a request asking to switch protocols the client's decoder reads no further
        // request: unless the server switches, the connection ends with this exchange.
        self.clientKeepAlive = clientHead.isKeepAlive && !clientHead.requestsUpgrade
        self.state = ExchangeStateMachine(requestsUpgrade: clientHead.requestsUpgrade, expectsContinue: clientHead.expectsContinue)
    }

    /// The server connection leaves the exchange: back to the pool when `reuse`, else closed.
    func releasingServer(reuse: Bool) -> ExchangeCommand {
        server = nil
        return .letServerGo(reuse: reuse)
    }

    /// The server's silence no longer counts.
    func disarmTimeout() {
        timeoutDeadline = nil
    }

    /// The request body read so far, when the whole request was collected for a hook.
    var collectedRequestBody: ByteBuffer? {
        state.isRequestComplete ? pendingBody : nil
    }

    /// The body parts waiting to go to the server, joined.
    private var pendingBody: ByteBuffer {
        var body = ByteBuffer()
        for case .body(.byteBuffer(var part)) in pendingParts { body.writeBuffer(&part) }
        return body
    }

    /// The request as the client sent it, with its body when the whole request was collected:
    /// what the rules decide on.
    var collectedRequest: FlowRequest {
        var request = clientRequest
        if let body = collectedRequestBody { request.body = FlowBody(data: Data(body.readableBytesView)) }
        return request
    }

    /// Throttling's latency, once per request, before it goes out or is answered locally (a
    /// retry on a fresh connection adds none): nil when there is none to wait (again).
    func takeThrottleLatency() -> TimeAmount? {
        guard let profile = throttle, !throttleLatencyAdded else { return nil }
        throttleLatencyAdded = true
        recorder.addRuleApplications([RulePipeline.throttleApplication(profile)])
        return profile.latencyMs > 0 ? TimeAmount(profile.latency) : nil
    }
}

// MARK: What goes to the client

extension Exchange {
    /// Why the exchange ended when its client went away: it reset the stream (`reset`, HTTP/2)
    /// or closed the connection, before or during the response.
    func clientLeft(resetting reset: HTTP2ErrorCode?) -> FlowError {
        let when = state.hasResponseStarted ? "during the response" : "before the response"
        let message = reset.map { "the client reset the stream (RST_STREAM \($0.rfcName)) \(when)" } ?? "the client closed the connection \(when)"
        return FlowError(.clientDisconnected, message)
    }

    /// The head of an answer Kagami gives itself (Map Local, Block List's 403, a scenario's
    /// error), and whether the connection closes after it: when the client doesn't keep it
    /// alive, the answer says `Connection: close`, or the request was not read to its end —
    /// the rest of an unread request (a body the client was to send after a 100) ends the
    /// connection, said in the answer as RFC 9110 §10.1.1 asks.
    func localAnswerHead(_ response: FlowResponse, requestRead: Bool) -> (head: HTTPResponseHead, close: Bool) {
        var headers = HTTPHeaders(response.headers.pairs)
        let close = !requestRead || !clientKeepAlive || headers[canonicalForm: "connection"].contains("close")
        if !requestRead, clientVersion.major == 1 { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: clientVersion, status: HTTPResponseStatus(code: response.status, reason: response.reason), headers: headers)
        return (head, close)
    }

    /// A server's response head about to stream to the client (after the hooks): recorded as
    /// the server sent it, and returned framed for the client (`ResponseFraming`); what the
    /// framing says about both connections and the body's length is kept for the exchange's end.
    func relaying(_ head: HTTPResponseHead) -> HTTPResponseHead {
        recorder.responseHead(head)
        let framing = ResponseFraming(relaying: head, to: upstreamHead, clientVersion: clientVersion)
        upstreamKeepAlive = framing.serverKeepsAlive
        if !framing.clientKeepsAlive { clientKeepAlive = false }
        responseBody.remaining = framing.declaredLength
        trailersOnlyStatus = framing.trailersOnlyStatus
        return framing.head
    }
}

// MARK: What hooks and breakpoints make of an exchange

extension Exchange {
    /// Goes on with `request` instead of what was to be sent (a hook changed it): where it goes,
    /// its head, and its body when the whole request was collected.
    func goOn(with request: FlowRequest) {
        let collectedBody = collectedRequestBody
        if let collectedBody, request.body.data != Data(collectedBody.readableBytesView) {
            pendingParts = request.body.keptCount == 0 ? [.end(nil)] : [.body(.byteBuffer(ByteBuffer(bytes: request.body.data))), .end(nil)]
        }
        var headers = HTTPHeaders(request.headers.pairs)
        if collectedBody != nil, headers.contains(name: "content-length") {
            headers.replaceOrAdd(name: "Content-Length", value: String(request.body.keptCount))
        }
        target = ProxyTarget(scheme: request.scheme, host: request.host, port: request.port, path: request.target)
        upstreamHead = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.target, headers: headers)
        recorder.setRequest(request, headers: headers)
        for case .body(.byteBuffer(let part)) in pendingParts { recorder.requestBodyPart(part) }
    }

    /// A collected request body grew by `count` bytes. Past `maximumHeldBody` it is not held
    /// (for a breakpoint or a Rewrite Body rule) any longer but streams on, without stopping and
    /// unchanged, so an upload of any size passes in bounded memory: true then, and the request
    /// hooks run again on what is now a streaming request.
    func collectedRequestGrew(by count: Int) -> Bool {
        breakpoint.requestBytes += count
        guard breakpoint.requestBytes > Exchange.maximumHeldBody else { return false }
        let stopping = breakpoint.stopsAtRequest
        breakpoint.stops?.request = false
        state.stopCollectingRequest()
        recorder.addRuleApplications([RuleApplication(
            name: stopping ? "Breakpoint" : "Rewrite",
            description: "request body over \(Exchange.maximumHeldBody >> 20) MB: passed on \(stopping ? "without stopping" : "unchanged")")])
        for case .body(.byteBuffer(let part)) in pendingParts { recorder.requestBodyPart(part) }
        return true
    }

    /// The whole request as it stands to be held at a breakpoint (what the rules made of it),
    /// recorded afresh, as the rules may or may not have recorded it already.
    func requestToHold() -> FlowRequest {
        let body = pendingBody
        let request = FlowRequest(
            method: upstreamHead.method.rawValue, scheme: target.scheme, host: target.host,
            port: target.port, target: upstreamHead.uri, version: recorder.flow.request.version,
            headers: HeaderFields(upstreamHead.headers),
            body: FlowBody(data: Data(body.readableBytesView)))
        recorder.setRequest(request, headers: upstreamHead.headers)
        recorder.requestBodyPart(body)
        return request
    }

    /// The collected response as a flow response, body included.
    var collectedFlowResponse: FlowResponse? {
        guard let (head, body) = collectedResponse else { return nil }
        var response = FlowResponse(head)
        response.body = FlowBody(data: Data(body.readableBytesView))
        return response
    }

    /// The request as edited at a breakpoint replaces the held one: its target, head and body
    /// (framed by length); the Host header follows an edited URL unless it was edited too.
    func useEdited(_ request: FlowRequest) {
        var headers = HTTPHeaders(request.headers.pairs)
        let body = request.body.data
        headers.remove(name: "transfer-encoding")
        if !body.isEmpty || headers.contains(name: "content-length") {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        let previous = target
        let edited = ProxyTarget(scheme: request.scheme, host: request.host, port: request.port, path: request.target)
        if edited.hostHeader != previous.hostHeader, headers["host"].first == previous.hostHeader {
            headers.setHost(edited.hostHeader)
        }
        target = edited
        upstreamHead = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.target, headers: headers)
        let buffer = ByteBuffer(bytes: body)
        pendingParts = body.isEmpty ? [.end(nil)] : [.body(.byteBuffer(buffer)), .end(nil)]
        recorder.setRequest(request, headers: headers)
        recorder.requestBodyPart(buffer)
    }

    /// The response as edited at a breakpoint replaces the held one (trailers included), framed
    /// by length, in the client's HTTP version.
    func useEdited(_ edited: FlowResponse) {
        guard var (head, _) = collectedResponse else { return }
        head.status = HTTPResponseStatus(code: edited.status, reason: edited.reason)
        head.headers = HTTPHeaders(edited.headers.pairs)
        head.headers.remove(name: "transfer-encoding")
        let body = ByteBuffer(bytes: edited.body.data)
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        if clientVersion.minor == 0 { head.version = .http1_0 }
        collectedResponse = (head, body)
        collectedTrailers = edited.trailers.map { HTTPHeaders($0.pairs) }
    }

    /// The collected response becomes `response` (a hook changed it): its status and headers,
    /// and its body, framed by length, when that changed.
    func replaceCollectedResponse(with response: FlowResponse) {
        guard var (head, body) = collectedResponse else { return }
        head.apply(response)
        if response.body.data != Data(body.readableBytesView) {
            body = ByteBuffer(bytes: response.body.data)
            head.headers.remove(name: "transfer-encoding")
            head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        }
        collectedResponse = (head, body)
    }
}

/// Where an exchange held at a breakpoint goes once decided.
enum BreakpointStep: Equatable {
    /// Aborted: the client gets an error page and the exchange is stored with this error.
    case fail(FlowError)
    /// The request hooks after the one at this position go on.
    case continueRequest(after: Int)
    /// The response hooks after the one at this position go on.
    case continueResponse(after: Int)
}

extension Exchange {
    /// The breakpoints decided about this held exchange at `now`: the edit is applied, how long
    /// it was held and what was decided are recorded, and where it goes on is returned.
    func resolve(_ resolution: BreakpointResolution, at now: Date) -> BreakpointStep {
        state.resumeFromRequestBreakpoint()
        breakpoint.heldID = nil
        let phase = breakpoint.phase
        let waited = breakpoint.heldSince.map { now.timeIntervalSince($0) } ?? 0
        recorder.held(phase, for: waited)
        if let loading = breakpoint.loading {
            // The scenario's mark already names the state; this says how the wait ended.
            breakpoint.loading = nil
            recorder.addRuleApplications([RuleApplication(
                name: "Loading", description: "\(loading.reason): held \(String(format: "%.1f", waited)) s, then \(resolution.outcome)")])
        } else {
            let locations = breakpoint.stops?.locations.map(\.displayString).joined(separator: ", ") ?? ""
            recorder.addRuleApplications([RuleApplication(
                name: "Breakpoint \(locations)",
                description: "\(phase.rawValue) held \(String(format: "%.1f", waited)) s, then \(resolution.outcome)")])
        }
        let position = breakpoint.hookPosition
        switch (phase, resolution) {
        case (_, .abort):
            collectedResponse = nil
            return .fail(FlowError(.aborted, "aborted at a \(phase.rawValue) breakpoint"))
        case (.request, .executeRequest(let edited)):
            useEdited(edited)
            return .continueRequest(after: position)
        case (.request, _):
            return .continueRequest(after: position)
        case (.response, .executeResponse(let edited)):
            useEdited(edited)
            return .continueResponse(after: position)
        case (.response, _), (.message, _):
            if clientVersion.minor == 0 { collectedResponse?.head.version = .http1_0 }
            return .continueResponse(after: position)
        }
    }
}

/// What was sent to the server so far, kept while it is small enough to send again on a fresh
/// connection when a reused one turns out to be closed (RFC 9110 §9.2.2).
struct RequestReplay {
    static let maximumBytes = 1 << 20
    /// nil once the request outgrew what is kept.
    private(set) var parts: [HTTPClientRequestPart]? = []
    private var bytes = 0
    /// How many times the request was sent again.
    private(set) var retries = 0

    var isKept: Bool { parts != nil }

    mutating func sent(_ part: HTTPClientRequestPart) {
        guard parts != nil else { return }
        if case .body(.byteBuffer(let buffer)) = part { bytes += buffer.readableBytes }
        if bytes > Self.maximumBytes {
            parts = nil
        } else {
            parts?.append(part)
        }
    }

    /// The parts to send again, counted as one more retry (kept anew as they go out again);
    /// nil when the request was not kept.
    mutating func takeForRetry() -> [HTTPClientRequestPart]? {
        guard let sent = parts else { return nil }
        retries += 1
        parts = []
        bytes = 0
        return sent
    }
}

/// A response body of declared length as it streams: the part that completes it is held back,
/// to go to the client once the exchange is kept in the session.
struct ResponseBodyCountdown {
    enum Placement: Equatable {
        case relay
        case holdAsLast
    }

    /// Bytes still to come; nil when the length is not declared (chunked, close-delimited).
    var remaining: Int?

    mutating func received(_ count: Int) -> Placement {
        guard let left = remaining else { return .relay }
        remaining = left - count
        return left <= count ? .holdAsLast : .relay
    }
}
