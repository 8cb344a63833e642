import Foundation
import Hummingbird
import Logging
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiRecording
import KagamiStore
import NIOCore
import Synchronization

/// Kagami's web UI: the page (static files shipped with the module) and the JSON admin API it
/// uses, on their own port. Loopback by default; every request needs the token (`AdminToken`).
public final class UIServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// What `/api/status` reports about the proxy, for the first-run screen.
        public var proxyAddress: String
        public var sessionPath: String
        public var version: String
        /// What every client must present (`kagami proxy` gives the installation's,
        /// `AdminToken.installation()`); nil makes one up for this server.
        public var token: String?
        /// Seconds between keep-alive comments on the event stream.
        public var heartbeatInterval: Double
        /// How long wrong tokens from one address are remembered (past 20 in it, 429).
        public var wrongTokenWindow: Duration
        /// What gRPC messages are read with (names and types); nil reads them without a schema.
        public var grpcSchemas: GRPCSchemas?

        public init(
            host: String = "127.0.0.1", port: Int = 8889, proxyAddress: String, sessionPath: String, version: String,
            token: String? = nil, heartbeatInterval: Double = 15, wrongTokenWindow: Duration = .seconds(60)
        ) {
            self.host = host
            self.port = port
            self.proxyAddress = proxyAddress
            self.sessionPath = sessionPath
            self.version = version
            self.token = token
            self.heartbeatInterval = heartbeatInterval
            self.wrongTokenWindow = wrongTokenWindow
        }
    }

    public let configuration: Configuration
    /// The token clients must present.
    public let token: String
    /// What the page and the admin API act on.
    let routes: UIRoutes
    var store: any FlowStore { routes.store }
    var hub: FlowHub { routes.hub }
    private let running = Mutex<Task<Void, any Error>?>(nil)
    /// Set by `stop()`: the server is cancelled, and what it logs about that is not news.
    private let stopping = StoppingFlag()

    /// - Parameter recorder: where imported exchanges are recorded, the chain the proxy records
    ///   into (by default one that keeps them in `store` and shows them on `hub`).
    public init(
        configuration: Configuration, store: any FlowStore, hub: FlowHub, recorder: (any FlowSink)? = nil, liveProxy: LiveProxy? = nil,
        rules: RulesControl? = nil, contracts: LiveContracts? = nil
    ) throws {
        self.configuration = configuration
        token = configuration.token ?? AdminToken.make()
        // A session file's neighbours are the sessions a diff can compare it with.
        let sessionFile = (store as? SQLiteFlowStore).map(\.path).flatMap { $0.isEmpty || $0 == ":memory:" ? nil : $0 }
        routes = UIRoutes(
            configuration: configuration, store: store, hub: hub, recorder: recorder ?? Recording(store: store, hub: hub).chain, page: try WebPage.load(),
            liveProxy: liveProxy, rules: rules, contracts: contracts, comparable: sessionFile.map(ComparableSessions.folder(of:)))
    }

    /// Starts listening and returns the port (useful with port 0).
    public func start() async throws -> Int {
        let access = UIAccessMiddleware(token: token, loopbackOnly: UIAccess.isLoopback(configuration.host), guesses: TokenGuesses(window: configuration.wrongTokenWindow))
        let router = buildRouter(routes, access: access)
        let (port, task) = try await runApplication(
            responder: router.buildResponder(), host: configuration.host, port: configuration.port, stopping: stopping, what: "the web UI")
        running.withLock { $0 = task }
        return port
    }

    public func stop() async {
        guard let task = running.withLock({ $0 }) else { return }
        stopping.set()
        task.cancel()
        _ = try? await task.value
    }
}

/// What the page and the admin API over one session act on; each route group is given the
/// parts it uses.
struct UIRoutes: Sendable {
    var configuration: UIServer.Configuration
    var store: any FlowStore
    var hub: FlowHub
    /// Where imported exchanges go (the recording chain).
    var recorder: any FlowSink
    var page: WebPage
    /// The proxy in this process, for breakpoints, WebSockets, repeats and the SSL Proxying list.
    var liveProxy: LiveProxy?
    var rules: RulesControl?
    var contracts: LiveContracts?
    /// The sessions a diff can compare this one with; nil: parts of this one only.
    var comparable: ComparableSessions? = nil
}

