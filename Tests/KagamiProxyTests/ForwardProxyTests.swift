import Foundation
import KagamiFlow
import KagamiTesting
import Testing

@Suite("Forward proxy with curl")
struct ForwardProxyTests {
    @Test(arguments: ["GET", "POST", "PUT", "DELETE"])
    func methodsReachTheOriginAndAreStoredAsSent(method: String) async throws {
        try await ProxyHarness.with { h in
            let body = method == "GET" ? nil : #"{"name":"Ada","n":\#(method.count)}"#
            var args = ["-X", method, "-H", "X-Trace: one", "-H", "X-Trace: two", "\(h.origin.baseURL)/echo?x=1&y=%20"]
            if let body { args += ["-H", "Content-Type: application/json", "--data-binary", body] }
            let result = try await h.curl(args)
            #expect(result.status == 0, "\(result.stderr)")
            let echo = try Echo(result.stdout)
            #expect(echo.method == method)
            #expect(echo.uri == "/echo?x=1&y=%20")
            #expect(echo.bodySize == (body?.utf8.count ?? 0))

            let flows = try await h.flows(count: 1)
            let flow = try #require(flows.first)
            #expect(flow.mode == .forward)
            #expect(flow.request.method == method)
            #expect(flow.request.url == "\(h.origin.baseURL)/echo?x=1&y=%20")
            #expect(flow.request.body.data == Data((body ?? "").utf8))
            #expect(flow.response?.status == 200)
            #expect(flow.response?.body.data == result.stdout)
            #expect(flow.error == nil)
            // What the origin received is what the session says was sent, header for header.
            let received = try #require(h.origin.received.first)
            #expect(flow.request.headers.map { [$0.name, $0.value] } == received.headers.map { [$0.name, $0.value] })
            #expect(received.headers.filter { $0.name == "X-Trace" }.map(\.value) == ["one", "two"])
            #expect(!received.headers.contains { $0.name.lowercased() == "proxy-connection" })
            let t = flow.timings
            let end = try #require(t.end)
            #expect(t.start <= (t.connected ?? end) && (t.firstByte ?? end) <= end)
        }
    }

    /// The absolute-form target names the server: a Host that disagrees is replaced, and fields
    /// about the client's connection (and those its Connection header names) stay behind.
    @Test func hostFollowsTheTargetAndHopByHopFieldsStayBehind() async throws {
        try await ProxyHarness.with { h in
            let result = try await h.curl([
                "-H", "Host: elsewhere.invalid", "-H", "Connection: keep-alive, X-Private", "-H", "X-Private: secret",
                "-H", "Keep-Alive: timeout=5", "-H", "TE: trailers", "-H", "X-Kept: yes", "\(h.origin.baseURL)/echo",
            ])
            let echo = try Echo(result.stdout)
            let names = echo.headers.map { $0[0].lowercased() }
            #expect(echo.headers.first { $0[0].lowercased() == "host" }?[1] == "127.0.0.1:\(h.origin.port)")
            for gone in ["connection", "x-private", "keep-alive", "te", "proxy-connection"] {
                #expect(!names.contains(gone), "\(gone) was forwarded")
            }
            #expect(names.contains("x-kept"))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.host == "127.0.0.1")
            #expect(flow.request.headers["Host"] == "127.0.0.1:\(h.origin.port)")
        }
    }

    @Test func emptyAndLargeBodiesKeepEveryByte() async throws {
        try await ProxyHarness.with(configure: { $0.bodyLimit = 1 << 20 }) { h in
            let (path, data) = try randomFile(size: 5 << 20)
            let upload = try await h.curl(["--data-binary", "@\(path)", "-H", "Content-Type: application/octet-stream", "\(h.origin.baseURL)/echo"])
            #expect(upload.status == 0, "\(upload.stderr)")
            let echo = try Echo(upload.stdout)
            #expect(echo.bodySize == data.count)
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))

            let empty = try await h.curl(["-X", "POST", "-H", "Content-Length: 0", "\(h.origin.baseURL)/echo"])
            #expect(try Echo(empty.stdout).bodySize == 0)

            let size = 20 << 20
            // Into a file: large output through a pipe is what the test harness reads least reliably.
            let downloadPath = temporaryPath("download.bin")
            let download = try await h.curl(["-o", downloadPath, "\(h.origin.baseURL)/bytes/\(size)"])
            #expect(download.status == 0)
            let downloaded = try Data(contentsOf: URL(fileURLWithPath: downloadPath))
            #expect(downloaded.count == size)
            #expect(downloaded == Data(OriginServer.bytes(size)))

