import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiStore
import KagamiTesting
import Testing

/// The Python `websockets` echo server and client of Tests/WebSocket/ws_peer.py, from the
/// virtual environment scripts/test.sh makes (`.venv-tests`, with `websockets` installed).
enum WebSocketPeer {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var script: String { root.appendingPathComponent("Tests/WebSocket/ws_peer.py").path }

    struct NotInstalled: Error, CustomStringConvertible {
        var description: String { "Python websockets is not installed in \(root.path)/.venv-tests: run scripts/test.sh once, which installs it" }
    }

    static func python() throws -> String {
        let path = root.appendingPathComponent(".venv-tests/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw NotInstalled() }
        return path
    }

    /// Runs the client (or the absolute-form check) and returns its JSON report.
    static func run(_ arguments: [String]) async throws -> (status: Int32, report: [String: Any], stderr: String) {
        let result = try await CommandLineClient(try python()).run([script] + arguments)
        let line = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return (result.status, report, result.stderr)
    }
}

/// A Python peer (Tests/WebSocket/ws_peer.py, Tests/GRPC/grpc_peer.py) serving on 127.0.0.1,
/// port 0, from `.venv-tests`: its first line says "port N"; it runs until its standard input
/// closes (`stop()`).
final class PeerServer: Sendable {
    let process: ChildProcess
    let port: Int

    init(script: String, arguments: [String] = []) throws {
        process = try ChildProcess(try WebSocketPeer.python(), [script, "server"] + arguments, stdin: .pipe, stdout: .pipe)
        port = try process.announcedPort()
    }

    /// The `websockets` echo server.
    static func webSocketEcho(tls: (certificate: String, key: String)? = nil) throws -> PeerServer {
        try PeerServer(script: WebSocketPeer.script, arguments: tls.map { ["--cert", $0.certificate, "--key", $0.key] } ?? [])
    }

    func stop() {
        try? process.input?.close()
        process.waitUntilExit()
    }
}

@Suite("WebSocket through the proxy", .serialized)
struct WebSocketThroughProxyTests {
    /// The first `count` bytes of the large message the client sends, as ws_peer.py makes it.
    static func bigMessage(prefix count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }

    static let big = 20 * 1024 * 1024

    /// The session holds the handshake as one flow (101, closed cleanly) and every message of
    /// the client's script in order, each direction on its own.
    static func expectCaptured(_ store: SQLiteFlowStore, mode: Flow.Mode, scheme: String, captureLimit: Int) async throws {
        var flows: [Flow] = []
        for _ in 0..<500 {
            try await store.flush()
            flows = try await store.allFlows(includeBodies: false).filter(\.isWebSocket)
            if let flow = flows.first, flow.timings.end != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(flows.count == 1)
        let flow = flows[0]
        #expect(flow.mode == mode)
        #expect(flow.request.scheme == scheme)
        #expect(flow.response?.status == 101)
        #expect(flow.error == nil)
        #expect(flow.timings.end != nil)
        let messages = try await store.messages(of: flow.id)
        let sent = messages.filter { $0.direction == .send }
        let received = messages.filter { $0.direction == .receive }
        #expect(sent.map(\.opcode) == [.text, .binary, .text, .ping, .binary, .text, .close])
        #expect(received.map(\.opcode) == [.text, .binary, .text, .pong, .binary, .close])
        guard sent.count == 7, received.count == 6 else { return }
        let text = "Hello, Kagami — ハロー"
        let binary = Data((0..<1024).map { UInt8($0 & 0xFF) })
        for messages in [sent, received] {
            #expect(messages[0].text == text)
            #expect(messages[1].data == binary)
            #expect(messages[2].text == "frag-one frag-two frag-three")
            #expect(messages[3].data == Data("are you there".utf8))
            #expect(messages[4].isTruncated)
            #expect(messages[4].data == bigMessage(prefix: captureLimit))
            #expect(zip(messages, messages.dropFirst()).allSatisfy { $0.time <= $1.time })
        }
        // websockets compresses by default: the big message travels compressed, is shown inflated.
        #expect(sent[4].isCompressed && received[4].isCompressed)
        #expect(sent[4].size < big)
        #expect(sent[5].text == "close:4001:done")
        #expect(received[5].closeCode == 4001 && received[5].closeReason == "done")
        #expect(sent[6].closeCode == 4001)
    }

    static func expectClientPassed(_ run: (status: Int32, report: [String: Any], stderr: String)) {
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        #expect(run.report["ok"] as? Bool == true, "\(run.report["problems"] ?? run.stderr)")
        #expect(run.report["closeCode"] as? Int == 4001)
        #expect(run.report["bigSize"] as? Int == big)
    }

    /// ws:// through the forward proxy: websockets sends CONNECT, and with interception on
    /// Kagami reads the plain HTTP inside the tunnel.
    @Test func forwardProxyViaConnect() async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        let ca = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        let limit = 1 << 20
        try await ProxyHarness.with(configure: {
            $0.interception = InterceptionConfiguration(authority: ca)
            $0.bodyLimit = limit
        }) { proxy in
            let run = try await WebSocketPeer.run(["client", "ws://127.0.0.1:\(server.port)/chat", "--proxy", proxy.proxyURL, "--big", String(Self.big)])
            Self.expectClientPassed(run)
            try await Self.expectCaptured(proxy.store, mode: .forward, scheme: "http", captureLimit: limit)
        }
    }

