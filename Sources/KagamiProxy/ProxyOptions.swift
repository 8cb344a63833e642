import KagamiControl
import KagamiFlow

/// How a proxy is set up: the one type `kagami proxy`'s flags fill and KagamiKit's
/// `KagamiProxyServer` fills, read by `ProxyServer` (and by the recording proxy that builds one
/// with its recording chain). What users write as text (a server's URL, an allow list, client
/// networks, descriptions) is kept as written and read in one place, `resolved()`, whose
/// errors name the option.
public struct ProxyOptions: Sendable {
    /// The address it listens on. Anything but loopback exposes the proxy to other hosts.
    public var host: String
    /// 0 picks a free port; `ProxyServer.start()` returns the one bound.
    public var port: Int
    /// A reverse proxy sending every request to this server (`http://127.0.0.1:3000`, with an
    /// optional base path); nil: a forward proxy (clients send absolute URLs and CONNECT).
    public var reverse: String?
    /// The servers it may connect to, as `--upstream-allow` takes them: a network
    /// (`10.0.0.0/8`), an address, a host name (`api.internal`, `*.internal`) or `loopback`.
    /// Empty: any server, unless `KAGAMI_UPSTREAM_ALLOW` gives a list.
    public var upstreamAllow: [String]
    /// Client networks served beside this machine (`192.168.1.0/24`, an address); other
    /// devices are held until allowed.
    public var allowClients: [String]
    /// Descriptions (API Blueprint or OpenAPI) every exchange is checked against, as
    /// `FILE` or `FILE=BASEURL`; read by the recording proxy that builds the contract check.
    public var contracts: [String]
    /// Whether the contract check holds values to their `format` (date-time, email, uuid,
    /// int32…); `--no-assert-format` turns it off.
    public var assertsFormat: Bool = true
    /// Bytes of each body kept in the session; the rest is counted, not kept.
    public var bodyLimit: Int
    public var connectTimeout: Duration
    /// How long a server may stay silent once the request has been sent.
    public var responseTimeout: Duration
    /// How long an unused keep-alive connection to a server is kept.
    public var idleConnectionTimeout: Duration
    public var maximumIdleConnectionsPerServer: Int
    /// How long a client connection may go without sending a complete request head, after it
    /// connects or after its last exchange: idle keep-alive connections, slow or incomplete
    /// heads ("slowloris", HTTP/0.9, bare line breaks) are closed then.
    public var clientIdleTimeout: Duration
    /// How long an exchange waits for the server's answer to begin once its client has closed
    /// its side (a half-close and a close look the same on the wire).
    public var clientHalfCloseTimeout: Duration
    /// Client connections open at once; more are refused until some close. nil: half of the
    /// process's open-file limit.
    public var maximumClientConnections: Int?
    /// HTTPS interception; nil relays every CONNECT untouched.
    public var interception: InterceptionConfiguration?
    /// Where the proxy says what a user should know (refused connections); nil is silent.
    public var notice: (@Sendable (String) -> Void)?

    public init(
        host: String = "127.0.0.1", port: Int = 8888, reverse: String? = nil,
        upstreamAllow: [String] = [], allowClients: [String] = [], contracts: [String] = [],
        bodyLimit: Int = 10 * 1024 * 1024,
        connectTimeout: Duration = .seconds(10), responseTimeout: Duration = .seconds(60),
        idleConnectionTimeout: Duration = .seconds(60), maximumIdleConnectionsPerServer: Int = 64,
        clientIdleTimeout: Duration = .seconds(60), clientHalfCloseTimeout: Duration = .seconds(10),
        maximumClientConnections: Int? = nil, interception: InterceptionConfiguration? = nil,
        notice: (@Sendable (String) -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.reverse = reverse
        self.upstreamAllow = upstreamAllow
        self.allowClients = allowClients
        self.contracts = contracts
        self.bodyLimit = bodyLimit
        self.connectTimeout = connectTimeout
        self.responseTimeout = responseTimeout
        self.idleConnectionTimeout = idleConnectionTimeout
        self.maximumIdleConnectionsPerServer = maximumIdleConnectionsPerServer
        self.clientIdleTimeout = clientIdleTimeout
        self.clientHalfCloseTimeout = clientHalfCloseTimeout
        self.maximumClientConnections = maximumClientConnections
        self.interception = interception
        self.notice = notice
    }

    /// What the text options say, read once: the mode, the allow list (this list, else
    /// `KAGAMI_UPSTREAM_ALLOW`'s, else nil for any server) and the client networks.
    public func resolved() throws(ProxyOptionsError) -> Resolved {
        let mode: ProxyServer.Mode
        if let reverse {
            do {
                mode = .reverse(try ProxyTarget(absoluteURL: reverse))
            } catch {
                throw ProxyOptionsError(description: "--reverse \(reverse): \(error)")
            }
        } else {
            mode = .forward
        }
        let allowList: UpstreamAllowList?
        do {
            allowList = upstreamAllow.isEmpty ? try UpstreamAllowList.fromEnvironment() : try UpstreamAllowList(parsing: upstreamAllow)
        } catch {
            throw ProxyOptionsError(description: error.description)
        }
        var clients: [IPNetwork] = []
        for text in allowClients {
            guard let network = IPNetwork(text) else {
                throw ProxyOptionsError(description: "--allow-client \(text): not a network (192.168.1.0/24) or an IP address")
            }
            clients.append(network)
        }
        return Resolved(mode: mode, upstreamAllowList: allowList, allowedClients: clients)
    }

    /// The text options, read.
    public struct Resolved: Sendable {
        public var mode: ProxyServer.Mode
        /// nil: any server.
        public var upstreamAllowList: UpstreamAllowList?
        public var allowedClients: [IPNetwork]
    }
}

/// An option that can't be used, named as `kagami proxy` spells it, with the value and why.
public struct ProxyOptionsError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}
