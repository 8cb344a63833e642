import KagamiProxy
import KagamiRepeat

/// What the admin API can act on in a proxy running in the same process: its breakpoints, its
/// open WebSockets, and the way into it that repeated requests take. Without one, those
/// endpoints answer 503.
public struct LiveProxy: Sendable {
    public var breakpoints: Breakpoints
    public var webSockets: LiveWebSockets
    public var repeatRoute: RequestRepeater.Route

    public init(breakpoints: Breakpoints, webSockets: LiveWebSockets = LiveWebSockets(), repeatRoute: RequestRepeater.Route) {
        self.breakpoints = breakpoints
        self.webSockets = webSockets
        self.repeatRoute = repeatRoute
    }
}
