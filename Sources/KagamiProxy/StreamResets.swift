import KagamiControl
import KagamiFlow
import NIOConcurrencyHelpers
import NIOCore

/// What each client address may cost the proxy in HTTP/2 stream resets, across all its
/// connections: a "rapid reset" flood spread over connections that reconnect as fast as each is
/// cut off (every single connection stays under NIOHTTP2's own per-connection limit). Past
/// `resetsPerWindow` resets in a window the address is cooling down until the window after
/// next: each of its connections is closed after a few more resets, and it may open only
/// `connectionsPerSecondWhileCooling` new connections a second. Clients that complete their
/// streams never come near it.
final class ClientBudget: Sendable {
    struct Limits: Sendable {
        var resetsPerWindow = 1_000
        var window: TimeAmount = .seconds(10)
        /// Resets a connection of a cooling address may make before it is closed.
        var resetsPerConnectionWhileCooling = 10
        var connectionsPerSecondWhileCooling = 20
    }

    let limits: Limits
    private struct Account {
        var windowStart: NIODeadline
        var resets = 0
        var coolingUntil: NIODeadline?
        var second: NIODeadline
        var connectionsThisSecond = 0
    }
    private let accounts = NIOLockedValueBox<[IPAddressBytes: Account]>([:])
    private let now: @Sendable () -> NIODeadline

    init(limits: Limits = Limits(), now: @escaping @Sendable () -> NIODeadline = { .now() }) {
        self.limits = limits
        self.now = now
    }

    /// Whether a new connection from `peer` may be served (false: close it).
    func admit(_ peer: SocketAddress?) -> Bool {
        guard let peer, let address = IPAddressBytes(peer) else { return true }
        let now = now()
        return accounts.withLockedValue { accounts in
            guard var account = accounts[address], let until = account.coolingUntil else { return true }
            guard now < until else {
                accounts[address] = nil
                return true
            }
            if now - account.second >= .seconds(1) {
                account.second = now
                account.connectionsThisSecond = 0
            }
            account.connectionsThisSecond += 1
            accounts[address] = account
            return account.connectionsThisSecond <= limits.connectionsPerSecondWhileCooling
        }
    }

    /// Counts a stream `peer` reset; true when the address is cooling down.
    func reset(by peer: SocketAddress?) -> Bool {
        guard let peer, let address = IPAddressBytes(peer) else { return false }
        let now = now()
        return accounts.withLockedValue { accounts in
            var account = accounts[address] ?? Account(windowStart: now, second: now)
            if now - account.windowStart >= limits.window {
                account.windowStart = now
                account.resets = 0
            }
            account.resets += 1
            if account.resets > limits.resetsPerWindow {
                account.coolingUntil = now + limits.window + limits.window
            }
            if accounts.count > 10_000 { accounts = accounts.filter { $0.value.coolingUntil.map { now < $0 } ?? false } }
            accounts[address] = account
            return account.coolingUntil.map { now < $0 } ?? false
        }
    }
}

/// The streams of one HTTP/2 client connection that the client reset before they were answered.
/// A browser cancels a few (a page left, an image no longer needed): the first
/// `recordedOneByOne` of a connection are recorded as exchanges like any other. A rapid-reset
/// flood is thousands a second, which kept one by one grew the session by tens of megabytes a
/// second for nothing a user wants to see: past that number, and for every stream of a client
/// address over its `ClientBudget`, the first is kept back and the others are counted into it,
/// and it is recorded once, when the connection closes, saying how many there were. Streams
/// reset after their response began are always recorded. Each reset counts against the client
/// address's budget; a connection of an address over it is closed after a few more.
/// Lives on the connection's event loop.
final class StreamResets {
    static let recordedOneByOne = 20

    private let hooks: ExchangeHooks
    private let budget: ClientBudget
    private let connection: any Channel
    private var resets = 0
    private var recorded = 0
    private var keptBack: (recorder: FlowRecorder, error: FlowError)?
    private var counted = 0
    private var closed = false

    init(hooks: ExchangeHooks, budget: ClientBudget, connection: any Channel) {
        self.hooks = hooks
        self.budget = budget
        self.connection = connection
    }

    /// The client reset a stream; `answered`: its response had begun.
    func reset(_ recorder: FlowRecorder, error: FlowError, answered: Bool) {
        resets += 1
        let cooling = budget.reset(by: connection.remoteAddress)
        if answered || closed || (!cooling && recorded < Self.recordedOneByOne) {
            recorded += 1
            var recorder = recorder
            hooks.ended(recorder.finish(error: error))
        } else if keptBack == nil {
            keptBack = (recorder, error)
        } else {
            counted += 1
        }
        if cooling, resets > budget.limits.resetsPerConnectionWhileCooling {
            connection.close(promise: nil)
        }
    }

    /// The connection closed: the kept-back stream is recorded, with the count.
    func connectionClosed() {
        guard !closed else { return }
        closed = true
        guard var (recorder, error) = keptBack else { return }
        keptBack = nil
        if counted > 0 {
            error.message += "; the client reset \(counted) more stream\(counted == 1 ? "" : "s") of this connection before they were answered (counted here, not recorded one by one)"
        }
        hooks.ended(recorder.finish(error: error))
    }
}

/// Tells the connection's `StreamResets` when the HTTP/2 connection closes; sits after the
/// stream multiplexer, so the streams have ended by then.
final class StreamResetsCloser: ChannelInboundHandler {
    typealias InboundIn = Never
    private let resets: StreamResets

    init(_ resets: StreamResets) {
        self.resets = resets
    }

    func channelInactive(context: ChannelHandlerContext) {
        resets.connectionClosed()
        context.fireChannelInactive()
    }

    /// HTTP/2 has no half-closed connection: a client that shut its side is done.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.closeOnInputClosed(event)
    }
}
