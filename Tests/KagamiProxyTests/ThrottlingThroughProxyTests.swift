import Foundation
import KagamiFlow
import KagamiProxy
import KagamiRules
import KagamiTesting
import Testing

/// Throttling on live traffic, in real time: curl through the proxy against the testing origin.
/// Functional checks, not speed measurements: each asserts only the least time the shaping must
/// take, which a busy machine can't shorten. The exact release instants are checked on a manual
/// clock in ThrottleHandlerTests, and curl's time limit catches a stall.
@Suite("Throttling through the proxy")
struct ThrottlingThroughProxyTests {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func oneMegabyteAtOneMegabitTakesEightSeconds() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              preset: 1 Mbps
            """) { h in
            let output = temporaryPath("download.bin")
            let start = ContinuousClock.now
            let result = try await h.curl(["-o", output, "-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/bytes/1000000"])
            let elapsed = Self.seconds(ContinuousClock.now - start)
            #expect(result.stdoutText == "200 1000000")
            // 1,000,000 bytes at 125,000 bytes/s, plus the preset's 40 ms once.
            #expect(elapsed > 8.04 * 0.85, "took \(elapsed) s")
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(data == Data(OriginServer.bytes(1_000_000)))
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.appliedRules.map(\.description) == ["throttled by 1 Mbps"])
        }
    }

    @Test func latencyIsAddedOncePerRequestOnlyForSelectedHosts() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              profile: {name: Far away, downloadKbps: 0, uploadKbps: 0, latencyMs: 1500}
              onlyFor: [{host: 127.0.0.1}]
            """) { h in
            // Two requests on one keep-alive connection: each waits 1.5 s.
            let start = ContinuousClock.now
            let both = try await h.curl([
                "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\n", "\(h.origin.baseURL)/status/204",
                "-o", "/dev/null", "\(h.origin.baseURL)/status/204",
            ])
            let elapsed = Self.seconds(ContinuousClock.now - start)
            #expect(both.stdoutText == "204 1\n204 0\n")
            #expect(elapsed >= 3.0, "took \(elapsed) s")
            // Not a selected host: not throttled, nothing recorded.
            let quick = try await h.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://localhost:\(h.origin.port)/status/204"])
            #expect(quick.stdoutText == "204")
            let flows = try await h.flows(count: 3)
            #expect(flows.filter { $0.appliedRules.map(\.description) == ["throttled by Far away"] }.count == 2)
            #expect(flows.filter { $0.request.host == "localhost" }.allSatisfy { $0.appliedRules.isEmpty })
        }
    }

    @Test func uploadIsShapedAtTheUploadRate() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              profile: {name: Slow uplink, downloadKbps: 0, uploadKbps: 100}
            """) { h in
            // 50,000 bytes of body (plus the head) at 12,500 bytes/s: 4 s.
            let body = try randomFile(size: 50_000)
            let start = ContinuousClock.now
            let result = try await h.curl(["--data-binary", "@\(body.path)", "-H", "Content-Type: application/octet-stream", "-H", "Expect:", "\(h.origin.baseURL)/echo"])
            let elapsed = Self.seconds(ContinuousClock.now - start)
            let echo = try Echo(result.stdout)
            #expect(echo.bodySize == 50_000)
            #expect(elapsed > 4.0 * 0.85, "took \(elapsed) s")
        }
    }

    @Test func mapLocalAnswersAreThrottledToo() async throws {
        let directory = (temporaryPath("big.bin") as NSString).deletingLastPathComponent
        try Data(repeating: 0x6B, count: 125_000).write(to: URL(fileURLWithPath: directory + "/big.bin"))
        try await RulesThroughProxyTests.with("""
            mapLocal:
              - {name: mock, from: {path: /local}, local: big.bin}
            throttling:
              enabled: true
              profile: {name: Slow mock, downloadKbps: 1000, uploadKbps: 0, latencyMs: 500}
            """, directory: directory) { h in
            // 0.5 s of latency, then 125,000 bytes (and the head) at 125,000 bytes/s.
            let start = ContinuousClock.now
            let result = try await h.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/local"])
            let elapsed = Self.seconds(ContinuousClock.now - start)
            #expect(result.stdoutText == "200 125000")
            #expect(elapsed > 1.4, "took \(elapsed) s")
            #expect(h.origin.received.isEmpty)
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.appliedRules.map(\.description) == ["mapped to local file big.bin", "throttled by Slow mock"])
        }
    }

    @Test func tunnelsNotInterceptedAreThrottledAsTheyAre() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              profile: {name: Tunnel, downloadKbps: 1000, uploadKbps: 0, latencyMs: 300}
              onlyFor: [{host: 127.0.0.1}]
            """) { h in
            // CONNECT, then 250,000 bytes (and a head) at 125,000 bytes/s: 0.3 s + 2 s.
            let start = ContinuousClock.now
            let result = try await h.curl(["-p", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/bytes/250000"])
            let elapsed = Self.seconds(ContinuousClock.now - start)
            #expect(result.stdoutText == "200 250000")
            #expect(elapsed > 2.3 * 0.85, "took \(elapsed) s")
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.mode == .tunnel)
            #expect(flows.first?.appliedRules.map(\.description) == ["throttled by Tunnel"])
        }
    }

    /// A server that ends its response by closing the connection (HTTP/1.0, `python3 -m
    /// http.server`): the throttled client gets the whole body and its end, not a 504.
    @Test func closeDelimitedResponsesEndWhenThrottled() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              profile: {name: Quick, downloadKbps: 8000, uploadKbps: 0, latencyMs: 20}
            """) { h in
            let result = try await h.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(h.origin.baseURL)/close-delimited/30000"])
            #expect(result.stdoutText == "200 30000", "\(result.stdoutText) \(result.stderr)")
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.error == nil, "\(flow.error?.message ?? "")")
            #expect(flow.response?.body.size == 30000)
        }
    }

    @Test func fullLossFailsTheExchangeAndSaysWhy() async throws {
        try await RulesThroughProxyTests.with("""
            throttling:
              enabled: true
              preset: 100% Loss
            """) { h in
            let result = try await h.curl(["-w", " %{http_code}", "\(h.origin.baseURL)/echo"])
            #expect(result.stdoutText.hasSuffix(" 502"))
            #expect(result.stdoutText.contains("throttling lost the request (profile \"100% Loss\", reliability 0%)"))
            #expect(h.origin.received.isEmpty)
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.error?.kind == .aborted)
            #expect(flows.first?.appliedRules.map(\.description) == ["throttled by 100% Loss"])
        }
    }
}
