import Foundation
import Hummingbird
import Logging
import KagamiContractCheck
import KagamiFlow
import KagamiStore
import NIOCore
import Synchronization

/// Kagami's web UI: the page (static files shipped with the module) and the JSON admin API it
/// uses, on their own port. Loopback by default; anywhere else every request needs the token.
public final class UIServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// What `/api/status` reports about the proxy, for the first-run screen.
        public var proxyAddress: String
        public var sessionPath: String
        public var version: String
        /// Required when the UI is reachable from other hosts; nil makes one up when needed.
        public var token: String?
        /// Seconds between keep-alive comments on the event stream.
        public var heartbeatInterval: Double

        public init(
            host: String = "127.0.0.1", port: Int = 8889, proxyAddress: String, sessionPath: String, version: String,
            token: String? = nil, heartbeatInterval: Double = 15
        ) {
            self.host = host
            self.port = port
            self.proxyAddress = proxyAddress
            self.sessionPath = sessionPath
            self.version = version
            self.token = token
            self.heartbeatInterval = heartbeatInterval
        }
    }

    public let configuration: Configuration
    /// The token clients must present, or nil on loopback.
    public let token: String?
    let store: any FlowStore
    let hub: FlowHub
    let page: WebPage
    /// The proxy in this process, for breakpoints and repeats.
    let liveProxy: LiveProxy?
    /// The proxy's rules, for `/api/rules`; nil when no proxy runs beside the UI.
    let rules: RulesControl?
    /// The descriptions the proxy checks traffic against, for `/api/contract`.
    let contracts: LiveContracts?
    private let running = Mutex<Task<Void, any Error>?>(nil)
    /// Set by `stop()`: the server is cancelled, and what it logs about that is not news.
    private let stopping = StoppingFlag()

    public init(
        configuration: Configuration, store: any FlowStore, hub: FlowHub, liveProxy: LiveProxy? = nil, rules: RulesControl? = nil,
        contracts: LiveContracts? = nil
    ) throws {
        self.configuration = configuration
        self.store = store
        self.hub = hub
        self.liveProxy = liveProxy
        self.rules = rules
        self.contracts = contracts
        self.page = try WebPage.load()
        if UIAccess.isLoopback(configuration.host) {
            token = nil
        } else {
            token = configuration.token ?? UIAccess.makeToken()
        }
    }

    /// Starts listening and returns the port (useful with port 0).
    /// The page and the API, behind the access check; `SessionsServer` serves one per session,
    /// having checked access itself (`checkingAccess: false`).
    func router(checkingAccess: Bool = true) -> Router<BasicRequestContext> {
        let router = Router()
        if checkingAccess { router.add(middleware: UIAccessMiddleware<BasicRequestContext>(token: token)) }
        FlowAPI(server: self).register(on: router)
        BreakpointAPI(server: self).register(on: router)
        ToolsAPI(server: self, flows: FlowAPI(server: self)).register(on: router)
        RulesAPI(control: rules).register(on: router)
        DraftAPI(server: self).register(on: router)
        ContractAPI(server: self).register(on: router)
        ComposeAPI(server: self).register(on: router)
        SSLProxyingAPI(control: liveProxy?.sslProxying).register(on: router)
        DeviceAPI(server: self).register(on: router)
        page.register(on: router)
        return router
    }

    public func start() async throws -> Int {
        let router = router()
        let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Kagami"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: UIServer.quietLogger(unless: stopping)
        )
        let task = Task {
            defer { portContinuation.finish() }
            try await app.run()
        }
        running.withLock { $0 = task }
        for await port in portStream { return port }
        // The server ended before it listened: surface why.
        try await task.value
        throw UIServerError("the web UI could not listen on \(Authority(host: configuration.host, port: configuration.port))")
    }

    public func stop() async {
        guard let task = running.withLock({ $0 }) else { return }
        stopping.set()
        task.cancel()
        _ = try? await task.value
    }

    /// Warnings and errors only, and nothing once the server is being stopped (Hummingbird
    /// reports the cancelled connections as errors).
    static func quietLogger(unless stopping: StoppingFlag) -> Logger {
        var logger = Logger(label: "kagami.ui") { label in
            QuietWhileStopping(base: StreamLogHandler.standardError(label: label), stopping: stopping)
        }
        logger.logLevel = .warning
        return logger
    }
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
