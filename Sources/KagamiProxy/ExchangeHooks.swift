import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import KagamiScenarios
import NIOCore
import NIOHTTP1

/// What a hook decides about a request; the connection carries it out. After `proceed` and
/// `send` the next hook goes on (after the last, the request goes to its server); a hold or a
/// delay goes on from the hook after the one that asked for it.
enum RequestDecision {
    case proceed
    /// Go on with this request instead: rules changed what is sent, or where (its scheme, host
    /// and port; `https` means TLS).
    case send(FlowRequest)
    /// The client gets this answer; no server is asked (Map Local, Block List's 403).
    case answer(FlowResponse)
    /// The client connection is closed without an answer; the reason is recorded.
    case drop(String)
    /// The client connection is reset (TCP RST; a stream gets RST_STREAM) without an answer.
    case reset(String)
    /// The request never goes on: the client waits until it gives up (a scenario's offline
    /// timeout, or its endless loading of a request too large to hold whole).
    case wait
    /// Held whole until the breakpoints decide (the admin API, or their auto-continue): a
    /// breakpoint's hold, or a scenario's loading state (`ExchangeBreakpoint.loading`).
    case holdAtBreakpoint
    /// Go on after this long (throttling's latency).
    case delay(TimeAmount)
    /// The request waits for this (a gRPC schema asked of the server's reflection), then the
    /// same hook decides again. The client's reads pause meanwhile: a hook that may answer
    /// after waiting asks for the whole request at its head.
    case waitFor(HookWait)
}

/// Work a hook waits for before it decides (`RequestDecision.waitFor`); equal only to itself.
final class HookWait: Sendable, Equatable {
    let work: @Sendable () async -> Void

    init(_ work: @escaping @Sendable () async -> Void) { self.work = work }

    static func == (lhs: HookWait, rhs: HookWait) -> Bool { lhs === rhs }
}

/// Where the request hooks leave a request (`ExchangeHooks.runRequest`); the connection
/// carries it out.
enum RequestOutcome: Equatable {
    /// Every hook let it go: it goes to its server.
    case connect
    case answer(FlowResponse)
    case drop(String)
    case reset(String)
    case wait
    /// Held by the hook at `position`; the hooks after it go on once the breakpoints decide.
    case holdAtBreakpoint(position: Int)
    /// Paused by the hook at `position`; the hooks after it go on after this long.
    case delay(TimeAmount, position: Int)
    /// Waiting for the hook at `position`, which decides again once `wait` is done.
    case waitFor(HookWait, position: Int)
}

/// Where the response hooks leave a collected response (`ExchangeHooks.runResponse`).
enum ResponseOutcome: Equatable {
    /// Every hook let it go (some may have changed it): it goes to the client.
    case send
    /// Held by the hook at `position`; the hooks after it go on once the breakpoints decide.
    case holdAtBreakpoint(position: Int)
    case resetMidBody(String)
}

/// What a hook decides about a response collected whole, before it goes to the client.
enum ResponseDecision {
    case proceed
    /// The client gets this response instead (status, headers and body; rules changed it).
    case replace(FlowResponse)
    /// Held whole until the breakpoints decide.
    case holdAtBreakpoint
    /// The head and the first half of the body go to the client, then its connection is reset.
    case resetMidBody(String)
}

/// Something that acts on exchanges at fixed points: a tunnel, the request head, the request,
/// the response head, the response, an upgrade, its messages, and the end (finished or failed).
/// The proxy runs one ordered list of them (`ExchangeHooks`) at each point; a hook returns what
/// should happen and the connection does it (no hook sees the connection). Hooks keep what they
/// need on the `Exchange`, so one hook value serves every connection.
protocol ExchangeHook: Sendable {
    /// A CONNECT to `request`'s host and port, before its server connection opens (relayed or
    /// intercepted): nil lets it go on, a verdict that blocks refuses it at the CONNECT.
    func tunnel(_ request: FlowRequest) -> RequestVerdict?
    /// Request head read. True when the hook needs the whole request (body included) before
    /// the request can be decided.
    func requestHead(_ exchange: Exchange) -> Bool
    /// The request, whole when some hook asked for its body (`Exchange.collectedRequest`).
    func request(_ exchange: Exchange) -> RequestDecision
    /// Response head received. True when the hook needs the whole response before it goes on.
    func needsWholeResponse(_ exchange: Exchange) -> Bool
    /// A response head about to stream to the client.
    func responseHead(_ exchange: Exchange, head: inout HTTPResponseHead)
    /// A response collected whole (`Exchange.collectedResponse`), before it goes to the client.
    func response(_ exchange: Exchange) -> ResponseDecision
    /// The exchange switched protocols: `flow` is its handshake, so far.
    func upgraded(_ flow: Flow)
    /// The exchange switched to WebSocket: what this hook does with its messages; nil for nothing.
    func messageTool(for exchange: Exchange, on eventLoop: any EventLoop) -> (any WebSocketMessageTool)?
    /// Messages of an upgraded exchange (WebSocket), in the order they passed.
    func messages(_ messages: [WebSocketMessage], of flowID: UUID)
    /// The exchange is over, finished or failed (`flow.error`). `stored`, when given, is for the
    /// hook that keeps flows: it runs once the flow is kept (the client's last bytes wait for it).
    func ended(_ flow: Flow, stored: (@Sendable () -> Void)?)
    /// True while the hook is behind the traffic (the session store): requests wait before they
    /// go out and relays stop reading, so traffic slows to what it keeps up with.
    var isBehind: Bool { get }
}