/// The page and the admin API over one session, behind `access` when given (`SessionsServer`
/// checks access itself). Each route group gets what it acts on, and nothing else.
func buildRouter(_ routes: UIRoutes, access: UIAccessMiddleware?) -> Router<UIRequestContext> {
    let router = Router(context: UIRequestContext.self)
    if let access { router.add(middleware: access) }
    router.add(middleware: HummingbirdErrors())
    let proxy = routes.liveProxy
    FlowAPI(
        store: routes.store, hub: routes.hub, recorder: routes.recorder, webSockets: proxy?.webSockets, breakpoints: proxy?.breakpoints,
        configuration: routes.configuration
    ).register(on: router)
    BreakpointAPI(breakpoints: proxy?.breakpoints, grpcSchemas: routes.configuration.grpcSchemas).register(on: router)
    ToolsAPI(
        store: routes.store, repeatRoute: proxy?.repeatRoute, mapLocalFolders: routes.rules?.mapLocalFolders, grpcSchemas: routes.configuration.grpcSchemas
    ).register(on: router)
    RulesAPI(control: routes.rules).register(on: router)
    ScenarioAPI(scenarios: proxy?.scenarios).register(on: router)
    NotesAPI(store: routes.store, recorder: routes.recorder).register(on: router)
    DraftAPI(store: routes.store).register(on: router)
    DiffAPI(store: routes.store, sessions: routes.comparable).register(on: router)
    ContractAPI(contracts: routes.contracts, store: routes.store).register(on: router)
    ComposeAPI(store: routes.store, hub: routes.hub, repeatRoute: proxy?.repeatRoute).register(on: router)
    SSLProxyingAPI(control: proxy?.sslProxying).register(on: router)
    DeviceAPI(proxyAddress: routes.configuration.proxyAddress, certificatePath: proxy?.certificatePath, clients: proxy?.clients).register(on: router)
    routes.page.register(on: router)
    return router
}

/// A Kagami web server (`UIServer`, `SessionsServer`): `responder` on host and port, telling
/// `onServerRunning` the port it got, logging warnings and errors only, and nothing once
/// `stopping` is set (Hummingbird reports the cancelled connections as errors).
func buildApplication<Responder: HTTPResponder>(
    responder: Responder, host: String, port: Int, stopping: StoppingFlag, onServerRunning: @escaping @Sendable (Int) -> Void
) -> some ApplicationProtocol where Responder.Context == UIRequestContext {
    var logger = Logger(label: "kagami.ui") { label in
        QuietWhileStopping(base: StreamLogHandler.standardError(label: label), stopping: stopping)
    }
    logger.logLevel = .warning
    return Application(
        responder: responder,
        configuration: .init(address: .hostname(host, port: port), serverName: "Kagami"),
        onServerRunning: { channel in onServerRunning(channel.localAddress?.port ?? 0) },
        logger: logger
    )
}

/// Serves `responder` (`buildApplication`) in a task of its own; returns the port once it
/// listens, and the task to cancel to stop it. When it ends before it listens, its error, or
/// one saying that `what` could not listen.
func runApplication<Responder: HTTPResponder>(
    responder: Responder, host: String, port: Int, stopping: StoppingFlag, what: String
) async throws -> (port: Int, task: Task<Void, any Error>) where Responder.Context == UIRequestContext {
    let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
    let app = buildApplication(
        responder: responder, host: host, port: port, stopping: stopping,
        onServerRunning: { port in
            portContinuation.yield(port)
            portContinuation.finish()
        })
    let task = Task {
        defer { portContinuation.finish() }
        try await app.run()
    }
    for await listening in portStream { return (listening, task) }
    // The server ended before it listened: surface why.
    try await task.value
    throw UIServerError("\(what) could not listen on \(Authority(host: host, port: port))")
}

public struct UIServerError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

final class StoppingFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// Passes log messages on until the server is being stopped.
struct QuietWhileStopping: LogHandler {
    var base: any LogHandler
    let stopping: StoppingFlag

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard !stopping.isSet else { return }
        base.log(event: event)
    }
}
