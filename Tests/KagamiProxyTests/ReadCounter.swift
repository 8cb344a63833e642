import NIOCore

/// Counts the reads a channel's handlers ask of the socket: put last in an `EmbeddedChannel`'s
/// pipeline, it shows whether a handler holds reads back or lets them through.
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Never
    var reads = 0

    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}