extension ExchangeHook {
    func tunnel(_ request: FlowRequest) -> RequestVerdict? { nil }
    func requestHead(_ exchange: Exchange) -> Bool { false }
    func request(_ exchange: Exchange) -> RequestDecision { .proceed }
    func needsWholeResponse(_ exchange: Exchange) -> Bool { false }
    func responseHead(_ exchange: Exchange, head: inout HTTPResponseHead) {}
    func response(_ exchange: Exchange) -> ResponseDecision { .proceed }
    func upgraded(_ flow: Flow) {}
    func messageTool(for exchange: Exchange, on eventLoop: any EventLoop) -> (any WebSocketMessageTool)? { nil }
    func messages(_ messages: [WebSocketMessage], of flowID: UUID) {}
    func ended(_ flow: Flow, stored: (@Sendable () -> Void)?) {}
    var isBehind: Bool { false }
}

/// The hooks of a proxy, in the order they act.
struct ExchangeHooks: Sendable {
    let list: [any ExchangeHook]

    /// Rules first (they may change or answer the request, and choose the throttling), the
    /// scenario's state for the operation, breakpoints on what the rules made of it,
    /// throttling's latency just before the request leaves, and recording last, once the
    /// others have acted.
    static func standard(rules: ActiveRules, scenarios: ActiveScenario, breakpoints: Breakpoints, sink: any FlowSink) -> ExchangeHooks {
        ExchangeHooks(list: [
            RuleHook(rules: rules), ScenarioHook(scenarios: scenarios), BreakpointHook(breakpoints: breakpoints), ThrottleHook(), RecordingHook(sink: sink),
        ])
    }

    /// The first hook's verdict on a tunnel, in list order; nil when every hook lets it go on.
    func tunnel(_ request: FlowRequest) -> RequestVerdict? {
        for hook in list {
            if let verdict = hook.tunnel(request) { return verdict }
        }
        return nil
    }

    /// The hooks from `index` on over the request, in order, until one stops it: a hook's
    /// changed request is what the next one sees.
    func runRequest(_ exchange: Exchange, from index: Int) -> RequestOutcome {
        for position in list.indices where position >= index {
            switch list[position].request(exchange) {
            case .proceed: break
            case .send(let request): exchange.goOn(with: request)
            case .answer(let response): return .answer(response)
            case .drop(let reason): return .drop(reason)
            case .reset(let reason): return .reset(reason)
            case .wait: return .wait
            case .holdAtBreakpoint: return .holdAtBreakpoint(position: position)
            case .delay(let latency): return .delay(latency, position: position)
            case .waitFor(let wait): return .waitFor(wait, position: position)
            }
        }
        return .connect
    }

    /// The hooks from `index` on over the collected response, in order, until one stops it.
    func runResponse(_ exchange: Exchange, from index: Int) -> ResponseOutcome {
        for position in list.indices where position >= index {
            switch list[position].response(exchange) {
            case .proceed: break
            case .replace(let response): exchange.replaceCollectedResponse(with: response)
            case .holdAtBreakpoint: return .holdAtBreakpoint(position: position)
            case .resetMidBody(let reason): return .resetMidBody(reason)
            }
        }
        return .send
    }

    /// Runs every hook's request-head step; true when any needs the whole request.
    func requestHead(_ exchange: Exchange) -> Bool {
        var needsBody = false
        for hook in list where hook.requestHead(exchange) { needsBody = true }
        return needsBody
    }

    func needsWholeResponse(_ exchange: Exchange) -> Bool {
        list.contains { $0.needsWholeResponse(exchange) }
    }

    func responseHead(_ exchange: Exchange, head: inout HTTPResponseHead) {
        for hook in list { hook.responseHead(exchange, head: &head) }
    }

