import KagamiProxy
import KagamiRepeat

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

    public init(
        breakpoints: Breakpoints, webSockets: LiveWebSockets = LiveWebSockets(), repeatRoute: RequestRepeater.Route,
        sslProxying: SSLProxyingControl? = nil, certificatePath: String? = nil
    ) {
        self.breakpoints = breakpoints
        self.webSockets = webSockets
        self.repeatRoute = repeatRoute
        self.sslProxying = sslProxying
        self.certificatePath = certificatePath
    }
}
