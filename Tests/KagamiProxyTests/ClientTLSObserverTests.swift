import Foundation
import KagamiCertificates
import KagamiTesting
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

    /// A real client (Python's ssl, OpenSSL) asking Kagami to close after the response
    /// (`Connection: close`) reads the whole response, then Kagami's close_notify (a clean TLS
    /// end, not a ragged EOF), then the socket's end, without closing its own side first.
    @Test func aClientAskingForTheCloseGetsTheResponseACloseNotifyAndTheSocketsEnd() async throws {
        try await HTTPSHarness.with { h in
            let result = try await CommandLineClient("/usr/bin/python3").run([
                "-c", Self.closingClient, String(h.proxy.proxyPort), "localhost", String(h.origin.port), h.kagamiCA.certificatePath,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == "200 complete close_notify eof\n", "\(result.stdoutText) \(result.stderr)")
            let flows = try await h.proxy.flows(count: 1)
            #expect(flows.first?.response?.status == 200)
        }
    }

    /// CONNECT, TLS, one GET with `Connection: close`; reads to the TLS end (a missing
    /// close_notify raises), then the raw socket to its end; prints `STATUS complete close_notify eof`.
    private static let closingClient = #"""
    import socket, ssl, sys
    proxy_port, host, port, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    context = ssl.create_default_context(cafile=cafile)
    raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=20)
    raw.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        byte = raw.recv(1)
        if not byte:
            raise SystemExit("connection closed in the CONNECT reply: %r" % reply)
        reply += byte
    if not reply.startswith(b"HTTP/1.1 200"):
        raise SystemExit("CONNECT refused: %r" % reply)
    tls = context.wrap_socket(raw, server_hostname=host, suppress_ragged_eofs=False)
    tls.sendall(("GET /echo HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n" % (host, port)).encode())
    data = b""
    while True:
        chunk = tls.recv(65536)  # b"" only after a close_notify; a bare EOF raises SSLEOFError
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    status = head.split(b" ", 2)[1].decode()
    # The TLS layer is done; the socket itself ends (a FIN) without this side closing anything.
    plain = socket.socket(fileno=tls.detach())
    plain.settimeout(20)
    ended = plain.recv(1) == b""
    print("%s %s close_notify %s" % (status, "complete" if len(body) == length else "short %d/%d" % (len(body), length), "eof" if ended else "open"), flush=True)
    """#
}
