import Crypto
import Foundation
import KagamiCertificates
@testable import KagamiProxy
import KagamiTesting
import NIOSSL
import Testing
import X509

/// What Kagami keeps between intercepted connections: one leaf and one TLS server context per
/// host name (so clients resume their sessions), one upstream client context per trust settings.
@Suite("TLS identities and session reuse")
struct TLSSessionReuseTests {
    private static func makeAuthority() throws -> CertificateAuthority {
        try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
    }

    @Test func oneLeafAndOneContextPerHostName() throws {
        let authority = try Self.makeAuthority()
        let identities = try InterceptionIdentities(authority: authority)
        let first = try identities.identity(for: "api.example")
        let again = try identities.identity(for: "API.Example")
        #expect(first.context === again.context)
        #expect(first.leaf == again.leaf)
        let other = try identities.identity(for: "www.example")
        #expect(other.context !== first.context)
        #expect(try other.leaf.extensions.subjectAlternativeNames == SubjectAlternativeNames([.dnsName("www.example")]))
        // Every leaf carries the one P-256 key and is signed by the CA with ECDSA.
        #expect(other.leaf.publicKey == first.leaf.publicKey)
        #expect(P256.Signing.PublicKey(first.leaf.publicKey) != nil)
        #expect(first.leaf.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(first.leaf.issuer == authority.certificate.subject)
        #expect(authority.certificate.publicKey.isValidSignature(first.leaf.signature, for: first.leaf))
    }

    @Test func connectionsRacingForANewNameShareOneContext() async throws {
        let identities = try InterceptionIdentities(authority: try Self.makeAuthority())
        let contexts = try await withThrowingTaskGroup(of: NIOSSLContext.self) { group in
            for _ in 0..<8 {
                group.addTask { try identities.serverContext(for: "race.example") }
            }
            return try await group.reduce(into: [NIOSSLContext]()) { $0.append($1) }
        }
        #expect(contexts.count == 8)
        #expect(contexts.allSatisfy { $0 === contexts[0] })
        #expect(try identities.serverContext(for: "race.example") === contexts[0])
    }

    /// A new CA (`kagami ca --regenerate`, then a proxy started with it) signs new leaves: nothing
    /// made for the old CA is shown again.
    @Test func aRotatedCAGetsNewLeaves() throws {
        let old = try Self.makeAuthority()
        let rotated = try Self.makeAuthority()
        let before = try InterceptionIdentities(authority: old).identity(for: "api.example")
        let after = try InterceptionIdentities(authority: rotated).identity(for: "api.example")
        #expect(after.leaf != before.leaf)
        #expect(after.context !== before.context)
        #expect(after.leaf.publicKey != before.leaf.publicKey)
        #expect(rotated.certificate.publicKey.isValidSignature(after.leaf.signature, for: after.leaf))
        #expect(!old.certificate.publicKey.isValidSignature(after.leaf.signature, for: after.leaf))
    }

    @Test func proxiesWithTheSameTrustShareUpstreamContexts() throws {
        let corporate = try TestCertificates.make()
        let other = try TestCertificates.make()
        let first = try UpstreamTLS.shared(additionalTrustRootFiles: [corporate.caPath], insecure: false)
        let second = try UpstreamTLS.shared(additionalTrustRootFiles: [corporate.caPath], insecure: false)
        #expect(first.context === second.context)
        #expect(first.http2Context === second.http2Context)
        #expect(first.context !== first.http2Context)
        let otherAnchor = try UpstreamTLS.shared(additionalTrustRootFiles: [other.caPath], insecure: false)
        #expect(otherAnchor.context !== first.context)
        let unchecked = try UpstreamTLS.shared(additionalTrustRootFiles: [corporate.caPath], insecure: true)
        #expect(unchecked.context !== first.context)
        #expect(unchecked.verificationDisabled && !first.verificationDisabled)
        #expect(try UpstreamTLS.shared(additionalTrustRootFiles: [], insecure: true).context === unchecked.context)
    }

