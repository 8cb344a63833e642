import Foundation
import KagamiFlow
import KagamiRules
import NIOCore
import Testing
@testable import KagamiProxy

/// Exchanges on one client connection driven with bytes and a manual clock (`Playbook`): what
/// the client and each server see, byte for byte, for every way an exchange goes and ends.
@Suite struct ExchangePlaybookTests {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    @Test func keepAliveReusesTheClientAndTheServerConnection() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /a HTTP/1.1\r\nHost: app.test\r\n\r\n")
        let first = try playbook.serverReceived()
        #expect(first.hasPrefix("GET /a HTTP/1.1\r\n"))
        #expect(first.contains("Host: origin.test\r\n"))
        try playbook.serverSends(Self.ok)
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.hasSuffix("\r\n\r\nok"))

        try playbook.clientSends("GET /b HTTP/1.1\r\nHost: app.test\r\n\r\n")
        #expect(try playbook.serverReceived().hasPrefix("GET /b HTTP/1.1\r\n"))
        #expect(playbook.servers.opened.count == 1)
        try playbook.serverSends(Self.ok)
        #expect(try playbook.clientReceived().hasSuffix("ok"))
        #expect(playbook.clientIsOpen)
        #expect(playbook.sink.flows.map(\.request.target) == ["/a", "/b"])
        #expect(playbook.sink.flows.allSatisfy { $0.error == nil && $0.response?.status == 200 })
    }

    /// Requests sent back to back are answered in order; the second reaches the server once
    /// the first is answered.
    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
        let first = try playbook.serverReceived()
        #expect(first.hasPrefix("GET /1 "))
        #expect(!first.contains("GET /2 "))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none")
        #expect(try playbook.serverReceived().hasPrefix("GET /2 "))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo")
        let answers = try playbook.clientReceived()
        let one = try #require(answers.range(of: "one"))
        let two = try #require(answers.range(of: "two"))
        #expect(one.upperBound <= two.lowerBound)
    }

    /// A kept-alive server connection the server had closed: the request goes again on a new
    /// connection, and the client never knows.
    @Test func aStalePooledConnectionIsRetriedOnANewOne() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived(0)
        try playbook.serverSends(Self.ok, on: 0)
        _ = try playbook.clientReceived()

        try playbook.clientSends("POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody")
        #expect(try playbook.serverReceived(0).hasPrefix("POST /b "))
        try playbook.serverCloses(0)
        #expect(playbook.servers.opened.count == 2)
        let again = try playbook.serverReceived(1)
        #expect(again.hasPrefix("POST /b "))
        #expect(again.hasSuffix("\r\n\r\nbody"))
        try playbook.serverSends(Self.ok, on: 1)
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 200 OK"))
        #expect(playbook.sink.flows.last?.error == nil)
    }

    /// `Expect: 100-continue` passes to the server, whose 100 comes back to the client; then
    /// the body goes.
    @Test func theServersContinueReachesTheClient() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("PUT /f HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(try playbook.serverReceived().contains("Expect: 100-continue\r\n"))
        try playbook.serverSends("HTTP/1.1 100 Continue\r\n\r\n")
        #expect(try playbook.clientReceived() == "HTTP/1.1 100 Continue\r\n\r\n")
        try playbook.clientSends("hello")
        #expect(try playbook.serverReceived() == "hello")
        try playbook.serverSends("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 201 Created"))
        #expect(playbook.sink.flows.first?.request.body.data == Data("hello".utf8))
    }

    /// A rule that answers a request whose client waits for a 100 answers at once (the client
    /// would otherwise wait for its own timeout before sending a body nobody reads), and says
    /// the connection closes, since the body was not read.
    @Test func aRuleAnswersAWaitingClientAtOnce() throws {
        let rules = try RulePipeline(try RuleSet(parsing: "blockList: [{name: uploads, locations: [{path: /upload}]}]"))
        let playbook = try Playbook(rules: rules)
        defer { try? playbook.finish() }
        try playbook.clientSends("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 403 "))
        #expect(answer.contains("Connection: close\r\n"))
        #expect(!playbook.clientIsOpen)
        #expect(playbook.servers.opened.isEmpty)
        #expect(playbook.sink.flows.first?.response?.status == 403)
    }

    /// A breakpoint needs the whole request before anyone decides: the proxy itself asks the
    /// client for the body, and the server gets it whole without the expectation.
    @Test func aHeldRequestIsToldToContinueByTheProxy() throws {
        let breakpoints = BreakpointSettings(breakpoints: [Breakpoint(location: Location(path: "/upload"), request: true, response: false)])
        let playbook = try Playbook(breakpoints: breakpoints)
        defer { try? playbook.finish() }
        try playbook.clientSends("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(try playbook.clientReceived() == "HTTP/1.1 100 Continue\r\n\r\n")
        try playbook.clientSends("hello")
        let held = try #require(playbook.breakpoints.held.first)
        #expect(held.request.body.data == Data("hello".utf8))
        #expect(playbook.servers.opened.isEmpty)
        try playbook.breakpoints.resolve(held.id, with: .cancel)
        playbook.loop.run()
        let sent = try playbook.serverReceived()
        #expect(sent.hasPrefix("POST /upload HTTP/1.1\r\n"))
        #expect(!sent.lowercased().contains("expect:"))
        #expect(sent.hasSuffix("\r\n\r\nhello"))
        try playbook.serverSends(Self.ok)
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 200 OK"))
    }

    /// Aborted at the breakpoint: the client gets an error page, no server is asked.
    @Test func aHeldRequestCanBeAborted() throws {
        let breakpoints = BreakpointSettings(breakpoints: [Breakpoint(location: Location(path: "/x"), request: true, response: false)])
        let playbook = try Playbook(breakpoints: breakpoints)
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        let held = try #require(playbook.breakpoints.held.first)
        try playbook.breakpoints.resolve(held.id, with: .abort)
        playbook.loop.run()
        _ = try playbook.clientReceived()
        #expect(playbook.servers.opened.isEmpty)
        #expect(playbook.sink.flows.first?.error != nil)
    }

    /// A response held at a breakpoint goes on edited.
    @Test func aHeldResponseGoesOnEdited() throws {
        let breakpoints = BreakpointSettings(breakpoints: [Breakpoint(location: Location(path: "/x"), request: false, response: true)])
        let playbook = try Playbook(breakpoints: breakpoints)
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived()
        try playbook.serverSends(Self.ok)
        #expect(try playbook.clientReceived().isEmpty)
        let held = try #require(playbook.breakpoints.held.first)
        var response = try #require(held.response)
        response.status = 418
        response.reason = "I'm a teapot"
        response.body = FlowBody(data: Data("edited".utf8))
        try playbook.breakpoints.resolve(held.id, with: .executeResponse(response))
        playbook.loop.run()
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 418 I'm a teapot\r\n"))
        #expect(answer.contains("Content-Length: 6\r\n"))
        #expect(answer.hasSuffix("edited"))
        #expect(playbook.sink.flows.first?.response?.status == 418)
    }

    /// An HTTP/1.0 client can't read chunked framing: it gets the body as it is, and the
    /// connection's close ends it.
    @Test func anHTTP10ClientGetsAChunkedBodyUnchunked() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET / HTTP/1.0\r\n\r\n")
        _ = try playbook.serverReceived()
        try playbook.serverSends("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.0 200 OK\r\n"))
        #expect(!answer.lowercased().contains("transfer-encoding"))
        #expect(answer.hasSuffix("\r\n\r\nhello"))
        #expect(!playbook.clientIsOpen)
    }

    /// A server that ends its body by closing the connection: the client gets the whole body,
    /// framed, and the exchange is complete.
    @Test func aCloseDelimitedBodyEndsWithTheServersClose() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived()
        try playbook.serverSends("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc")
        try playbook.serverCloses()
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.contains("abc"))
        let flow = try #require(playbook.sink.flows.first)
        #expect(flow.error == nil)
        #expect(flow.response?.body.data == Data("abc".utf8))
    }

    /// The server's silence past the response timeout: 504 with the reason, the exchange
    /// recorded as timed out. Silence is timed from the server's last part, not from the
    /// request, and anew for each exchange of a kept-alive connection.
    @Test func aSilentServerIsTimedOut() throws {
        var timeouts = Playbook.Timeouts()
        timeouts.response = .seconds(5)
        let playbook = try Playbook(timeouts: timeouts)
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /drip HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived()
        playbook.advance(by: .seconds(4))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
        for part in ["a", "b", "c"] {
            playbook.advance(by: .seconds(4))
            try playbook.serverSends(part)
        }
        #expect(try playbook.clientReceived().hasSuffix("\r\n\r\nabc"), "16 s in all, never 5 s silent")

        // The next exchange on the connection: timed from its own request.
        try playbook.clientSends("GET /silent HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try playbook.serverReceived().hasPrefix("GET /silent "))
        playbook.advance(by: .seconds(4))
        #expect(try playbook.clientReceived().isEmpty)
        playbook.advance(by: .seconds(2))
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 504 "))
        #expect(answer.contains("no response from origin.test:80 within 5 s"))
        #expect(playbook.sink.flows.map(\.response?.status) == [200, 504])
        #expect(playbook.sink.flows.last?.error?.kind == .timeout)
        #expect(!playbook.server(0).isActive, "a server connection that timed out is not reused")

        // Silent once the response has begun: the status line is out, so the connection closes.
        let midway = try Playbook(timeouts: timeouts)
        defer { try? midway.finish() }
        try midway.clientSends("GET /half HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try midway.serverReceived()
        try midway.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        midway.advance(by: .seconds(6))
        #expect(!midway.clientIsOpen)
        #expect(midway.sink.flows.first?.error?.kind == .timeout)
    }

    /// A throttled upload leaves slowly: the server's silence is timed once the request has
    /// left, not from when it began (50,000 bytes at 100 kbps take 4 s, twice the timeout).
    @Test func aThrottledRequestIsTimedOnceItHasLeft() throws {
        let rules = try RulePipeline(try RuleSet(parsing: """
            throttling:
              enabled: true
              profile: {name: Slow uplink, downloadKbps: 0, uploadKbps: 100}
            """))
        var timeouts = Playbook.Timeouts()
        timeouts.response = .seconds(2)
        let playbook = try Playbook(rules: rules, timeouts: timeouts)
        defer { try? playbook.finish() }
        let body = String(repeating: "x", count: 50_000)
        try playbook.clientSends("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 50000\r\n\r\n" + body)
        var sent = ""
        for _ in 0..<30 {
            playbook.advance(by: .milliseconds(100))
            sent += try playbook.serverReceived()
        }
        #expect(sent.count < 50_000, "3 s in, the upload is still leaving")
        for _ in 0..<15 {
            playbook.advance(by: .milliseconds(100))
            sent += try playbook.serverReceived()
        }
        #expect(sent.hasSuffix(body), "all of it left by 4.5 s")
        #expect(try playbook.clientReceived().isEmpty, "no 504 while the request was leaving")
        playbook.advance(by: .seconds(1))
        try playbook.serverSends(Self.ok)
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 200 OK"))
        #expect(playbook.sink.flows.first?.error == nil)
    }

    /// A connection that sends no complete request head in time is closed, after connecting
    /// and after its last exchange alike.
    @Test func anIdleClientIsClosed() throws {
        var timeouts = Playbook.Timeouts()
        timeouts.clientIdle = .seconds(5)
        let playbook = try Playbook(timeouts: timeouts)
        defer { try? playbook.finish() }
        playbook.advance(by: .seconds(3))
        try playbook.clientSends("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived()
        playbook.advance(by: .seconds(10))
        #expect(playbook.clientIsOpen, "an exchange in progress is not idle")
        try playbook.serverSends(Self.ok)
        playbook.advance(by: .seconds(4))
        #expect(playbook.clientIsOpen)
        try playbook.clientSends("GET /par")
        playbook.advance(by: .seconds(2))
        #expect(!playbook.clientIsOpen, "half a head is idle too")
    }

    /// What never becomes a complete head is closed at the same time as silence: a head sent a
    /// byte at a time (the time counts from the connection, not the last byte), an HTTP/0.9
    /// request line, bare line breaks.
    @Test(arguments: ["GET /trickled HTTP/1.1\r\nHost: a\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "GET /\r\n", "\r\n\r\n\r\n\r\n"])
    func anIncompleteHeadIsClosed(head: String) throws {
        var timeouts = Playbook.Timeouts()
        timeouts.clientIdle = .seconds(5)
        let playbook = try Playbook(timeouts: timeouts)
        defer { try? playbook.finish() }
        for byte in head.utf8.prefix(40) where playbook.clientIsOpen {
            try? playbook.clientSends(String(decoding: [byte], as: UTF8.self))
            playbook.advance(by: .milliseconds(200))
        }
        playbook.advance(by: .seconds(5))
        #expect(!playbook.clientIsOpen)
        #expect(playbook.servers.opened.isEmpty)
    }

    /// A client that half-closes after its request still gets its answer, then the connection
    /// closes; one that gave up is not waited for past the half-close timeout.
    @Test func aHalfClosedClientIsAnsweredThenClosed() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        playbook.clientClosesInput()
        #expect(playbook.clientIsOpen)
        _ = try playbook.serverReceived()
        try playbook.serverSends(Self.ok)
        #expect(try playbook.clientReceived().hasSuffix("ok"))
        #expect(!playbook.clientIsOpen)

        var timeouts = Playbook.Timeouts()
        timeouts.clientHalfClose = .seconds(3)
        let gaveUp = try Playbook(timeouts: timeouts)
        defer { try? gaveUp.finish() }
        try gaveUp.clientSends("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        gaveUp.clientClosesInput()
        gaveUp.advance(by: .seconds(4))
        #expect(!gaveUp.clientIsOpen)
        #expect(gaveUp.sink.flows.first?.error?.kind == .clientDisconnected)
    }

    /// The client leaves during the response: the exchange is recorded with what came, as one
    /// the client left; the server connection is not reused.
    @Test func aClientLeavingMidResponseIsRecorded() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try playbook.serverReceived()
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart")
        try playbook.clientDisconnects()
        let flow = try #require(playbook.sink.flows.first)
        #expect(flow.error?.kind == .clientDisconnected)
        #expect(flow.response?.body.data == Data("part".utf8))
        #expect(!playbook.server(0).isActive)
        #expect(playbook.servers.idleCount == 0)
    }

    /// A server that can't be reached: 502 with the reason, recorded.
    @Test func anUnreachableServerGets502() throws {
        let playbook = try Playbook()
        defer { try? playbook.finish() }
        playbook.servers.failNextConnect = ChannelError.connectTimeout(.seconds(10))
        try playbook.clientSends("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        let answer = try playbook.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 5"))
        #expect(playbook.sink.flows.first?.error != nil)
        #expect(playbook.clientIsOpen)
    }
}
