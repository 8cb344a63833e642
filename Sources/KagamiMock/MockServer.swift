// The mock server: serves a description over HTTP/1.1 (SwiftNIO), reloads it when the file changes.
import Foundation
import KagamiContract
import KagamiContractCheck
import KagamiControl
import KagamiDescription
import KagamiFlow
import KagamiOutput
import KagamiRules
import KagamiScenarios
import KagamiURITemplate
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

public enum MockServerError: Error, CustomStringConvertible {
    case unreadable(String)
    /// The description has errors; each line is `file:line:column: error: message`.
    case invalidDescription([String])

    public var description: String {
        switch self {
        case .unreadable(let reason): reason
        case .invalidDescription(let lines): "the description has errors:\n" + lines.joined(separator: "\n")
        }
    }
}

public final class MockServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port.
        public var port: Int
        /// Check requests against parameters and body schemas (`--no-validate` turns it off).
        public var validates: Bool
        /// Check `format`s with a precise definition (date-time, email, uuid, int32…) in what
        /// requests carry (`--no-assert-format` turns it off).
        public var assertsFormat: Bool
        /// Answer CORS preflights and add `Access-Control-Allow-*` headers.
        public var cors: Bool
        /// How often the description file's modification time is checked; nil turns reloading off.
        public var reloadInterval: Duration?
        /// Recorded exchanges answered before the description (`--session`, `--har`).
        public var recorded: RecordedTraffic?
        /// Where a request goes that neither the recording nor the description answers
        /// (`--fallback URL`: scheme, authority and an optional base path); nil answers 404.
        public var fallback: String?
        /// The scenario in force: operations in their empty, loading, error, offline, slow or recorded state
        /// (`--scenarios FILE --scenario NAME`), switched while the mock runs.
        public var scenarios: ActiveScenario
        /// The requests a loading state holds, listed and released as a proxy's held
        /// exchanges are (the admin API's `/api/breakpoints/held`).
        public var holds: Breakpoints

        public init(
            host: String = "127.0.0.1", port: Int = 0, validates: Bool = true, cors: Bool = false, reloadInterval: Duration? = .milliseconds(300),
            recorded: RecordedTraffic? = nil, fallback: String? = nil, assertsFormat: Bool = true,
            scenarios: ActiveScenario = ActiveScenario(), holds: Breakpoints = Breakpoints()
        ) {
            self.holds = holds
            self.fallback = fallback
            self.assertsFormat = assertsFormat
            self.scenarios = scenarios
            self.host = host
            self.port = port
            self.validates = validates
            self.cors = cors
            self.reloadInterval = reloadInterval
            self.recorded = recorded
        }
    }

    /// Where reload errors and notices go; standard error by default.
    public typealias Log = @Sendable (String) -> Void

    public static let standardErrorLog: Log = { line in
        Console.error(line + "\n")
    }

    private let channel: any Channel
    private let state: NIOLockedValueBox<MockState>
    private let recorded: RecordedAnswers?
    private let fallback: MockFallback?
    private let watcher: NIOLockedValueBox<Task<Void, Never>?>
    public let configuration: Configuration
    public let port: Int

    /// `http://127.0.0.1:PORT`
    public var url: String {
        "http://\(Authority(host: configuration.host, port: port))"
    }

    /// The contract being served (the last good version of the file).
    public var contract: APIContract { state.withLockedValue { $0.routes.contract } }

    /// Serves the description in `path`, reloading it when the file changes. `progress` hears
    /// how far the first reading has got.
    public static func start(
        path: String, configuration: Configuration = Configuration(), sink: (any FlowSink)? = nil, log: @escaping Log = standardErrorLog,
        progress: ReadingProgress.Report? = nil
    ) async throws -> MockServer {
        let file: DescriptionFile
        do {
            file = try DescriptionFile(path: path, progress: progress)
        } catch {
            throw MockServerError.unreadable(error.description)
        }
        let server = try await start(file: file, configuration: configuration, sink: sink)
        if let interval = configuration.reloadInterval {
            server.watch(path: path, every: interval, log: log)
        }
        return server
    }

    /// Serves recorded traffic alone (`configuration.recorded`): what it doesn't hold is a 404
    /// naming the closest recorded requests.
    public static func start(recorded: RecordedTraffic, configuration: Configuration = Configuration(), sink: (any FlowSink)? = nil) async throws -> MockServer {
        var configuration = configuration
        configuration.recorded = recorded
        return try await start(state: .recordingOnly(validates: configuration.validates), configuration: configuration, sink: sink)
    }

    /// Serves a description given as text; the format is detected when nil.
    public static func start(
        text: String, format: DescriptionFile.Format? = nil, configuration: Configuration = Configuration(), sink: (any FlowSink)? = nil
    ) async throws -> MockServer {
        try await start(file: DescriptionFile(text: text, format: format), configuration: configuration, sink: sink)
    }

    private static func start(file: DescriptionFile, configuration: Configuration, sink: (any FlowSink)?) async throws -> MockServer {
        try await start(state: MockState.make(file: file, validates: configuration.validates, assertsFormat: configuration.assertsFormat).get(), configuration: configuration, sink: sink)
    }

    private static func start(state first: MockState, configuration: Configuration, sink: (any FlowSink)?) async throws -> MockServer {
        let state = NIOLockedValueBox(first)
        if first.describes, configuration.recorded == nil, configuration.fallback == nil {
            // Only the description answers: a scenario's operation it hasn't is a mistake
            // (a typo, an operation renamed since), refused at start and on each reload.
            do {
                try configuration.scenarios.require { file in state.withLockedValue { $0 }.unknownOperation(in: file) }
            } catch {
                throw MockServerError.unreadable(error.description)
            }
        }
        let recorded = configuration.recorded.map(RecordedAnswers.init)
        let fallback = configuration.fallback.map(MockFallback.init(base:))
        let host = configuration.host
        let cors = configuration.cors
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        MockHandler(
                            state: state, recorded: recorded, fallback: fallback, cors: cors, scenarios: configuration.scenarios,
                            holds: configuration.holds, sink: sink, host: host))
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        return MockServer(channel: channel, state: state, recorded: recorded, fallback: fallback, configuration: configuration)
    }

    private init(channel: any Channel, state: NIOLockedValueBox<MockState>, recorded: RecordedAnswers?, fallback: MockFallback?, configuration: Configuration) {
        self.channel = channel
        self.state = state
        self.recorded = recorded
        self.fallback = fallback
        self.watcher = NIOLockedValueBox(nil)
        self.configuration = configuration
        self.port = channel.localAddress?.port ?? configuration.port
    }

    public func stop() async throws {
        watcher.withLockedValue { $0?.cancel() }
        try await channel.close()
        await fallback?.shutdown()
    }

    /// The scenario in force; switch it at any time.
    public var scenarios: ActiveScenario { configuration.scenarios }

    /// The requests a loading state holds now; `resolve(id, with: .cancel)` lets one be answered.
    public var holds: Breakpoints { configuration.holds }

    /// Answers one request without the network, as the server would: from the recording, the
    /// description or the fallback, in the scenario's error or empty state when one is in force
    /// (a loading, slow or offline state is the connection's, so not applied here).
    public func respond(to request: MockRequest) async -> MockResponse {
        let scenarioState = configuration.scenarios.state(for: request.flowRequest)
        if case .error(let status, let body, let contentType)? = scenarioState?.rule.state, let scenarioState {
            return state.withLockedValue { $0 }.error(
                status: status, body: body, contentType: contentType, scenario: scenarioState.scenario, request: request, cors: configuration.cors)
        }
        if case .recorded(let replay)? = scenarioState?.rule.state, let response = replay.reply(to: request.flowRequest) {
            return MockResponse(response)
        }
        let answer = state.withLockedValue { $0 }.answer(request, recorded: recorded, cors: configuration.cors)
        var response = answer.response
        if answer.unmatched, let fallback {
            response = await fallback.forward(request)
            if configuration.cors { response.headers += MockState.corsHeaders(for: request) + [("Access-Control-Expose-Headers", "*")] }
        }
        if case .empty? = scenarioState?.rule.state {
            response = MockResponse(state.withLockedValue { $0 }.emptied(response, for: request))
        }
        return response
    }

    /// Re-reads the description now; the errors (with line numbers) when it is broken, in which
    /// case the last good version keeps being served.
    @discardableResult
    public func reload(path: String) -> [String] {
        let file: DescriptionFile
        do {
            file = try DescriptionFile(path: path)
        } catch {
            return [error.description]
        }
        switch MockState.make(file: file, validates: configuration.validates, assertsFormat: configuration.assertsFormat) {
        case .success(let fresh):
            state.withLockedValue { $0 = fresh }
            return []
        case .failure(.invalidDescription(let errors)):
            return errors
        case .failure(let error):
            return [error.description]
        }
    }

    private func watch(path: String, every interval: Duration, log: @escaping Log) {
        let task = Task { [weak self] in
            var last = Self.modificationDate(path)
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                let now = Self.modificationDate(path)
                guard now != last, let self else { continue }
                last = now
                let errors = self.reload(path: path)
                if errors.isEmpty {
                    log("Reloaded \(path): \(self.contract.actions.count) actions")
                } else {
                    log("Keeping the last good version of \(path):\n" + errors.joined(separator: "\n"))
                }
            }
        }
        watcher.withLockedValue { $0 = task }
    }

    private static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }
}

