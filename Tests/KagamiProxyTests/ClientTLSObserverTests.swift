import Foundation
import KagamiCertificates
import NIOCore
import NIOEmbedded
import NIOSSL
import Testing
@testable import KagamiProxy

/// Kagami closing an intercepted connection whose client leaves without a close_notify: the
/// connection closes then, not when the TLS handler's shutdown timeout runs out (the event
/// loop's clock never moves here, so a connection left waiting stays open), and nothing keeps
/// its TLS state once it is closed. (An embedded channel closes whole when its output is
/// closed, so the half-closed wait itself is for the tests with real clients.)
@Suite struct ClientTLSObserverTests {
    /// A TLS connection between an NIOSSL client and Kagami's server side (NIOSSLServerHandler
    /// and the observer), handshake done, bytes carried by hand.
    struct Connection {
        let server = EmbeddedChannel()
        let client = EmbeddedChannel()
        /// The server side's TLS handler, as long as something holds it.
        weak var tlsHandler: NIOSSLServerHandler?

        init() throws {
            let authority = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
            let tlsHandler = NIOSSLServerHandler(context: try InterceptionIdentities(authority: authority).serverContext(for: "api.example"))
            self.tlsHandler = tlsHandler
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
        // The client goes with a FIN and no close_notify: the proxy sees its input closed.
        connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.server.isActive)
    }

    /// Kagami's close sends the client a close_notify, which ends the client's side.
    @Test func kagamisCloseSendsACloseNotify() throws {
        let connection = try Connection()
        connection.server.pipeline.close(mode: .all, promise: nil)
        // Closed whole with its output, the embedded channel has the TLS handler report an
        // unclean shutdown; what it wrote is still there to read.
        try? connection.server.throwIfErrorCaught()
        try connection.carry()
        #expect(!connection.client.isActive)
    }

    /// A closed connection's TLS handler (its buffers and BoringSSL connection, about 35 KB) is
    /// freed at once, not held by a shutdown timer for its 5 seconds: at a thousand new
    /// connections a second those held handlers were hundreds of megabytes.
    @Test(arguments: [false, true]) func aClosedConnectionKeepsNoTLSState(clientLeftFirst: Bool) throws {
        let connection = try Connection()
        if clientLeftFirst { connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        connection.server.pipeline.close(mode: .all, promise: nil)
        if !clientLeftFirst { connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        #expect(!connection.server.isActive)
        // The pipeline lets its handlers go on the event loop's next turn; its clock stays put.
        connection.server.embeddedEventLoop.run()
        #expect(connection.tlsHandler == nil)
    }

    @Test func aClientThatLeftBeforeKagamisCloseIsClosedAtOnce() throws {
        let connection = try Connection()
        connection.server.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(connection.server.isActive)
        connection.server.pipeline.close(mode: .all, promise: nil)
        #expect(!connection.server.isActive)
    }
}
