import KagamiProxy
import KagamiRepeat

/// What the admin API can act on in a proxy running in the same process: its breakpoints, and
/// the way into it that repeated requests take. Without one, those endpoints answer 503.
public struct LiveProxy: Sendable {
    public var breakpoints: Breakpoints
    public var repeatRoute: RequestRepeater.Route

    public init(breakpoints: Breakpoints, repeatRoute: RequestRepeater.Route) {
        self.breakpoints = breakpoints
        self.repeatRoute = repeatRoute
    }
}
