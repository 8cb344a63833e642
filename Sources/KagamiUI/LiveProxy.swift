import Foundation
import KagamiProxy
import KagamiRepeat
import KagamiScenarios

/// What the admin API can act on in a proxy running in the same process: its breakpoints, its
/// open WebSockets, the way into it that repeated and composed requests take, and its SSL
/// Proxying list. Without one, those endpoints answer 503.
public struct LiveProxy: Sendable {
    public var breakpoints: Breakpoints
    public var webSockets: LiveWebSockets
    public var repeatRoute: RequestRepeater.Route
    public var sslProxying: SSLProxyingControl?
    /// Kagami's CA certificate (PEM), for the device setup panel; nil when interception is off.
    public var certificatePath: String?
    /// Who may use the proxy, for the device setup panel to allow or deny waiting devices.
    public var clients: ClientAccess?
    /// The scenario in force, switched from the Scenarios panel and `kagami scenario`.
    public var scenarios: ActiveScenario?

    public init(
        breakpoints: Breakpoints, webSockets: LiveWebSockets = LiveWebSockets(), repeatRoute: RequestRepeater.Route,
        sslProxying: SSLProxyingControl? = nil, certificatePath: String? = nil,
        clients: ClientAccess? = nil, scenarios: ActiveScenario? = nil
    ) {
        self.scenarios = scenarios
        self.breakpoints = breakpoints
        self.webSockets = webSockets
        self.repeatRoute = repeatRoute
        self.sslProxying = sslProxying
        self.certificatePath = certificatePath
        self.clients = clients
    }
}

extension LiveProxy {
    /// The proxy server running in this process, as `kagami proxy` and the tests give it to the
    /// UI: its breakpoints, its WebSockets and its SSL Proxying list (kept in `sslProxyingFile`
    /// when given).
    public init(proxy: ProxyServer, repeatRoute: RequestRepeater.Route, sslProxyingFile: String? = nil, certificatePath: String? = nil) {
        self.init(
            breakpoints: proxy.breakpoints, webSockets: proxy.webSockets, repeatRoute: repeatRoute,
            sslProxying: SSLProxyingControl(proxy: proxy, file: sslProxyingFile), certificatePath: certificatePath,
            clients: proxy.clientAccess, scenarios: proxy.scenarios)
    }
}

extension SSLProxyingControl {
    /// The list of `proxy`; replacing it writes `file` first (atomically), and a failed write
    /// keeps the list in force.
    public init(proxy: ProxyServer, file: String?) {
        let lock = NSLock()
        self.init(
            intercepting: proxy.intercepts,
            current: { proxy.sslProxying.current },
            replace: { list in
                try lock.withLock {
                    if let file {
                        try Data((list.json.serialized(.prettyPrinted) + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
                    }
                    proxy.sslProxying.replace(with: list)
                }
            },
            file: file)
    }
}
