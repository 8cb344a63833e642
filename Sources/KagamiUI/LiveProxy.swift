import Foundation
import KagamiControl
import KagamiRepeat
import KagamiScenarios

/// What the admin API can act on in a proxy running in the same process: its breakpoints, its
/// open WebSockets, the way into it that repeated and composed requests take, and its SSL
/// Proxying list. Without one, those endpoints answer 503. The proxy's engine is not known
/// here: whoever runs one gives its parts (`LiveProxy(proxy:…)` in the `kagami` command).
public struct LiveProxy: Sendable {
    public var breakpoints: Breakpoints
    public var webSockets: any WebSocketSending
    public var repeatRoute: RequestRepeater.Route
    public var sslProxying: SSLProxyingControl?
    /// Kagami's CA certificate (PEM), for the device setup panel; nil when interception is off.
    public var certificatePath: String?
    /// Who may use the proxy, for the device setup panel to allow or deny waiting devices.
    public var clients: ClientAccess?
    /// The scenario in force, switched from the Scenarios panel and `kagami scenario`.
    public var scenarios: ActiveScenario?

    public init(
        breakpoints: Breakpoints, webSockets: any WebSocketSending, repeatRoute: RequestRepeater.Route,
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
