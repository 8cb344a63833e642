import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
@testable import KagamiProxy
import KagamiRepeat
import KagamiTesting
import Testing

/// HTTP/2 with clients (RFC 9113): h2 chosen by ALPN on intercepted HTTPS, and h2c with prior
/// knowledge; each stream one exchange, sent on to an HTTP/1.1 server. curl is the client.
@Suite("HTTP/2 with clients")
struct HTTP2Tests {
    @Test func curlGetsH2ByALPNAndTheServerGetsHTTP11() async throws {
        try await HTTPSHarness.with { h in
            let (path, data) = try randomFile(size: 200_000, seed: 21)
            let result = try await h.curl([
                "--http2", "-w", "\n%{http_version}", "--data-binary", "@\(path)", "-H", "X-Secret: 42",
                "\(h.origin.localhostURL)/echo?q=1",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutText.split(separator: "\n")
            #expect(lines.last == "2", "\(result.stdoutText.suffix(200))")
            let echo = try Echo(Data(result.stdoutText.dropLast(2).utf8))
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))
            #expect(echo.method == "POST")

            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.request.version == "HTTP/2.0")
            #expect(flow.request.url == "\(h.origin.localhostURL)/echo?q=1")
            #expect(flow.request.body.data == data)
            #expect(flow.tls?.alpn == "h2")
            #expect(flow.response?.status == 200)
            // The server got HTTP/1.1 with a Host from :authority and no HTTP/2-only fields.
            let received = try #require(h.origin.received.first)
            #expect(received.version == "HTTP/1.1")
            #expect(received.headers.first { $0.name.lowercased() == "host" }?.value == "localhost:\(h.origin.port)")
            #expect(!received.headers.contains { $0.name.hasPrefix(":") })
        }
    }

    /// Several streams at once on one connection: each is its own exchange.
    @Test func parallelStreamsAreSeparateExchanges() async throws {
        try await HTTPSHarness.with { h in
            let urls = (1...8).map { "\(h.origin.localhostURL)/echo?stream=\($0)" }
            let result = try await h.curl(["--http2", "--parallel", "-o", "/dev/null"] + urls.flatMap { [$0, "-o", "/dev/null"] })
            #expect(result.status == 0, "\(result.stderr)")
            let flows = try await h.proxy.flows(count: 8)
            #expect(Set(flows.map(\.request.target)) == Set((1...8).map { "/echo?stream=\($0)" }))
            #expect(flows.allSatisfy { $0.request.version == "HTTP/2.0" && $0.response?.status == 200 })
            // curl multiplexes them on one connection: each on its own client-initiated stream
            // (odd ids), recorded with it.
            let streams = flows.compactMap(\.streamID)
            #expect(Set(streams).count == 8 && streams.allSatisfy { $0 % 2 == 1 })
        }
    }

    /// h2c with prior knowledge in reverse mode: the client opens with the preface.
    @Test func h2cWithPriorKnowledgeInReverseMode() async throws {
        try await ProxyHarness.with(mode: { origin in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: origin.port)) }) { h in
            let result = try await CommandLineClient.curl.run([
                "-s", "--max-time", "30", "--http2-prior-knowledge", "-w", "\n%{http_version}", "\(h.proxyURL)/echo?h2c=1",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.hasSuffix("\n2"), "\(result.stdoutText.suffix(200))")
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.version == "HTTP/2.0")
            #expect(flow.request.target == "/echo?h2c=1")
            #expect(flow.mode == .reverse)
            #expect(h.origin.received.first?.version == "HTTP/1.1")
        }
    }

    /// h2c with prior knowledge to the forward proxy, the server named as HTTP/2 names it: in
    /// :authority, with the path in :path (the h2 library as the client). The server gets
    /// HTTP/1.1 with Host first, as clients write it.
    @Test func h2cToTheForwardProxyNamesItsServerInAuthority() async throws {
        try await ProxyHarness.with { h in
            let result = try await CommandLineClient(try WebSocketPeer.python()).run([
                HTTP2EndToEndTests.script, "h2c-proxy", "--proxy-port", String(h.proxyPort), "--url", "\(h.origin.baseURL)/echo?h2c=forward",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let answer = (try? JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8))) as? [String: Any]
            #expect(answer?["status"] as? Int == 200, "\(result.stdoutText) \(result.stderr)")
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.version == "HTTP/2.0")
            #expect(flow.request.url == "\(h.origin.baseURL)/echo?h2c=forward")
            #expect(flow.mode == .forward)
            let received = try #require(h.origin.received.first)
            #expect(received.version == "HTTP/1.1")
            #expect(received.headers.first?.name.lowercased() == "host", "\(received.headers)")
            #expect(received.headers.first?.value == "127.0.0.1:\(h.origin.port)")
        }
    }

    /// An HTTP/1.1 client on the same listener is unaffected by the preface check, including
    /// one whose first bytes could still be the preface ("P", then "UT …").
    @Test func http11ClientsStillWork() async throws {
        try await ProxyHarness.with { h in
            let result = try await h.curl(["--http1.1", "\(h.origin.baseURL)/echo?plain=1"])
            #expect(result.status == 0, "\(result.stderr)")
            let script = """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
                request = ("PUT " + sys.argv[2] + " HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nhi").encode()
                s.sendall(request[:1]); time.sleep(0.2); s.sendall(request[1:])
                reply = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    reply += chunk
                sys.stdout.write(reply.decode("latin-1"))
                """
            let slow = try await CommandLineClient("/usr/bin/python3").run(["-c", script, String(h.proxyPort), "\(h.origin.baseURL)/echo?slow=1"])
            #expect(slow.stdoutText.hasPrefix("HTTP/1.1 200"), "\(slow.stdoutText.prefix(300)) \(slow.stderr)")
            let flows = try await h.flows(count: 2)
            #expect(flows.contains { $0.request.method == "PUT" && $0.request.target == "/echo?slow=1" })
        }
    }
}

