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
    @Test func idleAndIncompleteHeadsAreClosed() async throws {
        // Long enough that a request sent right after connecting, on a busy machine, still
        // counts as arriving in time.
        try await ProxyHarness.with(configure: { $0.clientIdleTimeout = .milliseconds(1500) }) { h in
            // The clients would hold their connections for two minutes: the proxy closes them.
            let heads = ["", "GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a", "GET /\r\n", "\r\n\r\n\r\n\r\n"]
            let clients = heads.map { head in
                Task { try await RawConnection.exchange(port: h.proxyPort, send: Data(head.utf8), timeout: .seconds(120)) }
            }
            try await eventually(attempts: 3000, every: .milliseconds(20)) { h.proxy.clientConnections?.open == 0 }
            #expect(h.proxy.clientConnections?.open == 0, "the proxy kept idle or incomplete connections open")
            for client in clients { _ = try await client.value }
            // A keep-alive connection that went quiet after an exchange is closed too.
            let afterOne = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: .seconds(120))
            #expect(afterOne.hasPrefix("HTTP/1.1 200"))
            try await eventually(attempts: 3000, every: .milliseconds(20)) { h.proxy.clientConnections?.open == 0 }
            #expect(h.proxy.clientConnections?.open == 0)
            // Everyone else is served.
            let served = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(served.stdoutText == " 200")
        }
    }

    /// A byte a second keeps no head from timing out: the time counts from the connection
    /// (or the last exchange), not from the last byte.
    @Test func aTrickledHeadIsClosed() async throws {
        try await ProxyHarness.with(configure: { $0.clientIdleTimeout = .milliseconds(800) }) { h in
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: h.proxyPort).get()
            let head = Array("GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ".utf8)
            var sent = 0
            for _ in 0..<200 where channel.isActive {
                try? await channel.writeAndFlush(ByteBuffer(bytes: [head[sent % head.count]]))
                sent += 1
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(!channel.isActive, "still open after \(sent) bytes")
            try? await channel.close()
        }
    }

    @Test func clientsPastTheLimitAreRefusedUntilOthersLeave() async throws {
        let notices = NoticeLog()
        try await ProxyHarness.with(configure: {
            $0.maximumClientConnections = 6
            // The held clients stay however slowly this test runs.
            $0.clientIdleTimeout = .seconds(600)
            $0.notice = { notices.add($0) }
        }) { h in
            var held: [any Channel] = []
            for _ in 0..<6 {
                held.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: h.proxyPort).get())
            }
            try await eventually(attempts: 100, every: .milliseconds(20)) { h.proxy.clientConnections?.open == 6 }
            #expect(h.proxy.clientConnections?.open == 6)
            let refused = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: .seconds(30))
            #expect(refused.isEmpty, "a seventh client was served: \(refused.prefix(40))")
            #expect(notices.messages.first?.contains("6 client connections are open") == true, "\(notices.messages)")
            for channel in held.prefix(3) { try? await channel.close() }
            try await eventually(attempts: 100, every: .milliseconds(20)) { (h.proxy.clientConnections?.open ?? 0) <= 3 }
            let served = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(served.stdoutText == " 200")
            for channel in held.dropFirst(3) { try? await channel.close() }
        }
    }

    /// An app cancels its request right after sending it: the server connection opened for it
    /// is closed, not left open (400 such requests once kept 400 server connections).
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

    @Test func cancelledRequestsLeaveNoServerConnectionsOpen() async throws {
        try await ProxyHarness.with { h in
            // The server answers after thirty seconds: however late a busy machine runs the
            // clients' timers, no exchange completes (a completed one would rightly leave its
            // connection in the keep-alive pool), so any server connection left open is a leak.
            func request(_ tag: String) -> Data { Data("GET \(h.origin.baseURL)/slow/30000?\(tag) HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }
            // Half leave before the proxy's server connection is up...
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask { _ = try await RawConnection.exchange(port: h.proxyPort, send: request("early=\(index)"), timeout: .milliseconds(1)) }
                }
                try await group.waitForAll()
            }
            // ...half once the server has their request and is waiting to answer it.
            var waiting: [any Channel] = []
            for index in 0..<50 {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: h.proxyPort).get()
                try await channel.writeAndFlush(ByteBuffer(bytes: request("late=\(index)")))
                waiting.append(channel)
            }
            let arrived = try await eventually(attempts: 3000, every: .milliseconds(20)) {
                h.origin.received.filter { $0.uri.contains("?late=") }.count == 50
            }
            #expect(arrived, "only \(h.origin.received.filter { $0.uri.contains("?late=") }.count) of 50 requests reached the server")
            for channel in waiting { try? await channel.close() }
            // Every connection the proxy opened for the cancelled requests must be gone, without
            // waiting for the server's answer.
            try await eventually(attempts: 500, every: .milliseconds(20)) { h.origin.openConnections == 0 }
            #expect(h.origin.openConnections == 0)
        }
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
