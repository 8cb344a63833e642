import AsyncHTTPClient
import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
@testable import KagamiProxy
import KagamiRules
import KagamiTesting
import NIOCore
import NIOSSL
import Testing

/// A TLS origin signed by its own test CA, and a proxy intercepting with a Kagami CA.
struct HTTPSHarness {
    let origin: OriginServer
    let originCA: TestCertificates
    let kagamiCA: CertificateAuthority
    let proxy: ProxyHarness

    static func with<T>(
        originKind: TestCertificates.Kind = .valid,
        sslProxying: SSLProxyingList = SSLProxyingList(),
        insecureUpstream: Bool = false,
        trustOrigin: Bool = true,
        breakpoints: Breakpoints = Breakpoints(),
        _ body: (HTTPSHarness) async throws -> T
    ) async throws -> T {
        let originCA = try TestCertificates.make()
        let origin = try await OriginServer.start(tls: originCA.serverIdentity(for: "localhost", kind: originKind))
        let kagamiCA = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        let interception = InterceptionConfiguration(
            authority: kagamiCA, sslProxying: sslProxying,
            additionalTrustRootFiles: trustOrigin ? [originCA.caPath] : [], insecureUpstream: insecureUpstream
        )
        do {
            let result = try await ProxyHarness.with(breakpoints: breakpoints, configure: { $0.interception = interception }) { proxy in
                try await body(HTTPSHarness(origin: origin, originCA: originCA, kagamiCA: kagamiCA, proxy: proxy))
            }
            try await origin.stop()
            return result
        } catch {
            try? await origin.stop()
            throw error
        }
    }

    /// curl through the proxy trusting Kagami's CA.
    func curl(_ arguments: [String], trusting ca: String? = nil) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "20", "-x", proxy.proxyURL, "--cacert", ca ?? kagamiCA.certificatePath] + arguments)
    }
}

