import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiTesting
import Testing

/// nginx with `http2` as the origin, over TLS (h2 chosen by ALPN) and in clear text (h2c with
/// prior knowledge only): curl speaks HTTP/2 to Kagami, Kagami speaks HTTP/2 to nginx, and what
/// nginx saw and sent comes through whole.
@Suite("HTTP/2 to nginx", .serialized)
struct HTTP2NginxTests {
    static let file = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

    static func with(_ body: (NginxOrigin, TestCertificates) async throws -> Void) async throws {
        let certificates = try TestCertificates.make()
        let nginx = try await NginxOrigin.start(files: ["file.bin": Data(file)], certificates: certificates)
        defer { nginx.stop() }
        try await body(nginx, certificates)
    }

    @Test func h2OverTLSOnBothLegs() async throws {
        try await Self.with { nginx, certificates in
            let ca = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
            try await ProxyHarness.with(configure: {
                $0.interception = InterceptionConfiguration(authority: ca, additionalTrustRootFiles: [certificates.caPath])
            }) { proxy in
                let base = "https://localhost:\(nginx.tlsPort)"
                let output = temporaryPath("file.bin")
                let download = try await proxy.curl([
                    "--http2", "--cacert", ca.certificatePath, "-w", "%{http_version}", "-o", output, "\(base)/file.bin",
                ])
                #expect(download.status == 0, "\(download.stderr)")
                #expect(download.stdoutText == "2")
                #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(Self.file))

                let echo = try await proxy.curl([
                    "--http2", "--cacert", ca.certificatePath, "-H", "Cookie: a=1", "-H", "Cookie: b=2", "\(base)/echo",
                ])
                #expect(echo.status == 0, "\(echo.stderr)")
                // nginx got the request in HTTP/2, the cookies joined as HTTP/2 allows.
                #expect(echo.stdoutText == "GET HTTP/2.0 cookie=a=1; b=2\n", "\(echo.stdoutText)")

                let flows = try await proxy.flows(count: 2)
                let file = try #require(flows.first { $0.request.target == "/file.bin" })
                #expect(file.request.version == "HTTP/2.0")
                #expect(file.response?.version == "HTTP/2.0")
                #expect(file.response?.body.data == Data(Self.file))
                #expect(file.response?.headers.values(for: "set-cookie") == ["a=1", "b=2"])
                #expect(file.tls?.alpn == "h2")
            }
        }
    }

    /// An HTTP/1.1 client gets HTTP/1.1 from nginx too: Kagami offers the server only what the
    /// client speaks.
    @Test func anHTTP11ClientStaysHTTP11() async throws {
        try await Self.with { nginx, certificates in
            let ca = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
            try await ProxyHarness.with(configure: {
                $0.interception = InterceptionConfiguration(authority: ca, additionalTrustRootFiles: [certificates.caPath])
            }) { proxy in
                let echo = try await proxy.curl(["--http1.1", "--cacert", ca.certificatePath, "https://localhost:\(nginx.tlsPort)/echo"])
                #expect(echo.status == 0, "\(echo.stderr)")
                #expect(echo.stdoutText == "GET HTTP/1.1 cookie=\n", "\(echo.stdoutText)")
                let flow = try #require(try await proxy.flows(count: 1).first)
                #expect(flow.response?.version == "HTTP/1.1")
            }
        }
    }

    /// nginx's clear-text `http2` listener speaks HTTP/2 with prior knowledge only; an h2c
    /// client in reverse mode before it gets through, Kagami speaking h2c to nginx.
    @Test func h2cWithPriorKnowledgeOnBothLegs() async throws {
        try await Self.with { nginx, _ in
            try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: nginx.clearTextPort)) }) { proxy in
                let output = temporaryPath("file.bin")
                let download = try await CommandLineClient.curl.run([
                    "-s", "--max-time", "30", "--http2-prior-knowledge", "-w", "%{http_version}", "-o", output, "\(proxy.proxyURL)/file.bin",
                ])
                #expect(download.status == 0, "\(download.stderr)")
                #expect(download.stdoutText == "2")
                #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(Self.file))
                let echo = try await CommandLineClient.curl.run([
                    "-s", "--max-time", "30", "--http2-prior-knowledge", "-X", "POST", "--data", "x", "\(proxy.proxyURL)/echo",
                ])
                #expect(echo.stdoutText == "POST HTTP/2.0 cookie=\n", "\(echo.stdoutText) \(echo.stderr)")
                let flows = try await proxy.flows(count: 2)
                #expect(flows.count == 2)
                #expect(flows.allSatisfy { $0.request.version == "HTTP/2.0" && $0.response?.version == "HTTP/2.0" })
            }
        }
    }
}