    func upgraded(_ flow: Flow) {
        for hook in list { hook.upgraded(flow) }
    }

    func messageTools(for exchange: Exchange, on eventLoop: any EventLoop) -> [any WebSocketMessageTool] {
        list.compactMap { $0.messageTool(for: exchange, on: eventLoop) }
    }

    func messages(_ messages: [WebSocketMessage], of flowID: UUID) {
        for hook in list { hook.messages(messages, of: flowID) }
    }

    func ended(_ flow: Flow, stored: (@Sendable () -> Void)? = nil) {
        for hook in list { hook.ended(flow, stored: stored) }
    }

    var isBehind: Bool {
        list.contains { $0.isBehind }
    }
}

/// Charles's tools: the rule pipeline in force when the exchange started (Block/Allow, Map
/// Local, Map Remote, Rewrite, No Caching; throttling profiles are chosen here too).
struct RuleHook: ExchangeHook {
    let rules: ActiveRules

    func tunnel(_ request: FlowRequest) -> RequestVerdict? {
        rules.current?.processTunnel(host: request.host, port: request.port)
    }

    func requestHead(_ exchange: Exchange) -> Bool {
        guard let pipeline = rules.current else { return false }
        exchange.rules = pipeline
        exchange.throttle = pipeline.throttleProfile(for: exchange.clientRequest)
        // A Map Local gRPC answer that waits for the server's reflection is decided with the
        // request read whole, so it goes out as soon as the schema is known.
        return pipeline.requestBodyNeeded(for: exchange.clientRequest) || pipeline.mapLocalAwaitsGRPCSchema(for: exchange.clientRequest)
    }

    func request(_ exchange: Exchange) -> RequestDecision {
        guard let rules = exchange.rules else { return .proceed }
        let request = exchange.collectedRequest
        // Map Local writes a gRPC answer with the method's types: learn them first.
        if rules.mapLocalAwaitsGRPCSchema(for: request) {
            return .waitFor(HookWait { [schemas = rules.grpcSchemas] in _ = await schemas.reflected(for: request) })
        }
        let verdict = rules.processRequest(request)
        exchange.recorder.addRuleApplications(verdict.applications)
        switch verdict.action {
        case .forward(let forwarded):
            return forwarded == request ? .proceed : .send(forwarded)
        case .block(.dropConnection):
            return .drop("blocked by the rules: connection dropped")
        case .block(.forbidden):
            return .answer(RulePipeline.forbiddenResponse)
        case .respond(let local):
            // A file that vanished since the rule matched: the real server answers.
            return local.loaded().map { .answer($0) } ?? .proceed
        }
    }

    func needsWholeResponse(_ exchange: Exchange) -> Bool {
        exchange.rules?.responseBodyNeeded(for: exchange.clientRequest) == true
    }

    func responseHead(_ exchange: Exchange, head: inout HTTPResponseHead) {
        guard let rules = exchange.rules, rules.hasResponseRules(for: exchange.clientRequest) else { return }
        let verdict = rules.processResponse(FlowResponse(head), for: exchange.clientRequest)
        exchange.recorder.addRuleApplications(verdict.applications)
        head.apply(verdict.response)
    }

    func response(_ exchange: Exchange) -> ResponseDecision {
        guard let rules = exchange.rules, let (head, body) = exchange.collectedResponse else { return .proceed }
        var response = FlowResponse(head)
        response.body = FlowBody(data: Data(body.readableBytesView))
        let verdict = rules.processResponse(response, for: exchange.clientRequest)
        exchange.recorder.addRuleApplications(verdict.applications)
        return verdict.response == response ? .proceed : .replace(verdict.response)
    }

    func messageTool(for exchange: Exchange, on eventLoop: any EventLoop) -> (any WebSocketMessageTool)? {
        exchange.rules?.messageRewrites(for: exchange.clientRequest).map(MessageRewriteTool.init)
    }
}

/// The scenario in force (`ActiveScenario`): the operation's state, chosen when its request
/// head arrives (as the client sent it) and marked on the exchange.
struct ScenarioHook: ExchangeHook {
    let scenarios: ActiveScenario

    func requestHead(_ exchange: Exchange) -> Bool {
        guard let (scenario, rule) = scenarios.state(for: exchange.clientRequest) else { return false }
        exchange.scenarioState = rule.state
        exchange.recorder.addRuleApplications([ActiveScenario.mark(scenario: scenario, rule: rule)])
        switch rule.state {
        case .error: exchange.scenarioName = scenario
        // Shaped as a throttling rule would shape it (and in its place: the scenario decides).
        case .slow(let profile): exchange.throttle = profile
        case .loading(let hold):
            // Held whole, as a request breakpoint holds it, so the list shows what will go on.
            exchange.breakpoint.loading = LoadingHold(reason: "scenario \(scenario): loading", seconds: hold)
            return true
        default: break
        }
        return false
    }

