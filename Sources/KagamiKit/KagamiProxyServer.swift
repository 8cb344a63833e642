// A recording proxy run inside the caller's process: port 0, loopback upstreams by default,
// rules replaceable while it runs, flows checked against descriptions when given.
import Foundation
import KagamiCertificates
import KagamiContractCheck
@_exported import KagamiFlow
import KagamiProxy
import KagamiRecording
import KagamiRecordingProxy
@_exported import KagamiRules
import KagamiScenarios

/// A Kagami proxy running in this process.
///
/// Start one with ``withKagamiProxy(configuration:_:)`` (shut down when the closure returns or
/// throws) or with ``start(configuration:)`` and ``shutdown()``. Point a client at ``proxyURL``
/// (forward mode) or send requests to it directly (reverse mode), then read ``flows`` or wait for them with
/// ``flows(count:timeout:)``.
public final class KagamiProxyServer: Sendable {
    /// How the proxy is set up; every field has a default suited to a test.
    public struct Configuration: Sendable {
        /// The proxy's settings, the type `kagami proxy`'s flags fill: where it listens (port 0,
        /// loopback), forward or reverse (`reverse`), the servers it may connect to (loopback
        /// only by default, so a test never reaches the outside world by mistake), the
        /// descriptions every flow is checked against (`contracts`), timeouts.
        public var proxy: ProxyOptions
        /// The rules in force at start.
        public var rules: RuleSet
        /// Where relative Map Local paths in `rules` start, and the one folder Map Local answers
        /// from (never Kagami's own folder, `$KAGAMI_HOME`, whatever it holds).
        public var rulesDirectory: String
        /// Where the flows are kept.
        public var recording: FlowRecording
        /// A scenario file (`docs/SCENARIOS.md`) whose scenarios ``KagamiProxyServer/withScenario(_:_:)``
        /// puts in force; nil: none.
        public var scenarios: String?

        /// The settings a test wants: a free loopback port, loopback servers only, a response
        /// timeout of 30 s.
        public static let inProcessOptions = ProxyOptions(
            port: 0, upstreamAllow: ["127.0.0.0/8", "::1", "localhost"], responseTimeout: .seconds(30))

        public init(
            proxy: ProxyOptions = Configuration.inProcessOptions, rules: RuleSet = RuleSet(),
            rulesDirectory: String = FileManager.default.currentDirectoryPath, recording: FlowRecording = .memory,
            scenarios: String? = nil
        ) {
            self.proxy = proxy
            self.rules = rules
            self.rulesDirectory = rulesDirectory
            self.recording = recording
            self.scenarios = scenarios
        }

        /// - Parameters:
        ///   - reverseTarget: a URL such as `http://127.0.0.1:8080` for a reverse proxy sending
        ///     every request there; nil for a forward proxy.
        ///   - upstreamAllow: the servers it may connect to, as `kagami proxy --upstream-allow`
        ///     takes them (`127.0.0.1`, `localhost:8080`, `10.0.0.0/8`, `*.staging.example`).
        ///   - contracts: descriptions (API Blueprint or OpenAPI) every flow is checked against,
        ///     as `kagami proxy --contract` takes them: `FILE` or `FILE=BASEURL`.
        public init(
            host: String = "127.0.0.1", port: Int = 0, reverseTarget: String? = nil,
            upstreamAllow: [String] = Configuration.inProcessOptions.upstreamAllow,
            rules: RuleSet = RuleSet(), rulesDirectory: String = FileManager.default.currentDirectoryPath,
            contracts: [String] = [], recording: FlowRecording = .memory, scenarios: String? = nil,
            responseTimeout: Duration = Configuration.inProcessOptions.responseTimeout,
            clientIdleTimeout: Duration = Configuration.inProcessOptions.clientIdleTimeout
        ) {
            var proxy = Configuration.inProcessOptions
            proxy.host = host
            proxy.port = port
            proxy.reverse = reverseTarget
            proxy.upstreamAllow = upstreamAllow
            proxy.contracts = contracts
            proxy.responseTimeout = responseTimeout
            proxy.clientIdleTimeout = clientIdleTimeout
            self.init(proxy: proxy, rules: rules, rulesDirectory: rulesDirectory, recording: recording, scenarios: scenarios)
        }
    }

    public let configuration: Configuration
    /// The port it listens on.
    public let port: Int
    private let proxy: RecordingProxy
    private let memory: FlowMemory
    private var server: ProxyServer { proxy.server }

    private init(configuration: Configuration, port: Int, proxyURL: URL, proxy: RecordingProxy, memory: FlowMemory) {
        self.configuration = configuration
        self.port = port
        self.proxyURL = proxyURL
        self.proxy = proxy
        self.memory = memory
    }