            let flows = try await h.flows(count: 3)
            #expect(flows.count == 3)
            // Bodies over the capture limit are counted in full and kept up to the limit.
            #expect(flows[0].request.body.size == data.count)
            #expect(flows[0].request.body.isTruncated)
            #expect(flows[0].request.body.data == data.prefix(1 << 20))
            #expect(flows[1].request.body.size == 0)
            #expect(flows[1].request.body.isTruncated == false)
            #expect(flows[2].response?.body.size == size)
            #expect(flows[2].response?.body.isTruncated == true)
            #expect(flows[2].response?.body.data == Data(OriginServer.bytes(1 << 20)))
        }
    }

    @Test func chunkedUploadAndDownload() async throws {
        try await ProxyHarness.with { h in
            let (path, data) = try randomFile(size: 300_000, seed: 7)
            let upload = try await h.curl(["-H", "Transfer-Encoding: chunked", "--data-binary", "@\(path)", "\(h.origin.baseURL)/echo"])
            let echo = try Echo(upload.stdout)
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))
            #expect(echo.headers.contains { $0.first?.lowercased() == "transfer-encoding" && $0.last == "chunked" })

            let download = try await h.curl(["-D", "-", "-o", "/dev/null", "\(h.origin.baseURL)/bytes/250000?chunked=1"])
            #expect(download.stdoutText.lowercased().contains("transfer-encoding: chunked"))
            let body = try await h.curl(["\(h.origin.baseURL)/bytes/250000?chunked=1"])
            #expect(body.stdout == Data(OriginServer.bytes(250_000)))

            let flows = try await h.flows(count: 3)
            #expect(flows[0].request.body.data == data)
            #expect(flows[2].response?.body.data == Data(OriginServer.bytes(250_000)))
        }
    }

    @Test func keepAliveReusesClientAndServerConnections() async throws {
        try await ProxyHarness.with { h in
            let urls = (1...4).map { "\(h.origin.baseURL)/echo?n=\($0)" }
            let result = try await h.curl(["-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}\n"] + urls)
            // curl opened one connection to the proxy for all four requests...
            #expect(result.stdoutText.split(separator: "\n") == ["1", "0", "0", "0"])
            // ...and the proxy one connection to the origin.
            let ports = Set(h.origin.received.map(\.clientPort))
            #expect(h.origin.received.count == 4)
            #expect(ports.count == 1)
            let second = try await h.curl(["\(h.origin.baseURL)/echo?n=5"])
            #expect(second.status == 0)
            // Pools are per event loop; a new client connection lands on one of two loops here.
            #expect(Set(h.origin.received.map(\.clientPort)).count <= 2)
        }
    }

    @Test func headNoContentAndNotModifiedHaveNoBody() async throws {
        try await ProxyHarness.with { h in
            let head = try await h.curl(["-I", "\(h.origin.baseURL)/bytes/1234"])
            #expect(head.status == 0, "\(head.stderr)")
            #expect(head.stdoutText.contains("content-length: 1234") || head.stdoutText.contains("Content-Length: 1234"))
            for code in [204, 304] {
                let result = try await h.curl(["-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/status/\(code)"])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdoutText == "\(code) 0")
            }
            // The connection is still usable after bodiless responses (no stray bytes).
            let all = try await h.curl(["-o", "/dev/null", "-w", "%{http_code} ", "-I", "\(h.origin.baseURL)/bytes/10", "-o", "/dev/null", "\(h.origin.baseURL)/status/204", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(all.stdoutText == "200 204 200 ")
            let flows = try await h.flows(count: 6)
            #expect(flows[0].request.method == "HEAD")
            #expect(flows[0].response?.body.size == 0)
            #expect(flows[1].response?.status == 204)
            #expect(flows[2].response?.status == 304)
        }
    }

    @Test func expectContinueIsRelayed() async throws {
        try await ProxyHarness.with { h in
            let result = try await CommandLineClient.curl.run([
                "-sv", "--max-time", "60", "-x", h.proxyURL, "-H", "Expect: 100-continue",
                "--expect100-timeout", "5", "--data-binary", "hello", "\(h.origin.baseURL)/echo",
            ])
            #expect(result.stderr.contains("HTTP/1.1 100 Continue"))
            #expect(try Echo(result.stdout).bodySize == 5)
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.response?.status == 200)
            #expect(flow.request.body.data == Data("hello".utf8))
        }
    }
}
