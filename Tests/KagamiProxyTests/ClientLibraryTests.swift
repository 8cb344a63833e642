import AsyncHTTPClient
import Foundation
import KagamiTesting
import NIOCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("AsyncHTTPClient and URLSession through the proxy")
struct ClientLibraryTests {
    @Test func asyncHTTPClientWithProxyConfiguration() async throws {
        try await ProxyHarness.with { h in
            var configuration = HTTPClient.Configuration()
            configuration.proxy = .server(host: "127.0.0.1", port: h.proxyPort)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            do {
                let (_, data) = try randomFile(size: 200_000, seed: 3)
                var request = HTTPClientRequest(url: "\(h.origin.baseURL)/echo")
                request.method = .PUT
                request.headers.add(name: "Content-Type", value: "application/octet-stream")
                request.body = .bytes(ByteBuffer(bytes: data))
                let response = try await client.execute(request, timeout: .seconds(30))
                #expect(response.status == .ok)
                let body = try await response.body.collect(upTo: 1 << 20)
                let echo = try Echo(Data(body.readableBytesView))
                #expect(echo.method == "PUT")
                #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))

                let get = try await client.execute(HTTPClientRequest(url: "\(h.origin.baseURL)/bytes/100000"), timeout: .seconds(30))
                let bytes = try await get.body.collect(upTo: 1 << 20)
                #expect(Data(bytes.readableBytesView) == Data(OriginServer.bytes(100_000)))
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
            // AsyncHTTPClient sends even plain-HTTP requests through a CONNECT tunnel.
            let flows = try await h.flows(count: 1)
            let tunnel = try #require(flows.first)
            #expect(tunnel.request.method == "CONNECT")
            #expect(tunnel.request.url == "127.0.0.1:\(h.origin.port)")
            #expect(tunnel.request.body.size > 200_000)
            #expect((tunnel.response?.body.size ?? 0) > 100_000)
            #expect(h.origin.received.map(\.method) == ["PUT", "GET"])
        }
    }

    /// swift-corelibs-foundation's URLSession honours `http_proxy` but not
    /// `connectionProxyDictionary`, so it runs in a child process with the variable set: the
    /// `kagami` binary is not needed, a tiny Swift script is too slow to compile, so the child
    /// is this test binary's own helper mode (see `URLSessionProbe`).
    @Test func urlSessionThroughHTTPProxyVariable() async throws {
        try await ProxyHarness.with { h in
            let probe = try URLSessionProbe.locate()
            let result = try await CommandLineClient(probe).run(
                ["\(h.origin.baseURL)/echo?from=urlsession"],
                environment: ["http_proxy": h.proxyURL, "HTTP_PROXY": h.proxyURL, "PATH": "/usr/bin:/bin"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.hasPrefix("200 "))
            let flows = try await h.flows(count: 1)
            let flow = try #require(flows.first)
            #expect(flow.request.url == "\(h.origin.baseURL)/echo?from=urlsession")
            #expect(flow.response?.status == 200)
        }
    }
}
