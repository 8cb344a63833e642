import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiRules
import KagamiStore
import KagamiTesting
import Testing

/// Rewrite rules, breakpoints and injected messages on live WebSockets, with the Python
/// `websockets` echo server and client of Tests/WebSocket/ws_peer.py on each side of Kagami
/// (permessage-deflate on, as `websockets` offers it, unless a test turns it off), in reverse
/// mode, or through the forward proxy (CONNECT, with interception on, so Kagami reads the
/// plain HTTP inside the tunnel).
@Suite("WebSocket message tools", .serialized)
struct WebSocketMessageToolsTests {
    /// Runs `body` with Kagami in front of the echo server.
    static func with(
        forward: Bool = false, rules: ActiveRules = ActiveRules(), breakpoints: Breakpoints = Breakpoints(),
        _ body: (ProxyHarness, PeerServer) async throws -> Void
    ) async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        let ca = forward ? try CertificateAuthority.create(directory: NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString) : nil
        try await ProxyHarness.with(
            mode: forward ? nil : { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port, path: "/")) },
            rules: rules, breakpoints: breakpoints,
            configure: { configuration in
                if let ca { configuration.interception = InterceptionConfiguration(authority: ca) }
            }
        ) { proxy in try await body(proxy, server) }
    }

    static func talk(through proxy: ProxyHarness, to server: PeerServer, send: [String], expect: [String], compression: Bool = true) async throws -> [String: Any] {
        let forward = proxy.proxy.mode == .forward
        var arguments = ["talk", "ws://127.0.0.1:\(forward ? server.port : proxy.proxyPort)/chat"]
        if forward { arguments += ["--proxy", proxy.proxyURL] }
        for text in send { arguments += ["--send", text] }
        for text in expect { arguments += ["--expect", text] }
        if !compression { arguments.append("--no-compression") }
        let run = try await WebSocketPeer.run(arguments)
        #expect(run.status == 0, "client: \(run.report["problems"] ?? run.stderr)")
        return run.report
    }

    /// The messages of the one WebSocket flow, once its connection has been recorded as ended.
    static func messages(_ proxy: ProxyHarness) async throws -> [WebSocketMessage] {
        let ended = try await eventually(attempts: 1500, every: .milliseconds(20)) {
            try await proxy.store.flush()
            return try await proxy.store.allFlows().first { $0.isWebSocket && $0.timings.end != nil }
        }
        if let ended { return try await proxy.store.messages(of: ended.id, offset: 0, limit: nil) }
        Issue.record("no WebSocket flow ended")
        return []
    }

    /// Waits until a message is held; nil after about thirty seconds (a bound, not a timing).
    static func held(_ breakpoints: Breakpoints) async throws -> HeldExchange? {
        try await eventually(attempts: 3000) { breakpoints.held.first }
    }

    @Test(arguments: [true, false])
    func rewriteRulesChangeTextMessagesBothWays(compression: Bool) async throws {
        let rules = ActiveRules(try RulePipeline(try RuleSet(parsing: """
            rewrite:
              - name: scrub
                locations: [{path: /chat}]
                rules:
                  - type: Body
                    where: request
                    match: {value: secret}
                    replace: {value: public}
                  - type: Body
                    where: response
                    match: {value: "n(\\\\d+)", regex: true}
                    replace: {value: "number $1"}
            """, file: "rules.yaml")))
        try await Self.with(forward: compression, rules: rules) { proxy, server in
            let report = try await Self.talk(
                through: proxy, to: server,
                send: ["hello", "my secret", "b64:AAEC/w==", "n42", "secret again"],
                expect: ["hello", "my public", "b64:AAEC/w==", "number 42", "public again"], compression: compression)
            #expect(report["compressed"] as? Bool == compression)
            let messages = try await Self.messages(proxy)
            let data = messages.filter { !$0.opcode.isControl }
            #expect(data.filter { $0.direction == .send }.compactMap(\.text) == ["hello", "my public", "n42", "public again"])
            #expect(data.filter { $0.direction == .receive }.compactMap(\.text) == ["hello", "my public", "number 42", "public again"])
            let rewritten = try #require(data.first { $0.direction == .send && $0.text == "my public" })
            #expect(rewritten.note == "Rewrite 'scrub': rewrote message (9 → 9 bytes)")
            #expect(data.first { $0.direction == .send && $0.text == "hello" }?.note == nil)
        }
    }

    @Test func aMessageHeldAtABreakpointIsEditedAndTheRestWaitBehindIt() async throws {
        let breakpoints = Breakpoints(BreakpointSettings(breakpoints: [
            Breakpoint(location: Location(path: "/chat"), request: false, messages: .send, messageText: "hold"),
        ]))
        try await Self.with(breakpoints: breakpoints) { proxy, server in
            async let report = Self.talk(
                through: proxy, to: server, send: ["first", "hold me", "third"], expect: ["first", "edited", "third"])
            let held = try #require(try await Self.held(breakpoints))
            #expect(held.phase == .message)
            #expect(held.message?.text == "hold me")
            #expect(held.message?.direction == .send)
            #expect(held.request.path == "/chat")
            var edited = try #require(held.message)
            edited.data = Data("edited".utf8)
            try breakpoints.resolve(held.id, with: .executeMessage(edited))
            _ = try await report
            let sent = try await Self.messages(proxy).filter { $0.direction == .send && !$0.opcode.isControl }
            #expect(sent.compactMap(\.text) == ["first", "edited", "third"])
            #expect(sent[1].note?.hasSuffix("at a breakpoint, then edited") == true)
        }
    }

    @Test func aHeldMessageDroppedNeverReachesTheServer() async throws {
        let breakpoints = Breakpoints(BreakpointSettings(breakpoints: [
            Breakpoint(location: Location(path: "/chat"), request: false, messages: .receive, messageText: "^drop", messageRegex: true),
        ]))
        try await Self.with(forward: true, breakpoints: breakpoints) { proxy, server in
            async let report = Self.talk(through: proxy, to: server, send: ["keep 1", "drop this", "keep 2"], expect: ["keep 1", "keep 2"])
            let held = try #require(try await Self.held(breakpoints))
            #expect(held.message?.text == "drop this")
            #expect(held.message?.direction == .receive)
            try breakpoints.resolve(held.id, with: .abort)
            _ = try await report
            let received = try await Self.messages(proxy).filter { $0.direction == .receive && !$0.opcode.isControl }
            #expect(received.compactMap(\.text) == ["keep 1", "drop this", "keep 2"])
            #expect(received[1].note == "dropped at a breakpoint")
        }
    }

    @Test func messagesInjectedReachTheClientAndTheServer() async throws {
        try await Self.with(forward: true) { proxy, server in
            async let report = Self.talk(through: proxy, to: server, send: ["hi"], expect: ["hi", "from kagami", "to the server"])
            let flowID = try await eventually(attempts: 3000) { proxy.proxy.webSockets.open.first }
            let id = try #require(flowID)
            // The client expects its echo first: inject once the echo has passed the proxy.
            let echoed = try await eventually(attempts: 3000) {
                try await proxy.store.flush()
                return try await proxy.store.messages(of: id, offset: 0, limit: nil).contains { $0.direction == .receive && $0.text == "hi" }
            }
            #expect(echoed)
            let toClient = WebSocketMessage(direction: .receive, time: Date(), opcode: .text, data: Data("from kagami".utf8), size: 11)
            try await proxy.proxy.webSockets.inject(toClient, into: id)
            let toServer = WebSocketMessage(direction: .send, time: Date(), opcode: .text, data: Data("to the server".utf8), size: 13)
            try await proxy.proxy.webSockets.inject(toServer, into: id)
            _ = try await report
            let messages = try await Self.messages(proxy).filter { !$0.opcode.isControl }
            #expect(messages.contains { $0.direction == .receive && $0.text == "from kagami" && $0.note == "injected" })
            #expect(messages.contains { $0.direction == .send && $0.text == "to the server" && $0.note == "injected" })
            await #expect(throws: WebSocketInjectionError.self) { try await proxy.proxy.webSockets.inject(toClient, into: UUID()) }
        }
    }
}