    /// Starts a proxy; throws ``KagamiSetupError`` when a setting, a rule or a description
    /// can't be used.
    public static func start(configuration: Configuration = Configuration()) async throws -> KagamiProxyServer {
        let setup: ProxySetup
        do {
            setup = try ProxySetup(configuration.proxy)
        } catch {
            throw KagamiSetupError(error.description)
        }
        let pipeline = try Self.pipeline(configuration.rules, folder: configuration.rulesDirectory)
        let scenarios = try await ActiveScenario.loaded(from: configuration.scenarios)
        let recorder = try FlowRecorder(recording: configuration.recording)
        let proxy = try setup.build(
            store: recorder.store, contractTiming: .first, then: [recorder.memory], rules: ActiveRules(pipeline), scenarios: scenarios)
        let port = try await proxy.start()
        let host = configuration.proxy.host
        guard let url = httpURL(host: host, port: port) else {
            try await proxy.stop()
            throw KagamiSetupError("the proxy listens on \(host) port \(port), which makes no http URL")
        }
        return KagamiProxyServer(configuration: configuration, port: port, proxyURL: url, proxy: proxy, memory: recorder.memory)
    }

    /// `http://HOST:PORT`: the proxy URL to give a client (`HTTP_PROXY`, curl `-x`,
    /// `connectionProxyDictionary`), or in reverse mode the base URL to send requests to.
    public let proxyURL: URL

    /// Every flow recorded so far, oldest first, with its contract violations.
    public var flows: [Flow] { memory.flows }

    /// The flows recorded from now on, each once it has been checked against the descriptions.
    /// The sequence ends when the proxy shuts down.
    public var newFlows: AsyncStream<Flow> { memory.subscribe() }

    /// Waits until at least `count` flows have been recorded; throws ``FlowWaitTimeout`` after
    /// `timeout`. A flow is recorded once its exchange has ended, which can be just after the
    /// client has its response.
    public func flows(count: Int, timeout: Duration = .seconds(10)) async throws -> [Flow] {
        try await memory.flows(count: count, timeout: timeout)
    }

    /// The messages a WebSocket flow relayed so far, in the order they passed (pings and pongs
    /// past the first few of each direction are counted in one message).
    public func webSocketMessages(of flowID: UUID) -> [WebSocketMessage] {
        memory.messages(of: flowID)
    }

    /// The rules in force.
    public var rules: RuleSet { server.rules.current?.rules ?? RuleSet() }

    /// Replaces the rules in force; exchanges that start afterwards see the new ones.
    public func setRules(_ rules: RuleSet, baseDirectory: String? = nil) throws {
        server.rules.replace(with: try Self.pipeline(rules, folder: baseDirectory ?? configuration.rulesDirectory))
    }

    /// Replaces the rules in force with a rules document (YAML or JSON, as `kagami proxy --rules`
    /// reads); errors name the line and field.
    public func setRules(document text: String, baseDirectory: String? = nil) throws {
        let rules: RuleSet
        do {
            rules = try RuleSet(parsing: text, file: "rules")
        } catch {
            throw KagamiSetupError(error.description)
        }
        try setRules(rules, baseDirectory: baseDirectory)
    }

    /// The scenario in force, nil when none is.
    public var scenario: String? { server.scenarios.current?.name }

    /// Runs `body` with the scenario `name` of ``Configuration/scenarios`` in force (its
    /// operations empty, loading, in error, offline for the exchanges that start meanwhile),
    /// then puts back the one in force before. Throws ``KagamiSetupError`` for a name the file
    /// doesn't have.
    public func withScenario<Result: Sendable>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        try await server.scenarios.kitScope(name, body)
    }

    /// The requests a scenario's loading state holds now, oldest first: a test waits for its
    /// request to be here, looks at the app's loading screen, then releases it.
    public var loadingRequests: [FlowRequest] { server.breakpoints.loadingRequests }

    /// Lets every request a loading state holds go on as it came (the client gets the real
    /// answer), as Release does in the web UI; returns how many went. A timed loading state
    /// also ends by itself.
    @discardableResult
    public func releaseLoading() -> Int { server.breakpoints.releaseLoading() }

    /// Stops accepting clients, waits for the flows already handed over to be kept (and
    /// written to the session file), and ends ``newFlows`` sequences.
    public func shutdown() async throws {
        try await proxy.stop()
        memory.finish()
    }

    private static func pipeline(_ rules: RuleSet, folder: String) throws -> RulePipeline? {
        guard rules != RuleSet() else { return nil }
        do {
            return try RulePipeline(rules, mapLocalFolders: MapLocalFolders(base: folder, excluding: [KagamiHome.path]))
        } catch {
            throw KagamiSetupError(error.description)
        }
    }
}

/// Runs `body` with a proxy started for it, and shuts the proxy down when `body` returns or
/// throws (including when its task is cancelled).
public func withKagamiProxy<Result: Sendable>(
    configuration: KagamiProxyServer.Configuration = .init(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (KagamiProxyServer) async throws -> Result
) async throws -> Result {
    let proxy = try await KagamiProxyServer.start(configuration: configuration)
    let result: Result
    do {
        result = try await body(proxy)
    } catch {
        try? await proxy.shutdown()
        throw error
    }
    try await proxy.shutdown()
    return result
}

/// A setting, rule or description that can't be used, said with what and where.
public struct KagamiSetupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// `http://HOST:PORT`, with an IPv6 host in brackets.
func httpURL(host: String, port: Int) -> URL? {
    URL(string: "http://\(Authority(host: host, port: port))")
}
