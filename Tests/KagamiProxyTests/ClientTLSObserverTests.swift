import Foundation
import KagamiCertificates
import NIOCore
import NIOEmbedded
import NIOSSL
import Testing
@testable import KagamiProxy

/// Kagami closing an intercepted connection whose client leaves without a close_notify: the
/// connection closes then, not when the TLS handler's shutdown timeout runs out (the event
/// loop's clock never moves here, so a connection left waiting stays open).
@Suite struct ClientTLSObserverTests {
    /// A TLS connection between an NIOSSL client and Kagami's server side (NIOSSLServerHandler
    /// and the observer), handshake done, bytes carried by hand.
    struct Connection {
        let server = EmbeddedChannel()
        let client = EmbeddedChannel()

        init() throws {
            let authority = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
            let tlsHandler = NIOSSLServerHandler(context: try InterceptionIdentities(authority: authority).serverContext(for: "api.example"))
            let state = ClientTLSState()
            try server.pipeline.syncOperations.addHandler(tlsHandler)
            try server.pipeline.syncOperations.addHandler(ClientTLSObserver(state: state, host: "api.example", tlsHandler: tlsHandler, recordFailure: { _ in }))
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            try client.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: NIOSSLContext(configuration: configuration), serverHostname: "api.example"))
            try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            try carry()
            guard state.handshakeCompleted else { throw HandshakeNotDone() }
        }

        struct HandshakeNotDone: Error {}

        /// Moves bytes both ways until neither side has any to send.
        func carry() throws {
            var moved = true
            while moved {
                moved = false
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    moved = true
                    try? server.writeInbound(bytes)
                }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                    moved = true
                    try? client.writeInbound(bytes)
                }
            }
        }
    }

    @Test func aClientLeavingAfterKagamisCloseIsClosedAtOnce() throws {
        let connection = try Connection()
        connection.server.pipeline.close(mode: .all, promise: nil)
        // The TLS handler sent its close_notify and waits for the client's.
        #expect(connection.server.isActive)
        // The client goes with a FIN and no close_notify: the proxy sees its input closed.
        connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.server.isActive)
    }

    @Test func aClientThatLeftBeforeKagamisCloseIsClosedAtOnce() throws {
        let connection = try Connection()
        connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(connection.server.isActive)
        connection.server.pipeline.close(mode: .all, promise: nil)
        #expect(!connection.server.isActive)
    }

    /// A client that answers with its close_notify ends the TLS shutdown as before.
    @Test func aClientAnsweringTheCloseNotifyEndsTheConnection() throws {
        let connection = try Connection()
        connection.server.pipeline.close(mode: .all, promise: nil)
        #expect(connection.server.isActive)
        connection.client.pipeline.close(mode: .all, promise: nil)
        try connection.carry()
        #expect(!connection.server.isActive)
    }
}
