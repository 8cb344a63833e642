import Foundation
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiStore
import KagamiTesting
import Testing

/// Floods that once starved the proxy or grew the session without bound: HTTP/2 rapid reset
/// spread over reconnecting connections, and a WebSocket ping flood. Each run is bounded in
/// count and time.
@Suite("Floods", .serialized)
struct FloodTests {
    static var resetFlood: String { WebSocketPeer.root.appendingPathComponent("Tests/HTTP2/h2_reset_flood.py").path }

    /// From 127.0.0.2, connections that open streams and reset them at once, reconnecting as
    /// each is cut off; meanwhile clients from 127.0.0.1 are served, and the session keeps one
    /// record per flooding connection, not one per stream (87,789 rows in 20 s before).
    @Test func rapidResetOverReconnectingConnectionsNeitherStarvesClientsNorFloodsTheSession() async throws {
        // The origin in a process of its own (hypercorn, h2c and HTTP/1.1), as a real one is: one
        // inside the test process would share the event loops the flood keeps busy.
        let origin = try PeerServer(script: HTTP2EndToEndTests.script)
        defer { origin.stop() }
        try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: origin.port)) }) { h in
            let flood = Task {
                try await CommandLineClient(try WebSocketPeer.python()).run([
                    Self.resetFlood, "--port", String(h.proxyPort), "--source", "127.0.0.2", "--seconds", "6", "--connections", "600", "--streams", "250",
                ])
            }
            // Once the flood is under way (its first resets recorded).
            try await eventually(attempts: 250, every: .milliseconds(20)) { try await h.store.count() > 0 }
            // Seven clients while the flood runs: each must be answered.
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<7 {
                    group.addTask {
                        try await CommandLineClient.curl.run([
                            "-s", "--http2-prior-knowledge", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}",
                            "http://127.0.0.1:\(h.proxyPort)/echo?normal=\(index)",
                        ]).stdoutText
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers == Array(repeating: "200", count: 7), "\(answers)")
            let result = try await flood.value
            let report = try JSONSerialization.jsonObject(with: Data((result.stdoutText.split(separator: "\n").last ?? "").utf8)) as? [String: Any]
            let resets = report?["streamsReset"] as? Int ?? 0
            let connections = report?["connections"] as? Int ?? 0
            #expect(resets > 2_000, "the flood hardly ran: \(result.stdoutText) \(result.stderr)")
            try await h.store.flush()
            let stored = try await h.store.count()
            // A connection's first 20 resets are recorded one by one until the address goes over its
            // budget (1,000 resets, a few connections' worth); from then on one record per
            // connection; and the seven clients'.
            #expect(stored <= connections + 300, "\(stored) exchanges stored for \(resets) reset streams on \(connections) connections")
            #expect(stored * 10 < resets, "\(stored) exchanges stored for \(resets) reset streams")
            let flows = try await h.store.allFlows(includeBodies: false)
            let summaries = flows.filter { $0.error?.message.contains("more streams of this connection before they were answered") == true }
            #expect(!summaries.isEmpty, "no connection's record counts its reset streams")
            #expect(flows.filter { $0.request.target.contains("normal=") }.count == 7)
        }
    }

    /// 3,000 pings through the proxy: the session keeps the first few of each direction and
    /// one message counting the rest, not one row per ping (a flood grew it ~12 MB/s before).
    @Test func aPingFloodIsCountedNotStoredRowByRow() async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port)) }) { h in
            let run = try await WebSocketPeer.run(["pings", "ws://127.0.0.1:\(h.proxyPort)/pings", "--count", "3000"])
            #expect(run.status == 0, "\(run.report) \(run.stderr)")
            var flow: Flow?
            for _ in 0..<500 {
                try await h.store.flush()
                flow = try await h.store.allFlows(includeBodies: false).first(where: \.isWebSocket)
                if flow?.timings.end != nil { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let id = try #require(flow?.id)
            let messages = try await h.store.messages(of: id)
            let pings = messages.filter { $0.direction == .send && $0.opcode == .ping }
            let pongs = messages.filter { $0.direction == .receive && $0.opcode == .pong }
            #expect(pings.count == 21 && pongs.count == 21, "\(pings.count) pings and \(pongs.count) pongs kept")
            #expect(pings.last?.note?.contains("2980 more pings and pongs") == true, "\(pings.last?.note ?? "no note")")
            #expect(pongs.last?.note?.contains("2980 more pings and pongs") == true)
            // The data messages are all there, in order.
            #expect(messages.filter { $0.opcode == .text }.map(\.text) == ["after the pings", "after the pings"])
        }
    }
}
