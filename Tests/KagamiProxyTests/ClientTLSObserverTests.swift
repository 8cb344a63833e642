import Foundation
import KagamiCertificates
import NIOCore
import NIOEmbedded
import NIOSSL
import Testing
@testable import KagamiProxy

/// Kagami closing an intercepted connection: the TLS handler in front waits for the client's
/// close_notify or its leaving, and the observer asks for the read that lets either in, whatever
/// the handlers above hold.
@Suite struct ClientTLSObserverTests {
    /// Stands where the TLS handler is: keeps a close pending, as NIOSSL does while it waits for
    /// the client's close_notify, and counts the reads asked of it.
    final class PendingClose: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0
        var closes: [CloseMode] = []

        func read(context: ChannelHandlerContext) { reads += 1 }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            closes.append(mode)
        }
    }

    private func observedChannel() throws -> (EmbeddedChannel, PendingClose) {
        let authority = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        let tlsHandler = NIOSSLServerHandler(context: try InterceptionIdentities(authority: authority).serverContext(for: "api.example"))
        let pending = PendingClose()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(pending)
        try channel.pipeline.syncOperations.addHandler(ClientTLSObserver(state: ClientTLSState(), host: "api.example", tlsHandler: tlsHandler, recordFailure: { _ in }))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        return (channel, pending)
    }

    @Test func closingAsksForTheReadThatBringsTheClientsReply() throws {
        let (channel, pending) = try observedChannel()
        channel.pipeline.close(mode: .all, promise: nil)
        #expect(pending.closes == [.all])
        #expect(pending.reads == 1)
    }

    /// Half-closing sends close_notify without waiting for the client's: no read is asked.
    @Test func closingTheOutputOnlyAsksForNothing() throws {
        let (channel, pending) = try observedChannel()
        channel.pipeline.close(mode: .output, promise: nil)
        #expect(pending.closes == [.output])
        #expect(pending.reads == 0)
    }
}
