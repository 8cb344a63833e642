import KagamiControl
import NIOCore

/// What every client connection of one proxy shares: its `ProxyOptions` read and in event-loop
/// time, and the live objects (rules, breakpoints, hooks, the upstream gate, limits).
struct ConnectionContext: Sendable {
    var mode: ProxyServer.Mode
    var captureLimit: Int
    /// How long connecting, the server's answer and a half-closed client's answer may take.
    var timeouts: ExchangeTimeouts
    /// No complete request head for this long (after connecting or after the last exchange):
    /// the connection is closed.
    var clientIdleTimeout: TimeAmount
    /// Set when HTTPS interception is on.
    var identities: InterceptionIdentities?
    var sslProxying: LiveSSLProxying
    var upstreamVerificationDisabled: Bool
    /// The rules in force; read once per exchange, replaceable while running.
    var rules: ActiveRules
    var breakpoints: Breakpoints
    /// Every server connection goes through it (the upstream allow list).
    var gate: UpstreamGate
    /// What acts on each exchange, in order: rules, breakpoints, throttling, recording.
    var hooks: ExchangeHooks
    /// The WebSockets open through the proxy, for messages injected from the admin API.
    var webSockets: LiveWebSockets
    /// What each client address may cost in HTTP/2 stream resets.
    var budget: ClientBudget
    /// The client connections open, and which of them only wait for a request.
    var connections: ClientConnectionLimit
}