    func request(_ exchange: Exchange) -> RequestDecision {
        switch exchange.scenarioState {
        case nil, .asIs?, .empty?, .offline(.resetMidBody)?, .slow?:
            return .proceed
        case .loading(let hold)?:
            // Listed with the breakpoints' holds until released, its seconds pass or its client
            // leaves; a body too large to hold whole waits without being listed.
            if exchange.state.isRequestComplete { return .holdAtBreakpoint }
            exchange.breakpoint.loading = nil
            return hold.map { .delay(TimeAmount($0)) } ?? .wait
        case .error(let status, let body, let contentType)?:
            return .answer(scenarios.errorAnswer(
                status: status, body: body, contentType: contentType, scenario: exchange.scenarioName ?? "", request: exchange.clientRequest))
        case .offline(.reset)?:
            return .reset("scenario: offline (connection reset)")
        case .offline(.closed)?:
            return .drop("scenario: offline (connection closed without an answer)")
        case .offline(.timeout)?:
            return .wait
        case .recorded(let replay)?:
            // The recording had the call when the head arrived (`ActiveScenario.state(for:)`).
            return replay.reply(to: exchange.clientRequest).map(RequestDecision.answer) ?? .proceed
        }
    }

    func needsWholeResponse(_ exchange: Exchange) -> Bool {
        switch exchange.scenarioState {
        case .empty?, .offline(.resetMidBody)?: true
        default: false
        }
    }

    func response(_ exchange: Exchange) -> ResponseDecision {
        guard let (head, body) = exchange.collectedResponse else { return .proceed }
        switch exchange.scenarioState {
        case .empty?:
            var response = FlowResponse(head)
            response.body = FlowBody(data: Data(body.readableBytesView))
            let emptied = scenarios.emptyAnswer(response, request: exchange.clientRequest)
            return emptied == response ? .proceed : .replace(emptied)
        case .offline(.resetMidBody)?:
            return .resetMidBody("scenario: offline (connection reset mid-body)")
        default:
            return .proceed
        }
    }
}

/// Breakpoints: hold a matching exchange, whole, until the admin API decides.
struct BreakpointHook: ExchangeHook {
    let breakpoints: Breakpoints

    func requestHead(_ exchange: Exchange) -> Bool {
        exchange.breakpoint.stops = breakpoints.stops(for: exchange.clientRequest)
        return exchange.breakpoint.stopsAtRequest
    }

    func request(_ exchange: Exchange) -> RequestDecision {
        // Not when the body grew too large to hold: it streams on without stopping.
        exchange.breakpoint.stopsAtRequest && exchange.state.isRequestComplete ? .holdAtBreakpoint : .proceed
    }

    func needsWholeResponse(_ exchange: Exchange) -> Bool {
        exchange.breakpoint.stopsAtResponse
    }

    func response(_ exchange: Exchange) -> ResponseDecision {
        exchange.breakpoint.stopsAtResponse ? .holdAtBreakpoint : .proceed
    }

    /// Every WebSocket gets one: a message breakpoint set while it is open stops its messages too.
    func messageTool(for exchange: Exchange, on eventLoop: any EventLoop) -> (any WebSocketMessageTool)? {
        BreakpointMessageTool(
            breakpoints: breakpoints, handshake: exchange.clientRequest, response: exchange.recorder.flow.response,
            flowID: exchange.recorder.flow.id, eventLoop: eventLoop)
    }
}

/// Throttling's latency, once per request, just before it leaves (the bandwidth is shaped on
/// the server connection by `ThrottleHandler`).
struct ThrottleHook: ExchangeHook {
    func request(_ exchange: Exchange) -> RequestDecision {
        exchange.takeThrottleLatency().map { .delay($0) } ?? .proceed
    }
}

/// Keeps every exchange, and the messages of upgraded ones, in the session (`FlowSink`).
struct RecordingHook: ExchangeHook {
    let sink: any FlowSink

    var isBehind: Bool { sink.isBehind }

    func upgraded(_ flow: Flow) {
        sink.record(flow)
    }

    func messages(_ messages: [WebSocketMessage], of flowID: UUID) {
        sink.record(messages: messages, of: flowID)
    }

    func ended(_ flow: Flow, stored: (@Sendable () -> Void)?) {
        sink.record(.flow(flow, stored: stored))
    }
}