    @Test func reverseMode() async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        let limit = 10 << 20
        try await ProxyHarness.with(
            mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port, path: "/")) },
            configure: { $0.bodyLimit = limit }
        ) { proxy in
            let run = try await WebSocketPeer.run(["client", "ws://127.0.0.1:\(proxy.proxyPort)/chat", "--big", String(Self.big)])
            Self.expectClientPassed(run)
            try await Self.expectCaptured(proxy.store, mode: .reverse, scheme: "http", captureLimit: limit)
        }
    }

    /// wss:// after an intercepted CONNECT: the client trusts Kagami's CA, Kagami trusts the
    /// server's test CA.
    @Test func secureWebSocketThroughInterceptedConnect() async throws {
        let originCA = try TestCertificates.make()
        let pem = try originCA.serverIdentity(for: "127.0.0.1").writePEM(to: originCA.directory)
        let server = try PeerServer.webSocketEcho(tls: pem)
        defer { server.stop() }
        let ca = try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString)
        let limit = 1 << 20
        try await ProxyHarness.with(configure: {
            $0.interception = InterceptionConfiguration(authority: ca, additionalTrustRootFiles: [originCA.caPath])
            $0.bodyLimit = limit
        }) { proxy in
            let run = try await WebSocketPeer.run([
                "client", "wss://127.0.0.1:\(server.port)/chat", "--proxy", proxy.proxyURL, "--ca", ca.certificatePath, "--big", String(Self.big),
            ])
            Self.expectClientPassed(run)
            try await Self.expectCaptured(proxy.store, mode: .forward, scheme: "https", captureLimit: limit)
        }
    }

    /// The handshake as an absolute-form request: the 101 arrives exactly as the server sent
    /// it (no body framing), frames follow both ways, and the exchange is captured.
    @Test func absoluteFormHandshake() async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        try await ProxyHarness.with { proxy in
            let run = try await WebSocketPeer.run(["absolute", String(proxy.proxyPort), String(server.port)])
            #expect(run.status == 0, "\(run.report) \(run.stderr)")
            #expect(run.report["ok"] as? Bool == true, "\(run.report["problems"] ?? run.stderr)")
            #expect(run.report["closeCode"] as? Int == 1000)
            var flows: [Flow] = []
            for _ in 0..<500 {
                flows = try await proxy.flows(count: 1).filter(\.isWebSocket)
                if flows.first?.timings.end != nil { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            try #require(flows.count == 1)
            #expect(flows[0].request.target == "/absolute")
            #expect(flows[0].error == nil)
            let messages = try await proxy.store.messages(of: flows[0].id)
            #expect(messages.map(\.opcode) == [.text, .text, .close, .close])
            #expect(messages.map(\.direction) == [.send, .receive, .send, .receive])
            #expect(messages.first?.text == "absolute hello")
        }
    }

    /// An OpenAPI description of `GET /chat` answering `response` (a YAML line), written in
    /// `folder`; its path.
    static func chatDescription(in folder: URL, response: String) throws -> String {
        let path = folder.appendingPathComponent("chat.yaml").path
        try """
            openapi: 3.0.3
            info: {title: Chat, version: "1"}
            paths:
              /chat:
                get:
                  responses:
                    \(response)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `kagami proxy --contract` records through the same chain as without it: the check is a
    /// stage beside the store, and every message the socket relays is kept.
    @Test(arguments: [false, true]) func theContractCheckKeepsEveryMessage(checked: Bool) async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        let folder = try TemporaryFolder.make("ws-contract")
        defer { try? FileManager.default.removeItem(at: folder) }
        let description = try Self.chatDescription(in: folder, response: #""101": {description: Switching Protocols}"#)
        let session = folder.appendingPathComponent("session.sqlite").path
        let contract = checked ? ["--contract", "\(description)=http://127.0.0.1:\(server.port)"] : []
        let kagami = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--reverse", "http://127.0.0.1:\(server.port)", "--session", session] + contract)
        let run = try await WebSocketPeer.run([
            "talk", "ws://127.0.0.1:\(kagami.port)/chat", "--send", "one", "--send", "two", "--send", "three",
            "--expect", "one", "--expect", "two", "--expect", "three",
        ])
        kagami.stop()
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        let store = try SQLiteFlowStore(path: session)
        let flows = try await store.allFlows(includeBodies: false)
        let socket = try #require(flows.first { $0.isWebSocket }, "\(flows.map(\.request.target))")
        let messages = try await store.messages(of: socket.id, offset: 0, limit: nil)
        #expect(messages.filter { $0.opcode == .text }.map(\.text) == ["one", "two", "three", "one", "two", "three"])
    }

    /// A server that refuses the upgrade answers as usual; the client connection then closes,
    /// as its request parser stopped at the upgrade request.
    @Test func refusedUpgradeIsAnOrdinaryExchange() async throws {
        try await ProxyHarness.with { proxy in
            let result = try await proxy.curl([
                "-i", "-H", "Upgrade: websocket", "-H", "Connection: Upgrade", "-H", "Sec-WebSocket-Version: 13",
                "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "\(proxy.origin.baseURL)/echo",
            ])
            #expect(result.status == 0)
            #expect(result.stdoutText.hasPrefix("HTTP/1.1 200"))
            let flows = try await proxy.flows(count: 1)
            #expect(flows.first?.response?.status == 200)
            #expect(flows.first?.isWebSocket == false)
        }
    }
}
