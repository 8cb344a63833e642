import Foundation
import KagamiFlow
import KagamiRules
import KagamiScenarios
import KagamiTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import KagamiControl
@testable import KagamiProxy

/// One client connection of the proxy driven with bytes: what the client sends, what each
/// server connection receives and answers, and a clock that moves only when told. The
/// connection has the handlers a real one has (HTTP/1.1 codec, pipelining, the exchange
/// handler, the hooks of `ProxyServer`); there are no sockets and no sleeps, and every step has
/// run to its end when the call returns.
final class Playbook {
    let loop = EmbeddedEventLoop()
    let client: EmbeddedChannel
    let servers: PlaybookServers
    /// Every exchange the proxy recorded, in the order they ended.
    let sink = CollectingSink()
    let rules: ActiveRules
    let breakpoints: Breakpoints
    let scenarios: ActiveScenario

    struct Timeouts {
        var response: TimeAmount = .seconds(60)
        var clientIdle: TimeAmount = .seconds(60)
        var clientHalfClose: TimeAmount = .seconds(10)
    }

    /// A reverse proxy to `http://origin.test:80` unless `mode` says otherwise; no request
    /// leaves the test: the servers are `servers`' channels.
    init(
        mode: ProxyServer.Mode = .reverse(ProxyTarget(scheme: "http", host: "origin.test", port: 80, path: "/")),
        rules: RulePipeline? = nil, breakpoints: BreakpointSettings = BreakpointSettings(), scenarios: ActiveScenario = ActiveScenario(),
        timeouts: Timeouts = Timeouts()
    ) throws {
        self.rules = ActiveRules(rules)
        self.scenarios = scenarios
        self.breakpoints = Breakpoints(breakpoints)
        servers = PlaybookServers(loop: loop)
        let settings = Self.context(mode: mode, rules: self.rules, breakpoints: self.breakpoints, scenarios: scenarios, sink: sink, timeouts: timeouts)
        client = EmbeddedChannel(loop: loop)
        try ProxyServer.addHTTP1Handlers(client.pipeline.syncOperations, settings: settings, pool: servers, origin: nil)
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_000)).wait()
    }

    /// What every connection of a playbook's proxy shares: the standard hooks recording into
    /// `sink`, nothing verified, no interception.
    static func context(
        mode: ProxyServer.Mode, rules: ActiveRules, breakpoints: Breakpoints, scenarios: ActiveScenario, sink: CollectingSink,
        timeouts: Timeouts, budget: ClientBudget = ClientBudget()
    ) -> ConnectionContext {
        ConnectionContext(
            mode: mode, captureLimit: 1 << 20, timeouts: ExchangeTimeouts(connect: .seconds(10), response: timeouts.response, clientHalfClose: timeouts.clientHalfClose),
            clientIdleTimeout: timeouts.clientIdle, identities: nil,
            sslProxying: LiveSSLProxying(), upstreamVerificationDisabled: false, rules: rules, breakpoints: breakpoints,
            gate: UpstreamGate(allowList: nil), hooks: .standard(rules: rules, scenarios: scenarios, breakpoints: breakpoints, sink: sink),
            webSockets: LiveWebSockets(), budget: budget, connections: ClientConnectionLimit(maximum: 16, notice: nil))
    }

    /// The client sends these bytes (CRLFs and all).
    func clientSends(_ bytes: String) throws {
        try client.writeInbound(ByteBuffer(string: bytes))
        loop.run()
    }

    /// What the proxy wrote to the client since the last call.
    func clientReceived() throws -> String {
        loop.run()
        var text = ""
        while let buffer = try client.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    /// The client closed its side of the connection (a half-close or a close look the same).
    func clientClosesInput() {
        client.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        loop.run()
    }

    /// The client's connection is gone.
    func clientDisconnects() throws {
        try client.close().wait()
        loop.run()
    }

    var clientIsOpen: Bool { client.isActive }

    /// Server connection `index` (in the order the proxy opened them).
    func server(_ index: Int) -> EmbeddedChannel { servers.opened[index] }

    /// What the proxy wrote to server connection `index` since the last call.
    func serverReceived(_ index: Int = 0) throws -> String {
        try servers.received(index)
    }

    /// Server connection `index` sends these bytes.
    func serverSends(_ bytes: String, on index: Int = 0) throws {
        try server(index).writeInbound(ByteBuffer(string: bytes))
        loop.run()
    }

    /// Server connection `index` closes (its response, if read to the close, ends there).
    func serverCloses(_ index: Int = 0) throws {
        try server(index).close().wait()
        loop.run()
    }

    /// Time passes: every timer due by then fires, in order.
    func advance(by amount: TimeAmount) {
        loop.advanceTime(by: amount)
        loop.run()
    }

    func finish() throws {
        if client.isActive { _ = try client.finish(acceptAlreadyClosed: true) }
        try servers.finish()
    }
}

/// The servers of a playbook: each connection the proxy asks for is an `EmbeddedChannel` with
/// the HTTP/1.1 handlers of a real server connection; connections handed back are reused.
final class PlaybookServers: UpstreamSource {
    let loop: EmbeddedEventLoop
    private(set) var opened: [EmbeddedChannel] = []
    private(set) var keys: [UpstreamPool.Key] = []
    private var idle: [UpstreamConnection] = []
    /// The next connection asked for fails with this error (a refused connect), reported on
    /// the loop's next turn as a real connect's is.
    var failNextConnect: (any Error)?

    init(loop: EmbeddedEventLoop) { self.loop = loop }

    func acquire(_ key: UpstreamPool.Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        if let error = failNextConnect {
            failNextConnect = nil
            loop.execute { completion(.failure(error)) }
            return
        }
        if let index = idle.firstIndex(where: { $0.key == key && $0.channel.isActive }) {
            let connection = idle.remove(at: index)
            connection.isReused = true
            completion(.success(connection))
            return
        }
        let channel = EmbeddedChannel(loop: loop)
        do {
            try UpstreamPool.addHTTP1Handlers(channel.pipeline.syncOperations, limits: NIOHTTPDecoderLimitConfiguration())
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8_080)).wait()
            let handler = try channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
            opened.append(channel)
            keys.append(key)
            completion(.success(UpstreamConnection(key: key, channel: channel, handler: handler)))
        } catch {
            completion(.failure(error))
        }
    }

    func release(_ connection: UpstreamConnection) {
        connection.handler.delegate = nil
        if connection.channel.isActive { idle.append(connection) }
    }

    /// Connections back from their exchanges and open, for the next ones.
    var idleCount: Int { idle.count }

    /// What the proxy wrote to connection `index` since the last call.
    func received(_ index: Int) throws -> String {
        loop.run()
        var text = ""
        while let data = try opened[index].readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else { continue }
            text += String(buffer: buffer)
        }
        return text
    }

    func finish() throws {
        for server in opened where server.isActive { _ = try server.finish(acceptAlreadyClosed: true) }
    }
}