/// One version of the description, ready to serve; replaced whole on reload.
struct MockState: Sendable {
    let routes: OperationRoutes
    let responder: MockResponder
    /// The description defines `GET /` itself, so the docs page lives only at `/__docs`.
    let ownsRoot: Bool
    /// False when a recording is served alone: no docs page, and what the recording doesn't
    /// hold is not looked up in an empty description.
    let describes: Bool
    /// The docs page of this version of the description, rendered when first asked for.
    let docsPages: DocsPages

    /// The state for `file`, or its errors (the reader's and unparseable templates).
    static func make(file: DescriptionFile, validates: Bool, assertsFormat: Bool) -> Result<MockState, MockServerError> {
        let routes = OperationRoutes(contract: file.contract, assertsFormat: assertsFormat)
        let errors = file.problems(routes: routes, onlyErrors: true)
        guard errors.isEmpty else { return .failure(.invalidDescription(errors)) }
        return .success(MockState(routes: routes, validates: validates, describes: true))
    }

    /// The empty state's answer: as the request's operation describes it, else with its
    /// collections emptied.
    func emptied(_ response: MockResponse, for request: MockRequest) -> FlowResponse {
        let real = response.flowResponse
        return responder.emptied(real, for: request) ?? ScenarioAnswers.emptied(real)
    }

