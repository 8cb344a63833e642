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
/// Kagami than without it. Python's `http.server` answers with its head and body in two writes,
/// as werkzeug and many development servers do; Python's sockets write without TCP_NODELAY.
/// Each test alternates two kept-alive connections through Kagami, 15 exchanges on each, one
/// where no peer holds a write back and one where one does, and compares their median times
/// in ms: a delayed ACK adds 40 ms to every exchange it holds (every one after the first,
/// before). Both go through the same proxy.
///
/// Times are only worth comparing on a machine that is not busy with other tests: a client that
/// holds its body back until its head is acknowledged waits for one turn of Kagami's event loop
/// more, which takes tens of ms among a thousand tests running at once. So these run only when
/// KAGAMI_TEST_ALONE=1, as `scripts/test.sh` runs them, by themselves after the others.
@Suite("Delayed ACKs", .enabled(if: TimedTests.alone))
struct DelayedAcknowledgementTests {
    /// A server whose head and body come apart, on the kept-alive connection Kagami's pool
    /// reuses, against a server with TCP_NODELAY.
    @Test func aServerAnsweringInTwoWritesIsRelayedWithoutWaitingForAnACK() async throws {
        let medians = try await Self.medians("server")
        #expect(medians.held < medians.baseline + 20, "ms, median from the server with TCP_NODELAY \(medians.baseline), without \(medians.held)")
    }

    /// A client without TCP_NODELAY sending its request's head and body in two writes, against
    /// the same client with TCP_NODELAY.
    @Test func aClientSendingItsBodyApartIsNotKeptWaiting() async throws {
        let medians = try await Self.medians("client")
        #expect(medians.held < medians.baseline + 20, "ms, median from the client with TCP_NODELAY \(medians.baseline), without \(medians.held)")
    }

    private static func medians(_ mode: String) async throws -> (baseline: Double, held: Double) {
        try await ProxyHarness.with { h in
            let result = try await CommandLineClient("/usr/bin/python3").run(["-c", script, mode, String(h.proxyPort)])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutText.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) }.sorted() }
            try #require(lines.count == 2 && lines.allSatisfy { $0.count == 15 }, "\(result.stdoutText) \(result.stderr)")
            let flows = try await h.flows(count: 30)
            #expect(flows.allSatisfy { $0.response?.status == 200 })
            return (lines[0][7], lines[1][7])
        }
    }

    /// Echo servers like Python's http.server, HTTP/1.1 kept alive. `server`: one with TCP_NODELAY
    /// and one without; a kept-alive client connection with TCP_NODELAY to each through the proxy,
    /// whole requests. `client`: one server with TCP_NODELAY; two kept-alive connections to it
    /// through the proxy, one with TCP_NODELAY and one without, each request's head and body
    /// written apart. 15 exchanges on each connection, alternating; prints the times in ms of the
    /// first connection on a line, then of the second.
    private static let script = #"""
    import http.server, socket, sys, threading, time
    mode, proxy_port = sys.argv[1], int(sys.argv[2])

    def origin(nagle):
        class Origin(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = not nagle
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server.server_address[1]

    def connect(nodelay):
        sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=20)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(nodelay))
        return sock

    def exchange(sock, port, apart):
        head = ("POST http://127.0.0.1:%d/echo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 5\r\n\r\n" % (port, port)).encode()
        started = time.monotonic()
        if apart:
            sock.sendall(head)
            sock.sendall(b"hello")
        else:
            sock.sendall(head + b"hello")
        data = b""
        while not data.endswith(b"\r\n\r\nhello"):
            chunk = sock.recv(4096)
            if not chunk:
                raise SystemExit("closed after %r" % data)
            data += chunk
        return (time.monotonic() - started) * 1000

    first, second = [], []
    if mode == "server":
        quick_port, nagle_port = origin(False), origin(True)
        with connect(True) as to_quick, connect(True) as to_nagle:
            for _ in range(15):
                first.append(exchange(to_quick, quick_port, False))
                second.append(exchange(to_nagle, nagle_port, False))
    else:
        port = origin(False)
        with connect(True) as quick, connect(False) as nagle:
            for _ in range(15):
                first.append(exchange(quick, port, True))
                second.append(exchange(nagle, port, True))
    print(" ".join("%.1f" % t for t in first))
    print(" ".join("%.1f" % t for t in second))
    """#
}
#endif
