import KagamiControl
import NIOCore
import NIOHTTP1

/// Serves a client the proxy has not been allowed for (`ClientAccess`): each request is read,
/// noted for the web UI, and answered with a 403 page saying why and what to do; nothing is
/// relayed, and the connection closes after the answer.
final class HeldClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let decision: ClientAccess.Decision
    private let access: ClientAccess
    private var head: HTTPRequestHead?
    private var timer: Scheduled<Void>?

    /// How long a held client may take to send a request.
    static let timeout = TimeAmount.seconds(10)

    init(decision: ClientAccess.Decision, access: ClientAccess) {
        self.decision = decision
        self.access = access
    }

    static func addHandlers(_ pipeline: ChannelPipeline.SynchronousOperations, decision: ClientAccess.Decision, access: ClientAccess) throws {
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try pipeline.addHandler(HTTPResponseEncoder())
        try pipeline.addHandler(HTTPServerProtocolErrorHandler())
        try pipeline.addHandler(HeldClientHandler(decision: decision, access: access))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.timeout) { bound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    /// The client half-closed: a request it completed is still answered (and the connection
    /// closed then); otherwise it closes now.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            if head == nil { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            access.held(context.channel.remoteAddress.flatMap(IPAddressBytes.init), sent: "\(head.method) \(head.uri) \(head.version)")
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            let address = context.channel.remoteAddress?.ipAddress ?? "this device"
            let message = switch decision {
            case .denied:
                "Kagami: this proxy is not for \(address): its user denied this device."
            case .pending, .allowed:
                "Kagami: this proxy has not been allowed for \(address) yet. Its user can allow this device in Kagami's web UI (Device setup), or start the proxy with --allow-client \(address)."
            }
            let (responseHead, body) = ErrorPage.response(status: .forbidden, message: message, version: head.version, close: true)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