    static func recordingOnly(validates: Bool) -> MockState {
        MockState(routes: OperationRoutes(contract: APIContract(format: .openAPI31, name: "Recorded traffic")), validates: validates, describes: false)
    }

    private init(routes: OperationRoutes, validates: Bool, describes: Bool) {
        self.routes = routes
        self.describes = describes
        responder = MockResponder(routes: routes, validates: validates)
        docsPages = DocsPages(contract: routes.contract)
        ownsRoot = routes.routes.contains { $0.method == "GET" && $0.pathTemplate.match(path: "/", query: nil) != nil }
    }

    /// The first operation of a scenario `file` the description hasn't (no action matches its
    /// method and path template), as an error naming the file and the field.
    func unknownOperation(in file: ScenarioFile) -> RuleDocumentError? {
        for (index, scenario) in file.scenarios.enumerated() {
            for (position, rule) in scenario.rules.enumerated() {
                guard let method = rule.selector.method, let template = rule.selector.pathTemplate else { continue }
                // A path the template gives: each variable a sample value, the query left out.
                let path = template
                    .replacingOccurrences(of: #"\{[?&][^}]*\}"#, with: "", options: .regularExpression)
                    .replacingOccurrences(of: #"\{[^}]*\}"#, with: "1", options: .regularExpression)
                let message: String
                switch routes.lookup(method: method, target: URITemplate.Target(path)) {
                case .matched:
                    continue
                case .methodNotAllowed(let allowed):
                    message = "\(method) \(template) is not an operation of the description (\(template) answers \(allowed.joined(separator: ", ")))"
                case .notFound(let closest):
                    message = "\(method) \(template) is not an operation of the description"
                        + (closest.isEmpty ? "" : " (closest: \(closest.joined(separator: ", ")))")
                }
                return RuleDocumentError(file: file.name, line: nil, column: nil, field: "scenarios[\(index)].states[\(position)].operation", message: message)
            }
        }
        return nil
    }

    /// A scenario's error state with `status`: the body it gives, else the one the description
    /// documents for that status, else a problem document naming the scenario.
    func error(
        status: Int, body: String?, contentType: String?, scenario: String, request: MockRequest, cors: Bool
    ) -> MockResponse {
        guard body == nil, describes, var documented = responder.documented(status: status, for: request) else {
            return MockResponse(ScenarioAnswers.error(status: status, body: body, contentType: contentType, scenario: scenario, request: request.flowRequest))
        }
        if cors { documented.headers += Self.corsHeaders(for: request) + [("Access-Control-Expose-Headers", "*")] }
        return documented
    }

    /// The answer, and whether nothing recorded or described matched (what `--fallback` takes).
    func answer(_ request: MockRequest, recorded: RecordedAnswers?, cors: Bool) -> (response: MockResponse, unmatched: Bool) {
        let method = request.method.uppercased()
        if cors, method == "OPTIONS", let requested = request.header("Access-Control-Request-Method") {
            return (MockResponse(status: 204, headers: Self.corsHeaders(for: request) + [
                ("Access-Control-Allow-Methods", requested),
                ("Access-Control-Allow-Headers", request.header("Access-Control-Request-Headers") ?? "*"),
                ("Access-Control-Max-Age", "86400"),
            ]), false)
        }
        var response: MockResponse
        var closestRecorded: [String] = []
        if let recorded {
            switch recorded.reply(to: request) {
            case .recorded(let answer):
                response = RecordedAnswers.response(answer)
                if cors { response.headers += Self.corsHeaders(for: request) + [("Access-Control-Expose-Headers", "*")] }
                return (response, false)
            case .unmatched(let closest):
                closestRecorded = closest
            }
        }
        let path = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var unmatched = false
        if !describes {
            response = RecordedAnswers.unmatched(request, closest: closestRecorded)
            unmatched = true
        } else if (method == "GET" || method == "HEAD"), path == "/__docs" || (path == "/" && !ownsRoot) {
            // The curl lines use the address the client reached the mock at.
            let page = docsPages.page(baseURL: "http://" + (request.header("Host") ?? "127.0.0.1"))
            response = MockResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: page)
        } else {
            let answer = responder.respond(to: request)
            response = answer.response
            unmatched = !answer.routed
        }
        if cors { response.headers += Self.corsHeaders(for: request) + [("Access-Control-Expose-Headers", "*")] }
        return (response, unmatched)
    }

    static func corsHeaders(for request: MockRequest) -> [(name: String, value: String)] {
        if let origin = request.header("Origin") {
            return [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")]
        }
        return [("Access-Control-Allow-Origin", "*")]
    }
}

/// A description's docs page, rendered once for each address the mock is reached at (the
/// curl lines name it) rather than on every request: a description of thousands of operations
/// renders for seconds. A new version of the description comes with a new one.
final class DocsPages: Sendable {
    /// Addresses whose page is kept; a page for another is rendered each time (any client
    /// can send any Host).
    static let kept = 4
    private let contract: APIContract
    private let pages = Mutex<[String: [UInt8]]>([:])

    init(contract: APIContract) {
        self.contract = contract
    }

    func page(baseURL: String) -> [UInt8] {
        if let page = pages.withLock({ $0[baseURL] }) { return page }
        let page = Array(DocsPage.render(contract, baseURL: baseURL).utf8)
        pages.withLock { pages in
            if pages.count < Self.kept { pages[baseURL] = page }
        }
        return page
    }
}

private final class MockHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: NIOLockedValueBox<MockState>
    private let recorded: RecordedAnswers?
    private let fallback: MockFallback?
    private let cors: Bool
    private let scenarios: ActiveScenario
    private let holds: Breakpoints
    /// The loading hold of the request being answered, until it is released.
    private var heldID: UUID?
    private var autoRelease: Scheduled<Void>?
    private let sink: (any FlowSink)?
    private let host: String
    private var head: HTTPRequestHead?
    /// How the scenario in force touched the request being answered (the pipeline handler
    /// gives this handler one request at a time).
    private var scenarioMark: RuleApplication?
    private var body = ByteBuffer()
    private var started = Date()
    /// A slow state's upload bandwidth over the request being read: its body is taken at that
    /// rate (reads stop while it is ahead), and it is answered once its last byte is taken.
    private var upload: ThrottleShaper<ContinuousClock>?
    private var uploadTakenAt: ContinuousClock.Instant?
    private var readsResume: Scheduled<Void>?

    init(
        state: NIOLockedValueBox<MockState>, recorded: RecordedAnswers?, fallback: MockFallback?, cors: Bool, scenarios: ActiveScenario,
        holds: Breakpoints, sink: (any FlowSink)?, host: String
    ) {
        self.state = state
        self.scenarios = scenarios
        self.holds = holds
        self.recorded = recorded
        self.fallback = fallback
        self.cors = cors
        self.sink = sink
        self.host = host
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            if sink != nil { started = Date() }
            upload = nil
            uploadTakenAt = nil
            let request = MockRequest(method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) })
            if case .slow(let profile)? = scenarios.state(for: request.flowRequest)?.rule.state, profile.bytesPerSecond(.upload) != nil {
                upload = ThrottleShaper(profile: profile, direction: .upload, clock: ContinuousClock())
            }
            if head.headers["expect"].first?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var buffer):
            let count = buffer.readableBytes
            body.writeBuffer(&buffer)
            if upload != nil { takeAtUploadRate(count, context: context) }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = MockRequest(
                method: head.method.rawValue, target: head.uri,
                headers: head.headers.map { ($0.name, $0.value) }, body: Array(body.readableBytesView))
            guard let takenAt = uploadTakenAt, ContinuousClock.now < takenAt else {
                respond(to: request, head: head, context: context)
                return
            }
            // The body's last bytes are still on their way at the upload bandwidth.
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: TimeAmount(ContinuousClock.now.duration(to: takenAt))) {
                bound.value.handler.respond(to: request, head: head, context: bound.value.context)
            }
        }
    }

    /// `count` body bytes read under a slow state: when the upload bandwidth hasn't carried
    /// them yet, reading stops until it has.
    private func takeAtUploadRate(_ count: Int, context: ChannelHandlerContext) {
        guard var shaper = upload, let last = shaper.schedule(byteCount: count).last else { return }
        upload = shaper
        uploadTakenAt = last.releaseAt
        let wait = ContinuousClock.now.duration(to: last.releaseAt)
        guard wait > .zero else { return }
        readsResume?.cancel()
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        readsResume = context.eventLoop.scheduleTask(in: TimeAmount(wait)) {
            channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
    }

    /// The whole request, answered in the state the scenario in force puts it in.
    private func respond(to request: MockRequest, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let (scenario, rule) = scenarios.state(for: request.flowRequest) else {
            scenarioMark = nil
            answer(request, head: head, state: nil, context: context)
            return
        }
        scenarioMark = ActiveScenario.mark(scenario: scenario, rule: rule)
        switch rule.state {
        case .asIs, .empty, .offline(.resetMidBody):
            answer(request, head: head, state: rule.state, context: context)
        case .loading(let seconds):
            hold(request, head: head, reason: "scenario \(scenario): loading", seconds: seconds, context: context)
        case .recorded(let replay):
            if let response = replay.reply(to: request.flowRequest) {
                finish(request, MockResponse(response), head: head, context: context)
            } else {
                // The call was there when the request was looked up: answered as-is.
                scenarioMark = nil
                answer(request, head: head, state: nil, context: context)
            }
        case .slow(let profile):
            // The latency once, then the body at the profile's bandwidth (`deliver`).
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: TimeAmount(profile.latency)) {
                bound.value.handler.answer(request, head: head, state: rule.state, context: bound.value.context)
            }
        case .error(let status, let body, let contentType):
            let response = state.withLockedValue { $0 }.error(
                status: status, body: body, contentType: contentType, scenario: scenario, request: request, cors: cors)
            finish(request, response, head: head, context: context)
        case .offline(.reset):
            Self.reset(context.channel)
        case .offline(.closed):
            context.close(promise: nil)
        case .offline(.timeout):
            // Nothing is sent: the client's own timeout ends the connection.
            break
        }
    }

    /// A loading state: the request waits, listed in `holds`, until it is released (answered
    /// as-is, or as the edited request; aborted: closed without an answer), its `seconds` pass,
    /// or its client leaves.
    private func hold(_ request: MockRequest, head: HTTPRequestHead, reason: String, seconds: Duration?, context: ChannelHandlerContext) {
        let id = UUID()
        heldID = id
        let held = HeldExchange(
            id: id, flowID: UUID(), phase: .request, heldAt: Date(), request: request.flowRequest(host: host), locations: [], reason: reason)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        holds.hold(held) { resolution in
            loop.execute {
                let (handler, context) = bound.value
                guard handler.heldID == id else { return }
                handler.heldID = nil
                handler.autoRelease?.cancel()
                switch resolution {
                case .executeRequest(let edited):
                    handler.answer(MockRequest(edited), head: head, state: nil, context: context)
                case .abort:
                    context.close(promise: nil)
                default:
                    handler.answer(request, head: head, state: nil, context: context)
                }
            }
        }
        if let seconds {
            let holds = holds
            autoRelease = loop.scheduleTask(in: TimeAmount(seconds)) { holds.autoContinue(id) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        readsResume?.cancel()
        autoRelease?.cancel()
        if let heldID { holds.release(heldID) }
        heldID = nil
        context.fireChannelInactive()
    }

    /// The answer from the recording, the description or the fallback, in `state` (empty: its
    /// collections emptied; reset mid-body: cut off).
    private func answer(_ request: MockRequest, head: HTTPRequestHead, state scenarioState: OperationState?, context: ChannelHandlerContext) {
        let current = state.withLockedValue { $0 }
        let answer = current.answer(request, recorded: recorded, cors: cors)
        guard answer.unmatched, let fallback else {
            deliver(request, answer.response, head: head, state: scenarioState, context: context)
            return
        }
        // The server's answer arrives later on this loop; the pipeline handler holds the
        // connection's next request until this one's response has ended.
        let cors = cors
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let forwarded = context.eventLoop.makePromise(of: MockResponse.self)
        forwarded.completeWithTask {
            var response = await fallback.forward(request)
            if cors { response.headers += MockState.corsHeaders(for: request) + [("Access-Control-Expose-Headers", "*")] }
            return response
        }
        forwarded.futureResult.whenSuccess { response in
            bound.value.handler.deliver(request, response, head: head, state: scenarioState, context: bound.value.context)
        }
    }

    private func deliver(_ request: MockRequest, _ response: MockResponse, head: HTTPRequestHead, state: OperationState?, context: ChannelHandlerContext) {
        switch state {
        case .empty?:
            finish(request, MockResponse(self.state.withLockedValue { $0 }.emptied(response, for: request)), head: head, context: context)
        case .offline(.resetMidBody)?:
            var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers))), promise: nil)
            var half = context.channel.allocator.buffer(capacity: response.body.count / 2)
            half.writeBytes(response.body.prefix(response.body.count / 2))
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(half))), promise: nil)
            Self.reset(context.channel)
        case .slow(let profile)?:
            finish(request, response, head: head, context: context, shaping: profile)
        default:
            finish(request, response, head: head, context: context)
        }
    }

    /// Closes with a TCP reset (SO_LINGER 0), as a server that vanished does.
    private static func reset(_ channel: any Channel) {
        guard let socket = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Writes the answer (its body released at `shaping`'s bandwidth when given) and records
    /// the exchange once the answer has ended.
    private func finish(
        _ request: MockRequest, _ response: MockResponse, head: HTTPRequestHead, context: ChannelHandlerContext, shaping: ThrottleProfile? = nil
    ) {
        guard let shaping, head.method != .HEAD, !response.body.isEmpty else {
            write(response, for: head, context: context)
            if let sink { sink.record(flow(request, response, head: head, context: context)) }
            return
        }
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        if !head.isKeepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers))),
            promise: nil)
        // The chunks the throttle releases, each at its time; the end after the last.
        let clock = ContinuousClock()
        var shaper = ThrottleShaper(profile: shaping, direction: .download, clock: clock)
        let start = clock.now
        var offset = 0
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let releases = shaper.schedule(byteCount: response.body.count, arrivingAt: start)
        for (index, release) in releases.enumerated() {
            let chunk = response.body[offset..<(offset + release.byteCount)]
            offset += release.byteCount
            let isLast = index == releases.count - 1
            context.eventLoop.scheduleTask(in: TimeAmount(max(start.duration(to: release.releaseAt), .zero))) {
                let (handler, context) = bound.value
                var buffer = context.channel.allocator.buffer(capacity: chunk.count)
                buffer.writeBytes(chunk)
                context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                guard isLast else { return }
                let done = context.writeAndFlush(handler.wrapOutboundOut(.end(nil)))
                if !head.isKeepAlive {
                    let channel = context.channel
                    done.whenComplete { _ in channel.close(promise: nil) }
                }
                if let sink = handler.sink { sink.record(handler.flow(request, response, head: head, context: context)) }
            }
        }
    }

    private func write(_ response: MockResponse, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 2)
        for header in response.headers { headers.add(name: header.name, value: header.value) }
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD, !response.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func flow(_ request: MockRequest, _ response: MockResponse, head: HTTPRequestHead, context: ChannelHandlerContext) -> Flow {
        let local = context.channel.localAddress
        let version = "HTTP/\(head.version.major).\(head.version.minor)"
        return Flow(
            mode: .mock,
            clientAddress: context.channel.remoteAddress.map { Authority(host: $0.ipAddress ?? "?", port: $0.port ?? 0).description },
            serverAddress: local.map { Authority(host: $0.ipAddress ?? "?", port: $0.port ?? 0).description },
            request: FlowRequest(
                method: request.method, scheme: "http", host: head.headers["host"].first.map(Self.hostName) ?? host,
                port: local?.port ?? 0, target: request.target, version: version,
                headers: HeaderFields(request.headers), body: FlowBody(data: Data(request.body))),
            response: FlowResponse(
                status: response.status, reason: HTTPResponseStatus(statusCode: response.status).reasonPhrase, version: version,
                headers: HeaderFields(response.headers.map { ($0.name, $0.value) } + [("Content-Length", String(response.body.count))]),
                body: FlowBody(data: Data(response.body))),
            timings: FlowTimings(start: started, requestSent: started, firstByte: Date(), end: Date()),
            appliedRules: scenarioMark.map { [$0] } ?? [])
    }

    /// `localhost:3000` → `localhost`; `[::1]:3000` → `::1`.
    private static func hostName(_ authority: String) -> String {
        Authority.split(authority)?.host ?? authority
    }
}
