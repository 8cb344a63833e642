import Foundation
import KagamiFlow
import KagamiPostgresStore
import KagamiControl
import KagamiProxy
import KagamiStore
import KagamiTesting
import Synchronization
import Testing

@Suite("Reverse proxy and CONNECT tunnels")
struct ModesTests {
    @Test func reverseModeSendsEverythingToItsServer() async throws {
        try await ProxyHarness.with(mode: { origin in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: origin.port)) }) { h in
            let result = try await CommandLineClient.curl.run(["-s", "--max-time", "60", "--data-binary", "abc", "\(h.proxyURL)/echo?r=1"])
            let echo = try Echo(result.stdout)
            #expect(echo.uri == "/echo?r=1")
            #expect(echo.method == "POST")
            // The server sees its own name in Host, as behind Charles's reverse proxies.
            #expect(echo.headers.contains { $0 == ["Host", "127.0.0.1:\(h.origin.port)"] })
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.mode == .reverse)
            #expect(flow.request.url == "\(h.origin.baseURL)/echo?r=1")
            #expect(flow.request.body.data == Data("abc".utf8))
        }
    }

    @Test func connectTunnelRelaysBytesUntouchedAndIsRecorded() async throws {
        try await ProxyHarness.with { h in
            let result = try await h.curl(["-p", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/bytes/300000", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(result.stdoutText == "200 300000200 \(h.origin.received.last.map { _ in "" } ?? "")" || result.stdoutText.hasPrefix("200 300000200 "))
            #expect(h.origin.received.count == 2)
            let flows = try await h.flows(count: 1)
            let tunnel = try #require(flows.first)
            #expect(tunnel.mode == .tunnel)
            #expect(tunnel.request.method == "CONNECT")
            #expect(tunnel.request.url == "127.0.0.1:\(h.origin.port)")
            #expect(tunnel.response?.status == 200)
            #expect((tunnel.response?.body.size ?? 0) > 300_000)
            #expect(tunnel.request.body.size > 0)
        }
    }

    /// An IPv6 authority is written in brackets everywhere: the recorded target, the refusal.
    @Test func connectToAnIPv6LiteralIsWrittenInBrackets() async throws {
        try await ProxyHarness.with { h in
            let authority = "[::1]:\(h.proxyPort)"
            let answer = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n".utf8),
                until: { $0.contains("\r\n\r\n") })
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(answer)")
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.method == "CONNECT")
            #expect(flow.request.url == authority)
            #expect(flow.error?.kind == .notAllowed)
            #expect(flow.error?.message.contains("\(authority) is Kagami itself") == true, "\(String(describing: flow.error))")
        }
    }

    @Test func connectToDeadServerGets502() async throws {
        try await ProxyHarness.with { h in
            let result = try await h.curl(["-p", "-w", "%{http_connect}", "http://127.0.0.1:1/"])
            #expect(result.stdoutText.hasSuffix("502"))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.method == "CONNECT")
            #expect(flow.error?.kind == .connectionRefused)
        }
    }
}

@Suite("Memory and durability")
struct DurabilityTests {
    /// The size of the large transfers below: 256 MiB, over twice the memory growth they allow, so
    /// a proxy that held the body fails them; `KAGAMI_TEST_LARGE_BYTES=1073741824` runs them at a
    /// gigabyte (as `bench/` does).
    static let largeBytes = ProcessInfo.processInfo.environment["KAGAMI_TEST_LARGE_BYTES"].flatMap { Int($0) } ?? 1 << 28

