import Foundation
import KagamiTesting
import Testing

/// Tests that compare times run only by themselves (KAGAMI_TEST_ALONE=1, `scripts/test.sh`).
enum TimedTests {
    static let alone = ProcessInfo.processInfo.environment["KAGAMI_TEST_ALONE"] == "1"
}

#if os(Linux)
/// Peers that write without TCP_NODELAY hold a small write back until their last one is
/// acknowledged (Nagle), and the kernel delays an ACK by 40 ms or more on a connection it has
/// seen answer every message. When Kagami has read part of a message and will write nothing
/// back until the rest comes, it acknowledges at once, so such a peer is no slower through
/// Kagami than one with TCP_NODELAY. `bench/proxy/delayed_ack.py` runs the patterns through the
/// proxy (Python's http.server answering in two writes, as werkzeug and many development servers
/// do; bare-socket clients writing a request's head and body apart) and prints their median
/// times in ms: a delayed ACK adds 40 ms to every exchange it holds (every one after the first,
/// before).
///
/// Times are only worth comparing on a machine that is not busy with other tests: a client that
/// holds its body back until its head is acknowledged waits for one turn of Kagami's event loop
/// more, which takes tens of ms among a thousand tests running at once. So these run only when
/// KAGAMI_TEST_ALONE=1, as `scripts/test.sh` runs them, by themselves after the others.
@Suite("Delayed ACKs", .enabled(if: TimedTests.alone))
struct DelayedAcknowledgementTests {
    @Test func peersWithoutNodelayAreNotKeptWaiting() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bench/proxy/delayed_ack.py").path
        try await ProxyHarness.with { h in
            let result = try await CommandLineClient("/usr/bin/python3").run([script, "--proxy-port", String(h.proxyPort)])
            #expect(result.status == 0, "\(result.stderr)")
            // "| pattern | through the proxy | direct |" rows: the pattern and its median through Kagami.
            let rows = result.stdoutText.split(separator: "\n").map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
            let proxied = Dictionary(rows.filter { $0.count == 3 }.compactMap { row in Double(row[1]).map { (row[0], $0) } }, uniquingKeysWith: { first, _ in first })
            let baseline = try #require(proxied["both with TCP_NODELAY, kept alive"], "\(result.stdoutText) \(result.stderr)")
            for pattern in [
                "server without TCP_NODELAY, a new client connection each", "server without TCP_NODELAY, one kept-alive client connection",
                "client without TCP_NODELAY (head and body apart), kept alive", "both without TCP_NODELAY, kept alive",
            ] {
                let median = try #require(proxied[pattern], "\(pattern): \(result.stdoutText)")
                #expect(median < baseline + 20, "\(pattern): \(median) ms through Kagami, \(baseline) ms with TCP_NODELAY on both sides")
            }
            let flows = try await h.flows(count: 75)
            #expect(flows.allSatisfy { $0.response?.status == 200 })
        }
    }
}
#endif
