import Foundation
import KagamiFlow
import KagamiProxy
import KagamiTesting
import NIOCore
import NIOPosix
import Testing

/// Clients that hold connections without finishing a request, or cancel requests, can't take
/// the proxy's descriptors: idle and slow heads are closed, the number of clients is capped,
/// and a cancelled request's server connection is closed.
@Suite("Client limits")
struct ClientLimitsTests {
    /// At the limit with every connection in the middle of an exchange, a new client is
    /// refused (and the proxy says so) until some leave.
    @Test func clientsPastTheLimitAreRefusedWhileEveryOneIsBusy() async throws {
        let notices = NoticeLog()
        try await ProxyHarness.with(configure: {
            $0.maximumClientConnections = 6
            // The held clients stay however slowly this test runs.
            $0.clientIdleTimeout = .seconds(600)
            $0.responseTimeout = .seconds(600)
            $0.notice = { notices.add($0) }
        }) { h in
            var held: [any Channel] = []
            for index in 0..<6 {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: h.proxyPort).get()
                try await channel.writeAndFlush(ByteBuffer(string: "GET \(h.origin.baseURL)/slow/600000?busy=\(index) HTTP/1.1\r\nHost: x\r\n\r\n"))
                held.append(channel)
            }
            try await eventually(attempts: 1500, every: .milliseconds(20)) { h.origin.received.filter { $0.uri.contains("busy=") }.count == 6 }
            #expect(h.proxy.clientConnections?.open == 6)
            let refused = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: .seconds(30))
            #expect(refused.isEmpty, "a seventh client was served: \(refused.prefix(40))")
            #expect(notices.messages.first?.contains("6 client connections are open and busy") == true, "\(notices.messages)")
            // Reset, not closed: a closed socket would still be answered (it may only have half-closed).
            for channel in held.prefix(3) { try? await Self.reset(channel) }
            try await eventually(attempts: 100, every: .milliseconds(20)) { (h.proxy.clientConnections?.open ?? 0) <= 3 }
            let served = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(served.stdoutText == " 200")
            for channel in held.dropFirst(3) { try? await Self.reset(channel) }
        }
    }

    /// Thousands of sockets that connect and say nothing fill the limit; a real client is still
    /// served: the socket that has waited longest is closed to make room (as nginx closes
    /// keep-alive connections when it runs out). Without that, nobody was served until the
    /// silent ones timed out, a minute later.
    @Test func silentSocketsAtTheLimitMakeRoomForRealClients() async throws {
        try await ProxyHarness.with(configure: {
            $0.maximumClientConnections = 50
            $0.clientIdleTimeout = .seconds(600)
        }) { h in
            var silent: [any Channel] = []
            for _ in 0..<400 {
                if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: h.proxyPort).get() {
                    silent.append(channel)
                }
            }
            defer { for channel in silent { channel.close(promise: nil) } }
            #expect((h.proxy.clientConnections?.open ?? 0) <= 51)
            // Each real client is answered once a silent socket has waited past the short grace.
            for index in 0..<5 {
                let served = try await eventually(attempts: 100, every: .milliseconds(100)) {
                    try await h.curl(["--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "\(h.origin.baseURL)/echo?real=\(index)"]).stdoutText == "200"
                }
                #expect(served, "real client \(index) was not served while silent sockets held the limit")
            }
        }
    }

    /// A client that sends its request and then shuts its side (`shutdown(SHUT_WR)`, as `nc -N`
    /// does) still gets the answer, and the proxy closes the connection after it.
    @Test func aClientThatHalfClosesAfterItsRequestIsAnswered() async throws {
        try await ProxyHarness.with { h in
            let answer = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("GET \(h.origin.baseURL)/echo?half=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8), halfClose: true)
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            #expect(answer.contains("half=1"))
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.response?.status == 200)
            #expect(flows.first?.error == nil)
        }
    }

    /// A kept-alive server connection is reused by the next exchange, and closed once it has
    /// been idle in the pool for `idleConnectionTimeout`, however often it was used before.
    @Test func idleServerConnectionsAreReusedThenClosed() async throws {
        // Long enough that one curl's two requests, on a busy machine, reuse the connection.
        try await ProxyHarness.with(configure: { $0.idleConnectionTimeout = .seconds(2) }) { h in
            for round in 0..<2 {
                let both = try await h.curl(["-w", " %{http_code}\n", "\(h.origin.baseURL)/echo?first=\(round)", "\(h.origin.baseURL)/echo?second=\(round)"])
                #expect(both.stdoutText.components(separatedBy: " 200\n").count == 3, "\(both.stdoutText)")
                let ports = Set(h.origin.received.filter { $0.uri.hasSuffix("=\(round)") }.map(\.clientPort))
                #expect(ports.count == 1, "the second request went on a new server connection")
                // With the default of a minute, the connection would outlast this wait.
                let closed = try await eventually(attempts: 1500, every: .milliseconds(20)) { h.origin.openConnections == 0 }
                #expect(closed, "a server connection stayed open past its idle timeout")
            }
        }
    }

    /// An app cancels its request by resetting its connection (a socket closed with unread
    /// data, or with SO_LINGER 0): the server connection opened for it is closed at once, not
    /// left open waiting for the server (400 such requests once kept 400 server connections).
    @Test func resetRequestsLeaveNoServerConnectionsOpen() async throws {
        try await ProxyHarness.with { h in
            // The server answers after thirty seconds: however late a busy machine runs the
            // clients, no exchange completes (a completed one would rightly leave its connection
            // in the keep-alive pool), so any server connection left open is a leak.
            func request(_ tag: String) -> ByteBuffer { ByteBuffer(string: "GET \(h.origin.baseURL)/slow/30000?\(tag) HTTP/1.1\r\nHost: x\r\n\r\n") }
            // Half leave before the proxy's server connection is up...
            for index in 0..<50 {
                let channel = try await Self.connect(h.proxyPort)
                try await channel.writeAndFlush(request("early=\(index)"))
                try? await Self.reset(channel)
            }
            // ...half once the server has their request and is waiting to answer it.
            var waiting: [any Channel] = []
            for index in 0..<50 {
                let channel = try await Self.connect(h.proxyPort)
                try await channel.writeAndFlush(request("late=\(index)"))
                waiting.append(channel)
            }
            let arrived = try await eventually(attempts: 3000, every: .milliseconds(20)) {
                h.origin.received.filter { $0.uri.contains("?late=") }.count == 50
            }
            #expect(arrived, "only \(h.origin.received.filter { $0.uri.contains("?late=") }.count) of 50 requests reached the server")
            for channel in waiting { try? await Self.reset(channel) }
            // Every connection the proxy opened for the cancelled requests must be gone, without
            // waiting for the server's answer.
            try await eventually(attempts: 500, every: .milliseconds(20)) { h.origin.openConnections == 0 }
            #expect(h.origin.openConnections == 0)
        }
    }

    /// A client that closes its socket after its request looks, on the wire, like one that only
    /// half-closed (a FIN either way): it is answered, and once the answer is out nothing stays
    /// open but the keep-alive pool, which empties after its idle timeout.
    @Test func closedRequestsAreAnsweredThenLetGo() async throws {
        try await ProxyHarness.with(configure: { $0.idleConnectionTimeout = .seconds(2) }) { h in
            for index in 0..<20 {
                let channel = try await Self.connect(h.proxyPort)
                try await channel.writeAndFlush(ByteBuffer(string: "GET \(h.origin.baseURL)/slow/500?closed=\(index) HTTP/1.1\r\nHost: x\r\n\r\n"))
                try await channel.close()
            }
            let flows = try await h.flows(count: 20)
            #expect(flows.count == 20)
            #expect(flows.allSatisfy { $0.response?.status == 200 }, "\(flows.map { $0.error?.message ?? "ok" })")
            try await eventually(attempts: 1000, every: .milliseconds(20)) { h.origin.openConnections == 0 && (h.proxy.clientConnections?.open ?? 1) == 0 }
            #expect(h.origin.openConnections == 0)
            #expect(h.proxy.clientConnections?.open == 0)
        }
    }

    static func connect(_ port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    }

    /// Closes with a reset (SO_LINGER 0), as a socket closed with unread data does.
    static func reset(_ channel: any Channel) async throws {
        let options = try #require(channel as? any SocketOptionProvider)
        try await options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try await channel.close()
    }

    /// `kagami proxy` with 64 open files allowed: 200 clients that connect and say nothing
    /// never take it down; once they go, it serves again.
    @Test func aSmallDescriptorLimitIsNeverExhausted() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", temporaryPath("limited.sqlite")], openFiles: 64)
        defer { proxy.stop() }
        let port = proxy.port
        var held: [any Channel] = []
        for _ in 0..<200 {
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get() {
                held.append(channel)
            }
        }
        #expect(proxy.process.isRunning)
        for channel in held { try? await channel.close() }
        let answered = try await eventually(attempts: 100, every: .milliseconds(50)) {
            try await CommandLineClient.curl.run(["-s", "--max-time", "60", "-x", "http://127.0.0.1:\(port)", "-o", "/dev/null", "-w", "%{http_code}", "\(origin.baseURL)/echo"]).stdoutText == "200"
        }
        #expect(answered)
        try await origin.stop()
    }
}

final class NoticeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ message: String) { lock.withLock { list.append(message) } }
    var messages: [String] { lock.withLock { list } }
}