@Suite("HTTPS interception")
struct HTTPSInterceptionTests {
    @Test func decryptsAndStoresExchangesByteForByte() async throws {
        try await HTTPSHarness.with { h in
            let (path, data) = try randomFile(size: 150_000, seed: 11)
            // HTTP/1.1 here; HTTP2Tests covers h2.
            let result = try await h.curl(["--http1.1", "--data-binary", "@\(path)", "-H", "X-Secret: 42", "\(h.origin.localhostURL)/echo?q=1"])
            #expect(result.status == 0, "\(result.stderr)")
            let echo = try Echo(result.stdout)
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))

            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.request.url == "\(h.origin.localhostURL)/echo?q=1")
            #expect(flow.request.scheme == "https")
            #expect(flow.request.body.data == data)
            #expect(flow.request.headers["X-Secret"] == "42")
            #expect(flow.response?.body.data == result.stdout)
            let received = try #require(h.origin.received.first)
            #expect(flow.request.headers.map { [$0.name, $0.value] } == received.headers.map { [$0.name, $0.value] })
            let tls = try #require(flow.tls)
            #expect(tls.serverName == "localhost")
            #expect(tls.clientVersion == "TLSv1.3")
            #expect(tls.version == "TLSv1.3")
            #expect(tls.alpn == "http/1.1")
            #expect(tls.certificateSubject?.contains("CN=localhost") == true)
            #expect(tls.certificateIssuer?.contains("Kagami CA") == true)
            #expect(tls.certificateFingerprintSHA256?.count == 95)
            #expect(tls.upstreamVerificationDisabled == false)
            // The server handshake is measured (HAR's timings.ssl) and lies within connect.
            let ssl = try #require(flow.timings.ssl)
            let connect = try #require(flow.timings.connected).timeIntervalSince(flow.timings.start)
            #expect(ssl > 0 && ssl <= connect, "ssl \(ssl) s, connect \(connect) s")
            // A second request on the kept connection made no handshake.
            _ = try await h.curl(["--http1.1", "-o", "/dev/null", "\(h.origin.localhostURL)/echo?q=2", "\(h.origin.localhostURL)/echo?q=3"])
            let reused = try #require(try await h.proxy.flows(count: 3).first { $0.request.target == "/echo?q=3" })
            #expect(reused.timings.ssl == nil)
        }
    }

    @Test func eachHostGetsItsOwnLeafAndSNILessClientsGetTheConnectHost() async throws {
        try await HTTPSHarness.with { h in
            // curl sends no SNI for an IP address: the leaf is made for the CONNECT host.
            let byIP = try await CommandLineClient.curl.run(["-sv", "--max-time", "20", "-x", h.proxy.proxyURL, "--cacert", h.kagamiCA.certificatePath, "--resolve", "localhost:\(h.origin.port):127.0.0.1", "https://127.0.0.1:\(h.origin.port)/echo"])
            #expect(byIP.status == 0, "\(byIP.stderr)")
            #expect(byIP.stderr.contains("CN=127.0.0.1"))
            let byName = try await CommandLineClient.curl.run(["-sv", "--max-time", "20", "-x", h.proxy.proxyURL, "--cacert", h.kagamiCA.certificatePath, "\(h.origin.localhostURL)/echo"])
            #expect(byName.status == 0, "\(byName.stderr)")
            #expect(byName.stderr.contains("CN=localhost"))
            let flows = try await h.proxy.flows(count: 2)
            #expect(flows.map(\.request.host).sorted() == ["127.0.0.1", "localhost"])
            #expect(flows.first { $0.request.host == "127.0.0.1" }?.tls?.serverName == nil)
        }
    }

    /// The leaf comes with Kagami's CA after it, so a client that pins the CA's key or builds the
    /// chain only from what the server sends can check it (openssl shows what was sent).
    @Test func theChainSentIsTheLeafThenKagamisCA() async throws {
        try await HTTPSHarness.with { h in
            let shown = try await CommandLineClient("/usr/bin/openssl").run(
                ["s_client", "-proxy", "127.0.0.1:\(h.proxy.proxyPort)", "-connect", "localhost:\(h.origin.port)", "-servername", "localhost",
                 "-showcerts", "-CAfile", h.kagamiCA.certificatePath, "-verify_return_error"],
                stdin: Data("Q\n".utf8))
            let text = String(decoding: shown.stdout, as: UTF8.self)
            #expect(text.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 == 2, "\(text.prefix(2000))")
            #expect(text.contains("1 s:") && text.contains("Kagami"), "\(text.prefix(2000))")
            #expect(text.contains("Verify return code: 0 (ok)"))
        }
    }

    @Test func excludedHostsAreTunnelledUntouched() async throws {
        try await HTTPSHarness.with(sslProxying: SSLProxyingList(exclude: [Location(host: "local*")])) { h in
            // The client sees the origin's own certificate: it must trust the origin's CA.
            let direct = try await h.curl(["\(h.origin.localhostURL)/echo"], trusting: h.originCA.caPath)
            #expect(direct.status == 0, "\(direct.stderr)")
            let withKagamiCA = try await h.curl(["\(h.origin.localhostURL)/echo"])
            #expect(withKagamiCA.status == 60)
            let flows = try await h.proxy.flows(count: 2)
            #expect(flows.allSatisfy { $0.mode == .tunnel && $0.request.method == "CONNECT" })
        }
    }

    @Test(arguments: [TestCertificates.Kind.expired, .wrongName])
    func badOriginCertificateGets502UnlessInsecure(kind: TestCertificates.Kind) async throws {
        try await HTTPSHarness.with(originKind: kind) { h in
            let result = try await h.curl(["-w", "\n%{http_code}", "\(h.origin.localhostURL)/echo"])
            #expect(result.stdoutText.hasSuffix("\n502"), "\(result.stdoutText)")
            #expect(result.stdoutText.contains("TLS handshake with localhost:\(h.origin.port) failed"))
            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.error?.kind == .tlsFailure)
            #expect(h.origin.received.isEmpty)
        }
        try await HTTPSHarness.with(originKind: kind, insecureUpstream: true) { h in
            let result = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.localhostURL)/echo"])
            #expect(result.stdoutText == " 200")
            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.tls?.upstreamVerificationDisabled == true)
        }
    }

    /// A certificate whose only name is the address 127.0.0.1 is not one for `localhost`, though
    /// localhost is where the connection goes; asked for by address, it is.
    @Test func theNameCheckedIsTheOneTheClientAskedFor() async throws {
        try await HTTPSHarness.with(originKind: .loopbackAddressOnly) { h in
            let byName = try await h.curl(["-w", "\n%{http_code}", "\(h.origin.localhostURL)/echo"])
            #expect(byName.stdoutText.hasSuffix("\n502"), "\(byName.stdoutText)")
            #expect(byName.stdoutText.contains("the certificate is for 127.0.0.1, not localhost"), "\(byName.stdoutText)")
            #expect(h.origin.received.isEmpty)
            let byAddress = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(byAddress.stdoutText == " 200")
            let flows = try await h.proxy.flows(count: 2)
            #expect(flows.contains { $0.error?.kind == .tlsFailure && $0.request.host == "localhost" })
        }
    }

    @Test func certificateNamesMatchAsRFC6125Says() throws {
        let names = CertificateNames(dnsNames: ["*.example.com", "api.internal"], addresses: [try #require(IPAddressBytes("10.1.2.3"))], commonName: "ignored.example")
        #expect(names.admit("www.example.com"))
        #expect(names.admit("WWW.Example.COM."))
        #expect(!names.admit("example.com"))
        #expect(!names.admit("a.b.example.com"))
        #expect(names.admit("api.internal"))
        #expect(!names.admit("ignored.example"))
        #expect(names.admit("10.1.2.3"))
        #expect(!names.admit("10.1.2.4"))
        #expect(CertificateNames(dnsNames: [], addresses: [], commonName: "legacy.example").admit("legacy.example"))
    }

    @Test func originSignedByAnUnknownCAIsRefused() async throws {
        try await HTTPSHarness.with(trustOrigin: false) { h in
            let result = try await h.curl(["-w", "\n%{http_code}", "\(h.origin.localhostURL)/echo"])
            #expect(result.stdoutText.hasSuffix("\n502"))
            #expect(result.stdoutText.contains("certificate verify failed"))
        }
    }

    @Test func clientThatDoesNotTrustTheCAIsRecorded() async throws {
        try await HTTPSHarness.with { h in
            let result = try await CommandLineClient.curl.run(["-s", "--max-time", "20", "-x", h.proxy.proxyURL, "\(h.origin.localhostURL)/echo"])
            #expect(result.status == 60)
            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.request.method == "CONNECT")
            #expect(flow.error?.kind == .tlsFailure)
            #expect(flow.error?.message.hasPrefix("client rejected the certificate for localhost") == true)
            // curl (OpenSSL) says why in a TLS alert, over TLS 1.3 as well as 1.2.
            #expect(flow.error?.message.contains("unknown CA") == true, "\(flow.error?.message ?? "")")
        }
    }

    @Test func certificatePageServesTheCA() async throws {
        try await HTTPSHarness.with { h in
            let pem = try await h.proxy.curl(["http://kagami.ssl/kagami-ca.pem"])
            #expect(pem.stdoutText == (try String(contentsOfFile: h.kagamiCA.certificatePath, encoding: .utf8)))
            let parsed = try await CommandLineClient("/usr/bin/openssl").run(["x509", "-noout", "-subject"], stdin: pem.stdout)
            #expect(parsed.status == 0)
            #expect(parsed.stdoutText.contains("Kagami CA"))
            let der = try await h.proxy.curl(["http://kagami.ssl/kagami-ca.cer"])
            #expect(der.stdout == Data(h.kagamiCA.certificateDER))
            let page = try await h.proxy.curl(["http://kagami.ssl/"])
            #expect(page.stdoutText.contains(h.kagamiCA.fingerprintSHA256))
            #expect(page.stdoutText.contains("xcrun simctl keychain booted add-root-cert"))
        }
    }

    @Test func asyncHTTPClientTrustingTheCA() async throws {
        try await HTTPSHarness.with { h in
            var configuration = HTTPClient.Configuration()
            configuration.proxy = .server(host: "127.0.0.1", port: h.proxy.proxyPort)
            // The connect phase spans the CONNECT and both TLS handshakes: on a 2-core machine
            // running every suite at once, AsyncHTTPClient's 10 s default was seen running out.
            configuration.timeout.connect = .seconds(30)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(h.kagamiCA.certificatePath)]
            configuration.tlsConfiguration = tls
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            do {
                var request = HTTPClientRequest(url: "\(h.origin.localhostURL)/echo")
                request.method = .POST
                request.body = .bytes(ByteBuffer(string: "from AsyncHTTPClient"))
                let response = try await client.execute(request, timeout: .seconds(20))
                #expect(response.status == .ok)
                let echo = try Echo(Data(try await response.body.collect(upTo: 1 << 20).readableBytesView))
                #expect(echo.bodySize == 20)
                // Plain HTTP that AsyncHTTPClient also tunnels through CONNECT is read as HTTP.
                let plain = try await OriginServer.start()
                let get = try await client.execute(HTTPClientRequest(url: "\(plain.baseURL)/echo?plain=1"), timeout: .seconds(20))
                #expect(get.status == .ok)
                _ = try await get.body.collect(upTo: 1 << 20)
                try await plain.stop()
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
            let flows = try await h.proxy.flows(count: 2)
            #expect(flows.contains { $0.request.url == "\(h.origin.localhostURL)/echo" && $0.request.body.data == Data("from AsyncHTTPClient".utf8) })
            #expect(flows.contains { $0.request.scheme == "http" && $0.request.target == "/echo?plain=1" && $0.response?.status == 200 })
        }
    }
}