/// `Upgrade: h2c` (curl --http2 on an http:// URL) is dropped: the exchange stays HTTP/1.1
/// and completes, whatever the server could do.
@Suite("h2c upgrade offers")
struct H2CUpgradeTests {
    @Test func theOfferIsDroppedAndTheExchangeCompletes() async throws {
        try await ProxyHarness.with { h in
            let result = try await h.curl(["--http2", "-w", "\n%{http_version}", "\(h.origin.baseURL)/echo?upgrade=h2c"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.hasSuffix("\n1.1"), "\(result.stdoutText.suffix(100))")
            let received = try #require(h.origin.received.first)
            let names = Set(received.headers.map { $0.name.lowercased() })
            #expect(!names.contains("upgrade") && !names.contains("http2-settings"), "\(received.headers)")
            #expect(try await h.flows(count: 1).first?.response?.status == 200)
        }
    }
}

/// httpx (http2=True) through the forward proxy to hypercorn over TLS: HTTP/2 on both legs,
/// chosen by ALPN on each; and to an origin that only speaks HTTP/1.1.
@Suite("HTTP/2 end to end", .serialized)
struct HTTP2EndToEndTests {
    static var script: String { WebSocketPeer.root.appendingPathComponent("Tests/HTTP2/h2_peer.py").path }