    /// A large download passes through while the proxy keeps only the capture limit of it. The
    /// proxy runs as its own process so that its memory is not mixed with other tests beside.
    @Test func aLargeDownloadStreamsInConstantMemory() async throws {
        let origin = try await OriginServer.start()
        let session = temporaryPath("gigabyte.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        let size = Self.largeBytes
        let (growth, result) = try await ResidentMemory.growth(of: proxy.process.pid) {
            try await CommandLineClient.curl.run(["-s", "--max-time", "300", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{size_download}", "\(origin.baseURL)/bytes/\(size)"])
        }
        proxy.stop()
        try await origin.stop()
        #expect(result.stdoutText == String(size))
        // The capture limit (10 MB) plus buffers; a proxy that held the body would grow by its size.
        #expect(growth < 100 << 20, "resident memory grew by \(growth >> 20) MiB during a \(size >> 20) MiB download")
        let flow = try #require(try await KagamiStoreOpen.open(session).allFlows().first)
        #expect(flow.response?.body.size == size)
        #expect(flow.response?.body.isTruncated == true)
    }

    /// A large WebSocket message passes through whole (the server checks every byte) while the
    /// proxy keeps the capture limit of it, in constant memory; the message is stored with its
    /// real size, marked truncated. Both peers are raw sockets (Tests/WebSocket/ws_gigabyte.py).
    @Test func aLargeWebSocketMessageStreamsInConstantMemory() async throws {
        let script = WebSocketPeer.root.appendingPathComponent("Tests/WebSocket/ws_gigabyte.py").path
        let server = try PeerServer(script: script, arguments: ["--size", String(Self.largeBytes)])
        defer { server.stop() }
        let session = temporaryPath("gigabyte-message.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--reverse", "http://127.0.0.1:\(server.port)", "--session", session])
        let (growth, result) = try await ResidentMemory.growth(of: proxy.process.pid) {
            try await CommandLineClient(try WebSocketPeer.python()).run([script, "client", String(proxy.port), "--size", String(Self.largeBytes)])
        }
        proxy.stop()
        #expect(result.stdoutText == "1000\n", "the server's close: \(result.stdoutText) \(result.stderr)")
        #expect(growth < 100 << 20, "resident memory grew by \(growth >> 20) MiB during a \(Self.largeBytes >> 20) MiB message")
        let store = try KagamiStoreOpen.open(session)
        let flow = try #require(try await store.allFlows().first)
        let messages = try await store.messages(of: flow.id)
        let message = try #require(messages.first)
        #expect(message.opcode == .binary && message.size == Self.largeBytes && message.isTruncated)
        #expect(message.data.count == 10 << 20)
        #expect(messages.last?.opcode == .close)
    }

    /// A WebSocket client that never reads while its server sends a gigabyte: the relay stops
    /// reading the server once the client's socket is full, so the proxy's memory stays flat;
    /// when the client leaves, the flow ends with an error.
    @Test func aWebSocketClientThatNeverReadsHoldsTheServerBack() async throws {
        let script = WebSocketPeer.root.appendingPathComponent("Tests/WebSocket/ws_gigabyte.py").path
        let server = try PeerServer(script: script, arguments: ["--to-client"])
        defer { server.stop() }
        let session = temporaryPath("never-reads.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--reverse", "http://127.0.0.1:\(server.port)", "--session", session])
        // Three seconds of not reading: at the rate the proxy relays, enough for the whole
        // gigabyte to pile up in it if nothing held the server back.
        let (growth, result) = try await ResidentMemory.growth(of: proxy.process.pid) {
            try await CommandLineClient(try WebSocketPeer.python()).run([script, "client", String(proxy.port), "--never-read", "3"])
        }
        #expect(result.stdoutText == "left\n", "\(result.stderr)")
        #expect(growth < 100 << 20, "resident memory grew by \(growth >> 20) MiB while the client read nothing")
        let store = try KagamiStoreOpen.open(session)
        var flow: Flow?
        for _ in 0..<500 {
            flow = try await store.allFlows(includeBodies: false).first
            if flow?.timings.end != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        proxy.stop()
        let ended = try #require(flow)
        #expect(ended.response?.status == 101)
        #expect(ended.timings.end != nil && ended.error != nil, "\(String(describing: ended.error))")
    }

    /// A sink that falls behind holds each connection's next request until it catches up.
    @Test func aSinkThatIsBehindSlowsTheNextRequestInsteadOfQueueing() async throws {
        let origin = try await OriginServer.start()
        let sink = CollectingSink()
        sink.behind.withLock { $0 = true }
        let proxy = try ProxyServer(options: ProxyOptions(host: "127.0.0.1", port: 0, upstreamAllow: ["loopback"]), sink: sink)
        let port = try await proxy.start().port ?? 0
        let opened = Task {
            try await Task.sleep(for: .milliseconds(600))
            sink.behind.withLock { $0 = false }
        }
        let started = ContinuousClock.now
        // Two requests on one keep-alive connection: the second waits for the sink.
        let result = try await CommandLineClient.curl.run(["-s", "-x", "http://127.0.0.1:\(port)", "-w", "%{http_code}\n",
                                                           "-o", "/dev/null", "-o", "/dev/null", "\(origin.baseURL)/echo?n=1", "\(origin.baseURL)/echo?n=2"])
        let elapsed = ContinuousClock.now - started
        try await opened.value
        #expect(result.stdoutText == "200\n200\n")
        #expect(elapsed >= .milliseconds(550), "the second request went on while the sink was behind (\(elapsed))")
        #expect(sink.flows.count == 2)
        try await proxy.stop()
        try await origin.stop()
    }

    /// Exchanges that completed are in the session even when the proxy is killed -9, in a
    /// session file or in a shared PostgreSQL store.
    @Test(arguments: RecordingDestination.allCases)
    func exchangesSurviveSIGKILL(into destination: RecordingDestination) async throws {
        let origin = try await OriginServer.start()
        let session = try destination.newSession()
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying"] + session.arguments)
        let count = 40
        let urls = (1...count).map { "\(origin.baseURL)/echo?n=\($0)" }
        let outputs = Array(repeating: ["-o", "/dev/null"], count: count).flatMap { $0 }
        let result = try await CommandLineClient.curl.run(["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-w", "%{http_code}\n"] + outputs + urls)
        #expect(result.stdoutText.split(separator: "\n").count == count)
        proxy.kill9()
        try await origin.stop()

        let reopened = try await session.open()
        let flows = try await reopened.allFlows()
        await (reopened as? PostgresFlowStore)?.close()
        #expect(flows.count == count)
        #expect(Set(flows.map(\.request.url)) == Set(urls))
        #expect(flows.allSatisfy { $0.response?.status == 200 })
    }

    /// Kagami's own answers (an error page, a Block List 403, a Map Local file) and a large
    /// Content-Length body are kept before the client sees them complete: each kind, sent last
    /// before kill -9, is in the session.
    @Test(arguments: ["refused", "blocked", "local", "large", "rewritten"])
    func everyKindOfAnswerSurvivesSIGKILL(kind: String) async throws {
        let origin = try await OriginServer.start()
        let directory = (temporaryPath("rules.yaml") as NSString).deletingLastPathComponent
        try Data("from a file".utf8).write(to: URL(fileURLWithPath: directory + "/local.txt"))
        try """
            blockList:
              - {name: ads, locations: [{path: /ads/*}]}
            mapLocal:
              - {name: file, from: {path: /local}, local: \(directory)/local.txt}
            rewrite:
              - name: tag
                locations: [{path: /echo}]
                rules:
                  - {type: Body, where: response, match: {value: GET}, replace: {value: TEG}}
            """.write(toFile: directory + "/rules.yaml", atomically: true, encoding: .utf8)
        let session = directory + "/killed.sqlite"
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session, "--rules", directory + "/rules.yaml"])
        let (url, status) = switch kind {
        case "refused": ("http://127.0.0.1:1/nothing-listens", 502)
        case "blocked": ("\(origin.baseURL)/ads/banner", 403)
        case "local": ("\(origin.baseURL)/local", 200)
        case "large": ("\(origin.baseURL)/bytes/5000000", 200)
        default: ("\(origin.baseURL)/echo", 200)
        }
        let count = 6
        let outputs = Array(repeating: ["-o", "/dev/null"], count: count).flatMap { $0 }
        let result = try await CommandLineClient.curl.run(
            ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-w", "%{http_code}\n"] + outputs + Array(repeating: url, count: count))
        proxy.kill9()
        try await origin.stop()
        #expect(result.stdoutText == String(repeating: "\(status)\n", count: count))
        let flows = try await KagamiStoreOpen.open(session).allFlows()
        #expect(flows.count == count, "\(kind): \(flows.count) of \(count) kept")
        #expect(flows.allSatisfy { $0.response?.status == status })
    }

    /// A tunnel the server ended is recorded before the client sees it end: six CONNECT tunnels,
    /// each closed by the server, then kill -9, and all six are in the session.
    @Test func tunnelsTheServerClosedSurviveSIGKILL() async throws {
        let origin = try await OriginServer.start()
        let session = temporaryPath("tunnels.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        let count = 6
        var codes = ""
        for _ in 0..<count {
            // -p: a CONNECT tunnel even for http; the origin ends the answer by closing.
            codes += try await CommandLineClient.curl.run(
                ["-s", "-p", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}\n", "\(origin.baseURL)/close-delimited/2000"]).stdoutText
        }
        proxy.kill9()
        try await origin.stop()
        #expect(codes == String(repeating: "200\n", count: count))
        let flows = try await KagamiStoreOpen.open(session).allFlows()
        #expect(flows.count == count, "\(flows.count) of \(count) tunnels kept")
        #expect(flows.allSatisfy { $0.mode == .tunnel && ($0.response?.body.size ?? 0) >= 2000 })
    }
}
