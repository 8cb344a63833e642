import KagamiControl
import KagamiFlow
import KagamiScenarios
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The proxy: listens for clients, forwards their requests (absolute-form, or to a fixed
/// upstream in reverse mode), relays CONNECT tunnels, and hands every finished exchange to a
/// `FlowSink`.
public final class ProxyServer: Sendable {
    public enum Mode: Sendable, Hashable {
        /// A forward proxy: clients send absolute-form requests and CONNECT.
        case forward
        /// A reverse proxy: every request goes to this server (like Charles's Reverse Proxies).
        case reverse(ProxyTarget)

        var flowMode: Flow.Mode {
            switch self {
            case .forward: .forward
            case .reverse: .reverse
            }
        }
    }

    enum HandlerName {
        static let decoder = "kagami.http.decoder"
        static let encoder = "kagami.http.encoder"
        static let serverPipeline = "kagami.http.pipelining"
        static let errors = "kagami.http.errors"
    }

    public let options: ProxyOptions
    /// Forward or reverse, as `options.reverse` says.
    public let mode: Mode
    /// The rules in force; replace them at any time.
    public let rules: ActiveRules
    /// The breakpoints in force and the exchanges they hold.
    public let breakpoints: Breakpoints
    /// The scenario in force: operations in their empty, loading, error, offline, slow or recorded state.
    public let scenarios: ActiveScenario
    /// The WebSockets open through the proxy, to inject messages into.
    public let webSockets = LiveWebSockets()
    /// The hosts whose CONNECT tunnels are decrypted, replaceable while running (the admin
    /// API's SSL Proxying panel); unused when interception is off.
    public let sslProxying: LiveSSLProxying
    /// Who may use the proxy: this machine, the allowed networks, and the addresses the user
    /// allows or denies while it runs.
    public let clientAccess: ClientAccess
    /// HTTPS interception is set up (a CA to issue certificates from).
    public var intercepts: Bool { identities != nil }
    let group: any EventLoopGroup
    private let sink: any FlowSink
    /// One pool per event loop, made on first use on that loop.
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamPool?>]
    let poolConfiguration: UpstreamPool.Configuration
    private let identities: InterceptionIdentities?
    private let listener = NIOLockedValueBox<(any Channel)?>(nil)
    let gate: UpstreamGate
    private let connectionLimit = NIOLockedValueBox<ClientConnectionLimit?>(nil)

    /// Throws `ProxyOptionsError` when an option can't be read (a reverse target, the allow
    /// list, `KAGAMI_UPSTREAM_ALLOW`, a client network), and when interception is set up with
    /// unusable trust anchors or CA.
    public init(options: ProxyOptions, sink: any FlowSink, rules: ActiveRules = ActiveRules(), breakpoints: Breakpoints = Breakpoints(),
        scenarios: ActiveScenario = ActiveScenario(), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        let resolved = try options.resolved()
        self.options = options
        self.mode = resolved.mode
        self.rules = rules
        self.breakpoints = breakpoints
        self.scenarios = scenarios
        self.sslProxying = LiveSSLProxying(options.interception?.sslProxying ?? SSLProxyingList())
        clientAccess = ClientAccess(allowing: resolved.allowedClients)
        self.group = group
        self.sink = sink
        gate = UpstreamGate(allowList: resolved.upstreamAllowList)
        var upstreamTLS: UpstreamTLS?
        if let interception = options.interception {
            identities = try InterceptionIdentities(authority: interception.authority)
            upstreamTLS = try UpstreamTLS.shared(additionalTrustRootFiles: interception.additionalTrustRootFiles, insecure: interception.insecureUpstream)
        } else {
            identities = nil
        }
        let poolConfiguration = UpstreamPool.Configuration(
            connectTimeout: TimeAmount(options.connectTimeout),
            idleTimeout: TimeAmount(options.idleConnectionTimeout),
            maximumIdlePerServer: options.maximumIdleConnectionsPerServer,
            decoderLimits: NIOHTTPDecoderLimitConfiguration(),
            tls: upstreamTLS,
            gate: gate
        )
        var pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamPool?>] = [:]
        for loop in group.makeIterator() {
            pools[ObjectIdentifier(loop)] = .makeEmptyBox(valueType: UpstreamPool.self, eventLoop: loop)
        }
        self.pools = pools
        self.poolConfiguration = poolConfiguration
    }

    /// Binds and starts accepting clients; returns the address it listens on.
    @discardableResult
    public func start() async throws -> SocketAddress {
        let limit = ClientConnectionLimit(
            maximum: options.maximumClientConnections ?? ClientConnectionLimit.fromDescriptorLimit(), notice: options.notice)
        connectionLimit.withLockedValue { $0 = limit }
        let settings = ConnectionContext(
            mode: mode,
            captureLimit: options.bodyLimit,
            timeouts: ExchangeTimeouts(
                connect: TimeAmount(options.connectTimeout), response: TimeAmount(options.responseTimeout),
                clientHalfClose: TimeAmount(options.clientHalfCloseTimeout)),
            clientIdleTimeout: TimeAmount(options.clientIdleTimeout),
            identities: identities,
            sslProxying: sslProxying,
            upstreamVerificationDisabled: options.interception?.insecureUpstream ?? false,
            rules: rules,
            breakpoints: breakpoints,
            gate: gate,
            hooks: .standard(rules: rules, scenarios: scenarios, breakpoints: breakpoints, sink: sink),
            webSockets: webSockets,
            budget: ClientBudget(),
            connections: limit
        )
        let budget = settings.budget
        let pools = self.pools
        let poolConfiguration = self.poolConfiguration
        let access = clientAccess
        let bound = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            // A client that half-closes after its request still gets its answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                guard budget.admit(channel.remoteAddress), limit.admit(channel) else {
                    return channel.close()
                }
                let decision = access.decide(channel.remoteAddress.flatMap(IPAddressBytes.init))
                return channel.eventLoop.makeCompletedFuture {
                    guard decision == .allowed else {
                        try HeldClientHandler.addHandlers(channel.pipeline.syncOperations, decision: decision, access: access)
                        return
                    }
                    let pool: UpstreamPool
                    if let box = pools[ObjectIdentifier(channel.eventLoop)] {
                        if box.value == nil { box.value = UpstreamPool(eventLoop: channel.eventLoop, configuration: poolConfiguration) }
                        pool = box.value ?? UpstreamPool(eventLoop: channel.eventLoop, configuration: poolConfiguration)
                    } else {
                        pool = UpstreamPool(eventLoop: channel.eventLoop, configuration: poolConfiguration)
                    }
                    try Self.addHTTPHandlers(channel.pipeline.syncOperations, settings: settings, pool: pool, origin: nil)
                }
            }
        let channel: any Channel
        do {
            channel = try await bound.bind(host: options.host, port: options.port).get()
        } catch {
            throw ListenError(host: options.host, port: options.port, error)
        }
        listener.withLockedValue { $0 = channel }
        guard let address = channel.localAddress else {
            throw ChannelError.unknownLocalAddress
        }
        if let port = address.port { gate.ownListeners.add(port: port) }
        return address
    }

    /// The HTTP/1.1 handlers of a client connection: on accept, and again inside an
    /// intercepted tunnel (after TLS when ALPN did not choose h2, or plain HTTP).
    static func addHTTPHandlers(_ pipeline: ChannelPipeline.SynchronousOperations, settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin?) throws {
        // A client that opens with the HTTP/2 preface (h2c, prior knowledge) gets HTTP/2; the
        // others HTTP/1.1, added once their first bytes are read.
        try pipeline.addHandler(HTTP2PrefaceSniffer(settings: settings, pool: pool, origin: origin))
    }

    static func addHTTP1Handlers(_ pipeline: ChannelPipeline.SynchronousOperations, settings: ConnectionContext, pool: any UpstreamSource, origin: InterceptedOrigin?) throws {
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)), name: HandlerName.decoder)
        try pipeline.addHandler(ProxyResponseEncoder(), name: HandlerName.encoder)
        try pipeline.addHandler(HTTPServerPipelineHandler(), name: HandlerName.serverPipeline)
        try pipeline.addHandler(HTTPServerProtocolErrorHandler(), name: HandlerName.errors)
        try pipeline.addHandler(ConnectTunnelHandler(settings: settings, pool: pool, origin: origin))
        try pipeline.addHandler(ClientConnectionHandler(settings: settings, pool: pool, origin: origin))
    }

    /// Never connects to `port` at any address of this host (the proxy's own port is
    /// protected from `start()` on): for the web UI and admin API beside the proxy, which must
    /// not be reachable through the proxy.
    public func protectListener(port: Int) {
        gate.ownListeners.add(port: port)
    }

    /// The servers this proxy may connect to (nil: any).
    public var upstreamAllowList: UpstreamAllowList? { gate.allowList }

    /// Client connections open now, and the most allowed at once (once started).
    public var clientConnections: (open: Int, maximum: Int)? {
        connectionLimit.withLockedValue { $0 }.map { ($0.openConnections, $0.maximum) }
    }

    /// Raises the process's soft limit on open files to its hard limit (as servers do at start),
    /// so the default connection limit is as high as the system allows; returns the new limit.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        ClientConnectionLimit.raiseDescriptorLimit()
    }

    /// What the connect path has done so far: refusals, lookups, addresses dialled.
    public var upstreamStatistics: UpstreamStatistics { gate.statistics }

    /// The port it listens on, once started.
    public var port: Int? {
        listener.withLockedValue { $0?.localAddress?.port }
    }

    /// Stops accepting clients and closes idle server connections. Exchanges in flight end
    /// when their connections do.
    public func stop() async throws {
        let channel = listener.withLockedValue { value in
            defer { value = nil }
            return value
        }
        try await channel?.close()
        for box in pools.values {
            try await box.eventLoop.submit { box.value?.closeAll() }.get()
        }
    }
}

/// The proxy could not listen where it was asked to, said so a user knows what to change.
public struct ListenError: Error, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The system's reason.
    public var underlying: any Error

    init(host: String, port: Int, _ underlying: any Error) {
        self.host = host
        self.port = port
        self.underlying = underlying
    }

    /// The port is in use by another program (or another Kagami).
    public var portIsTaken: Bool { (underlying as? IOError)?.errnoCode == EADDRINUSE }

    public var description: String {
        let address = Authority(host: host, port: port).description
        switch (underlying as? IOError)?.errnoCode {
        case EADDRINUSE?:
            return "cannot listen on \(address): the port is taken (another Kagami, or another program, listens there); choose another with --port PORT, or --port 0 for a free one"
        case EACCES?:
            return "cannot listen on \(address): ports below 1024 need privileges; choose one above with --port PORT"
        case EADDRNOTAVAIL?:
            return "cannot listen on \(address): \(host) is not an address of this machine; give one of its own with --host (127.0.0.1, 0.0.0.0 for every interface)"
        default:
            return "cannot listen on \(address): \(underlying)"
        }
    }
}