    /// An anchor file rewritten between two proxies is new settings, not the old context.
    @Test func aRewrittenAnchorFileGetsANewUpstreamContext() throws {
        let folder = try TemporaryFolder.make("trust")
        let path = folder.appendingPathComponent("anchor.pem").path
        try FileManager.default.copyItem(atPath: try TestCertificates.make().caPath, toPath: path)
        let before = try UpstreamTLS.shared(additionalTrustRootFiles: [path], insecure: false)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: try TestCertificates.make().caPath, toPath: path)
        let after = try UpstreamTLS.shared(additionalTrustRootFiles: [path], insecure: false)
        #expect(after.context !== before.context)

        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try UpstreamTLS.shared(additionalTrustRootFiles: [path], insecure: false)
            Issue.record("a file with no certificate was accepted as an anchor")
        } catch {
            #expect("\(error)" == "the trust anchor file \(path) holds no PEM certificate")
        }
        let missing = folder.appendingPathComponent("missing.pem").path
        do {
            _ = try UpstreamTLS.shared(additionalTrustRootFiles: [missing], insecure: false)
            Issue.record("a missing anchor file was accepted")
        } catch {
            #expect("\(error)" == "cannot read the trust anchor file \(missing)")
        }
    }

    /// A client that writes without TCP_NODELAY (Python's ssl on a bare socket, as Java's sockets
    /// do) sends its request after the handshake only once Kagami's kernel has acknowledged the
    /// client's Finished. Kagami acknowledges it at once: the GET is answered as fast as with
    /// TCP_NODELAY, not after a delayed ACK (40 ms at least, every connection). Connections with
    /// and without TCP_NODELAY alternate, and their median GET times are compared (by themselves,
    /// as `DelayedAcknowledgementTests` are).
    #if os(Linux)
    @Test(.enabled(if: TimedTests.alone))
    func aClientWithNagleIsAnsweredWithoutWaitingForADelayedACK() async throws {
        try await HTTPSHarness.with { h in
            let result = try await CommandLineClient("/usr/bin/python3").run([
                "-c", Self.client, "nagle", String(h.proxy.proxyPort), "localhost", String(h.origin.port), h.kagamiCA.certificatePath, "TLSv1_3",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let medians = result.stdoutText.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            try #require(medians.count == 2, "\(result.stdoutText) \(result.stderr)")
            // Half the kernel's least delayed ACK (TCP_DELACK_MIN): a GET that waited for one
            // takes 40 ms more.
            #expect(medians[1] < medians[0] + 20, "GET in ms, median with TCP_NODELAY \(medians[0]), without \(medians[1])")
        }
    }
    #endif

    /// Python's ssl module (OpenSSL) through a CONNECT tunnel: the second connection offers the
    /// session of the first and Kagami resumes it, over TLS 1.3 (tickets) and TLS 1.2.
    @Test(arguments: ["TLSv1_3", "TLSv1_2"])
    func aSecondConnectionResumesItsTLSSession(version: String) async throws {
        try await HTTPSHarness.with { h in
            let result = try await CommandLineClient("/usr/bin/python3").run([
                "-c", Self.client, "resume", String(h.proxy.proxyPort), "localhost", String(h.origin.port), h.kagamiCA.certificatePath, version,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutText.split(separator: "\n").map(String.init)
            let expectedVersion = version.replacingOccurrences(of: "_", with: ".")
            #expect(lines == ["reused=False \(expectedVersion) 200", "reused=True \(expectedVersion) 200"], "\(result.stdoutText) \(result.stderr)")
            let flows = try await h.proxy.flows(count: 2)
            #expect(flows.allSatisfy { $0.request.scheme == "https" && $0.response?.status == 200 })
        }
    }

    /// Connections to the proxy, each CONNECT then TLS then one GET. `resume`: two, the second
    /// offering the first connection's session; prints `reused=… VERSION STATUS` per connection.
    /// `nagle`: 22, every other one with TCP_NODELAY; prints the median GET time in ms of those
    /// with it, then of those without.
    private static let client = #"""
    import socket, ssl, statistics, sys, time
    mode, proxy_port, host, port, cafile, version = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
    context = ssl.create_default_context(cafile=cafile)
    context.minimum_version = context.maximum_version = getattr(ssl.TLSVersion, version)

    def read_head(sock):
        head = b""
        while b"\r\n\r\n" not in head:
            byte = sock.recv(1)
            if not byte:
                raise SystemExit("connection closed in a response head: %r" % head)
            head += byte
        return head

    def fetch(session, nodelay=True, times=None):
        raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=20)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(nodelay))
        raw.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
        reply = read_head(raw)
        if not reply.startswith(b"HTTP/1.1 200"):
            raise SystemExit("CONNECT refused: %r" % reply)
        tls = context.wrap_socket(raw, server_hostname=host, session=session)
        started = time.monotonic()
        tls.sendall(("GET /echo HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port)).encode())
        head = read_head(tls)
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
        body = b""
        while len(body) < length:
            body += tls.recv(length - len(body))
        if times is not None:
            times.append((time.monotonic() - started) * 1000)
        status = head.split(b" ", 2)[1].decode()
        if mode == "resume":
            print("reused=%s %s %s" % (tls.session_reused, tls.version(), status), flush=True)
        session = tls.session
        tls.close()
        return session

    if mode == "resume":
        fetch(fetch(None))
    else:
        with_nodelay, without = [], []
        for _ in range(11):
            fetch(None, True, with_nodelay)
            fetch(None, False, without)
        print("%.1f %.1f" % (statistics.median(with_nodelay), statistics.median(without)))
    """#
}
