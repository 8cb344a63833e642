import KagamiFlow
import NIOCore
import NIOHTTP1

/// A 101 that the server sent to a request asking to switch protocols (RFC 9110 §7.8).
struct UpgradeError: Error, CustomStringConvertible {
    static let notRequested = UpgradeError(description: "answered 101 Switching Protocols to a request that did not ask to switch")
    var description: String
}

extension HTTPRequestHead {
    /// `Connection: upgrade` with an `Upgrade:` header: the client asks to switch protocols.
    /// Not for `Upgrade: h2c` alone (RFC 7540 §3.2): like mitmproxy, Kagami drops that offer
    /// with the other hop-by-hop fields (`HTTP2-Settings` goes as a field `Connection` names),
    /// so the exchange stays HTTP/1.1 whatever the server could do. A client that wants
    /// HTTP/2 in clear text gets it with prior knowledge.
    var requestsUpgrade: Bool {
        guard headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) else { return false }
        let protocols = headers[canonicalForm: "upgrade"].map { $0.lowercased() }
        return !protocols.isEmpty && protocols.contains { $0 != "h2c" }
    }
}

extension ClientConnectionHandler {
    /// The 101 went to the client and the server's side of it is complete: both connections
    /// stop speaking HTTP. Their HTTP handlers leave (the decoders hand on any bytes they read
    /// past the 101 or past the request) and one relay joins them byte for byte.
    func switchProtocols(_ exchange: Exchange, head: HTTPResponseHead, context: ChannelHandlerContext) {
        end(exchange)
        settings.connections.busy(context.channel)
        guard let upstream = takeUpstream(of: exchange) else {
            context.close(promise: nil)
            return
        }
        upstream.handler.delegate = nil
        let clientRelay = TunnelRelayHandler()
        let serverRelay = TunnelRelayHandler()
        TunnelRelayHandler.join(clientRelay, serverRelay)
        serverRelay.throttle = upstream.handler.throttle
        let finished: (_ then: @escaping @Sendable () -> Void) -> Void
        if let relay = WebSocketRelay(exchange: exchange, response: head, settings: settings, eventLoop: context.eventLoop) {
            TunnelRelayHandler.join(client: clientRelay, server: serverRelay, through: relay)
            finished = relay.finish
        } else {
            finished = UpgradedConnectionRecord(recorder: exchange.recorder, hooks: settings.hooks).finish
        }
        clientRelay.onFinished = finished
        serverRelay.onFinished = finished
        do {
            let server = upstream.channel.pipeline.syncOperations
            try server.addHandler(serverRelay, position: .after(upstream.handler))
            server.removeHandler(upstream.handler, promise: nil)
            server.removeHandler(name: UpstreamPool.HandlerName.encoder, promise: nil)

            let client = context.pipeline.syncOperations
            for name in [ProxyServer.HandlerName.encoder, ProxyServer.HandlerName.serverPipeline, ProxyServer.HandlerName.errors] {
                client.removeHandler(name: name, promise: nil)
            }
            client.removeHandler(try client.handler(type: ConnectTunnelHandler.self), promise: nil)
            try client.addHandler(clientRelay)
            let clientChannel = context.channel
            client.removeHandler(context: context, promise: nil)
            client.removeHandler(name: ProxyServer.HandlerName.decoder, promise: nil)
            // Last: this runs inside the server decoder's read of the 101, so its removal (and
            // the hand-over of the bytes after the 101) completes once that read returns.
            server.removeHandler(name: UpstreamPool.HandlerName.decoder, promise: nil)
            clientChannel.read()
            upstream.channel.read()
        } catch {
            upstream.channel.close(promise: nil)
            context.close(promise: nil)
        }
    }
}

/// Records an upgraded connection when one of its sides closes, before the other side is closed.
final class UpgradedConnectionRecord {
    private var recorder: FlowRecorder?
    private let hooks: ExchangeHooks

    init(recorder: FlowRecorder, hooks: ExchangeHooks) {
        self.recorder = recorder
        self.hooks = hooks
    }

    func finish(then: @escaping @Sendable () -> Void) {
        guard var recorder else { return then() }
        self.recorder = nil
        hooks.ended(recorder.finish(error: nil), stored: then)
    }
}
