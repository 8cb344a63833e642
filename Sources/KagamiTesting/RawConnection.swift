import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP client that sends exact bytes and collects what comes back: for requests no HTTP
/// client would send (malformed, pipelined, oversized).
public enum RawConnection {
    public struct Closed: Error {}

    /// Sends `bytes` to 127.0.0.1:`port` and returns what was received once `until` holds for
    /// the text so far, the server closes, or `timeout` passes. The connection is closed on its
    /// event loop when the time is up, however busy the test's own threads are. `halfClose`
    /// shuts the sending side once the bytes are out (`shutdown(SHUT_WR)`), as `nc -N` does.
    public static func exchange(
        port: Int, send bytes: Data, timeout: Duration = .seconds(10), halfClose: Bool = false,
        until done: @escaping @Sendable (String) -> Bool = { _ in false }
    ) async throws -> String {
        String(decoding: try await exchangeBytes(port: port, send: bytes, timeout: timeout, halfClose: halfClose, until: done), as: UTF8.self)
    }

    /// The same, returning the bytes received as they are (binary protocols).
    public static func exchangeBytes(
        port: Int, send bytes: Data, timeout: Duration = .seconds(10), halfClose: Bool = false,
        until done: @escaping @Sendable (String) -> Bool = { _ in false }
    ) async throws -> Data {
        let collected = NIOLockedValueBox(Data())
        // The bytes go out as the connection opens, on its event loop: a server timing the
        // connection sees them as soon as the kernel delivers them, however busy this process is.
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let finished = eventLoop.makePromise(of: Void.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            Collector(collected: collected, send: bytes, halfClose: halfClose, done: done, finished: finished))
                    }
                }
                .connect(host: "127.0.0.1", port: port)
                .get()
        } catch {
            finished.succeed()
            throw error
        }
        channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
        try? await finished.futureResult.get()
        try? await channel.close()
        return collected.withLockedValue { $0 }
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let collected: NIOLockedValueBox<Data>
        let send: Data
        let halfClose: Bool
        let done: @Sendable (String) -> Bool
        let finished: EventLoopPromise<Void>
        private var isFinished = false

        init(collected: NIOLockedValueBox<Data>, send: Data, halfClose: Bool, done: @escaping @Sendable (String) -> Bool, finished: EventLoopPromise<Void>) {
            self.collected = collected
            self.send = send
            self.halfClose = halfClose
            self.done = done
            self.finished = finished
        }

        func channelActive(context: ChannelHandlerContext) {
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: send)), promise: nil)
            if halfClose { context.close(mode: .output, promise: nil) }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let text = collected.withLockedValue { all in
                all.append(contentsOf: buffer.readableBytesView)
                return String(decoding: all, as: UTF8.self)
            }
            if done(text) { finish() }
        }

        func channelInactive(context: ChannelHandlerContext) { finish() }

        func handlerRemoved(context: ChannelHandlerContext) { finish() }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func finish() {
            guard !isFinished else { return }
            isFinished = true
            finished.succeed()
        }
    }
}