    static func client(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await CommandLineClient(try WebSocketPeer.python()).run([script, "client"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    /// The h2 peer as an HTTPS origin with a CA of its own, behind a proxy intercepting with
    /// another (which trusts the origin's).
    static func withInterceptedH2Origin(_ body: (ProxyHarness, PeerServer, CertificateAuthority) async throws -> Void) async throws {
        let originCA = try TestCertificates.make()
        let pem = try originCA.serverIdentity(for: "127.0.0.1").writePEM(to: originCA.directory)
        let server = try PeerServer(script: Self.script, arguments: ["--cert", pem.certificate, "--key", pem.key])
        defer { server.stop() }
        let ca = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        try await ProxyHarness.with(configure: {
            $0.interception = InterceptionConfiguration(authority: ca, additionalTrustRootFiles: [originCA.caPath])
        }) { proxy in try await body(proxy, server, ca) }
    }

    @Test func h2OnBothLegsChosenByALPN() async throws {
        try await Self.withInterceptedH2Origin { proxy, server, ca in
            let report = try await Self.client([
                "--url", "https://127.0.0.1:\(server.port)/items?x=1", "--proxy", proxy.proxyURL, "--cacert", ca.certificatePath, "--data", "70000",
            ])
            #expect(report["version"] as? String == "HTTP/2")
            let body = try #require((report["body"] as? String).flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            // The origin was spoken to in HTTP/2 too, and got the body whole.
            #expect(body["version"] as? String == "2")
            #expect(body["path"] as? String == "/items?x=1")
            #expect(body["bodySHA256"] as? String == OriginServer.sha256Hex(Data(repeating: UInt8(ascii: "x"), count: 70_000)))
            let cookies = (body["headers"] as? [[String]] ?? []).filter { $0.first == "cookie" }.map { $0[1] }
            #expect(cookies.joined(separator: "; ") == "a=1; b=2")
            let flow = try #require(try await proxy.flows(count: 1).first { $0.request.method == "POST" })
            #expect(flow.request.version == "HTTP/2.0")
            #expect(flow.response?.version == "HTTP/2.0")
            #expect(flow.tls?.alpn == "h2")
            #expect(flow.response?.headers.values(for: "set-cookie") == ["a=1", "b=2"])
        }
    }

    /// Repeat of an exchange recorded in HTTP/2 goes in HTTP/2 on both legs again.
    @Test func aRepeatOfAnHTTP2ExchangeIsHTTP2() async throws {
        try await Self.withInterceptedH2Origin { proxy, server, _ in
            let recorded = FlowRequest(
                method: "POST", scheme: "https", host: "127.0.0.1", port: server.port, target: "/items?again=1", version: "HTTP/2.0",
                headers: HeaderFields([("content-type", "text/plain"), ("content-length", "5")]), body: FlowBody(data: Data("hello".utf8)))
            let id = UUID()
            let summary = try await RequestRepeater(route: .forwardProxy(host: "127.0.0.1", port: proxy.proxyPort)).run(recorded, of: id, plan: .init(count: 2))
            #expect(summary.failures == 0, "\(summary.text)")
            #expect(summary.countsByStatus.map(\.status) == [200])
            let repeats = try await proxy.flows(count: 2).filter { $0.repeatOf == id }
            #expect(repeats.count == 2)
            for flow in repeats {
                #expect(flow.request.version == "HTTP/2.0")
                #expect(flow.response?.version == "HTTP/2.0")
                let body = try #require(try JSONSerialization.jsonObject(with: flow.response?.body.data ?? Data()) as? [String: Any])
                #expect(body["version"] as? String == "2")
                #expect(body["path"] as? String == "/items?again=1")
                #expect(body["bodySHA256"] as? String == OriginServer.sha256Hex(Data("hello".utf8)))
            }
        }
    }

    @Test func anHTTP2ClientToAnHTTP11OnlyOrigin() async throws {
        try await HTTPSHarness.with { h in
            let report = try await Self.client([
                "--url", "\(h.origin.localhostURL)/echo?via=h2", "--proxy", h.proxy.proxyURL, "--cacert", h.kagamiCA.certificatePath,
            ])
            #expect(report["version"] as? String == "HTTP/2")
            #expect(report["status"] as? Int == 200)
            let received = try #require(h.origin.received.first)
            #expect(received.version == "HTTP/1.1")
            // HTTP/2 clients may send cookies in crumbs; HTTP/1.1 gets one field (RFC 9113 §8.2.3).
            #expect(received.headers.filter { $0.name.lowercased() == "cookie" }.map(\.value) == ["a=1; b=2"])
        }
    }
}

/// What a broken HTTP/2 client gets: a GOAWAY that says why, and nothing else breaks.
@Suite("HTTP/2 bad input")
struct HTTP2BadInputTests {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let emptySettings: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]

    /// Frames after the preface, and the frame types that came back.
    static func send(_ frames: [UInt8], to port: Int) async throws -> [UInt8] {
        let reply = try await RawConnection.exchangeBytes(port: port, send: Data(preface + emptySettings + frames), timeout: .seconds(10))
        // Walk the server's frames: its SETTINGS, the ACK, then what it thought of ours.
        let bytes = [UInt8](reply)
        var types: [UInt8] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            types.append(bytes[index + 3])
            index += 9 + length
        }
        return types
    }

    @Test(arguments: [
        // HEADERS on stream 1 whose block refers to HPACK index 0, which does not exist.
        ("invalid HPACK", [0, 0, 1, 1, 5, 0, 0, 0, 1, 0x80] as [UInt8]),
        // DATA on stream 0, which is for the connection only.
        ("DATA on stream 0", [0, 0, 1, 0, 0, 0, 0, 0, 0, 0x41]),
        // A frame larger than the 16 KiB the client was allowed to send.
        ("oversized frame", [0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0x41, count: 65_536)),
    ])
    func aConnectionErrorIsAnsweredWithGOAWAY(what: String, frames: [UInt8]) async throws {
        try await ProxyHarness.with(mode: { origin in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: origin.port)) }) { h in
            let types = try await Self.send(frames, to: h.proxyPort)
            #expect(types.contains(7), "\(what): no GOAWAY in \(types)")
            // The proxy goes on serving others.
            let result = try await CommandLineClient.curl.run(["-s", "--max-time", "30", "--http2-prior-knowledge", "\(h.proxyURL)/echo?after=1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try await h.flows(count: 1).contains { $0.request.target == "/echo?after=1" })
        }
    }
}

/// What a broken HTTP/2 server does to Kagami: the exchanges on its connection end with an error
/// that says what went wrong, the client gets an answer, and the next exchange opens a new
/// connection. The server is Tests/HTTP2/h2_rogue_server.py, in clear text before a reverse proxy.
@Suite("HTTP/2 servers that break the rules", .serialized)
struct HTTP2ServerBadInputTests {
    static var script: String { WebSocketPeer.root.appendingPathComponent("Tests/HTTP2/h2_rogue_server.py").path }

    @Test(arguments: ["/bad-hpack", "/settings-flood"])
    func theExchangeFailsAndTheProxyGoesOn(path: String) async throws {
        let server = try PeerServer(script: Self.script)
        defer { server.stop() }
        try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port)) }) { h in
            let curl = { (path: String) in
                try await CommandLineClient.curl.run(["-s", "--max-time", "60", "--http2-prior-knowledge", "-w", "\n%{http_code}", "\(h.proxyURL)\(path)"])
            }
            let broken = try await curl(path)
            #expect(broken.stdoutText.hasSuffix("\n502"), "\(path): \(broken.stdoutText.suffix(300)) \(broken.stderr)")
            let fine = try await curl("/fine")
            #expect(fine.stdoutText == "fine\n200", "\(fine.stdoutText) \(fine.stderr)")
            let flows = try await h.flows(count: 2)
            let failed = try #require(flows.first { $0.request.target == path })
            let error = try #require(failed.error, "\(path) recorded without an error")
            #expect(error.message.contains("HTTP/2"), "\(error.message)")
            #expect(flows.contains { $0.request.target == "/fine" && $0.response?.status == 200 && $0.error == nil })
        }
    }
}
