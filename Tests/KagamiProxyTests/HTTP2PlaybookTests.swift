import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP2
import Testing
@testable import KagamiProxy

/// HTTP/2 streams through the exchange layer, driven with frames (`HTTP2Playbook`): each stream
/// is one exchange, and the ways a client's resets end them — one by one, then counted, then
/// the client address's budget.
@Suite struct HTTP2PlaybookTests {
    @Test func aStreamIsOneExchangeRelayedToAnHTTP11Server() throws {
        let play = try HTTP2Playbook()
        defer { try? play.finish() }
        let stream = try play.get("/a?x=1")
        let sent = try play.serverReceived(0)
        #expect(sent.hasPrefix("GET /a?x=1 HTTP/1.1\r\n"))
        #expect(sent.lowercased().contains("host: origin.test\r\n"))
        try play.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok", on: 0)
        #expect(stream.status == "200")
        #expect(stream.text == "ok")
        #expect(stream.reader.ended)
        let flow = try #require(play.sink.flows.first)
        #expect(play.sink.flows.count == 1)
        #expect(flow.response?.status == 200)
        #expect(flow.request.version == "HTTP/2.0")
        #expect(flow.streamID == 1)
        #expect(flow.error == nil)
    }

    @Test func twoStreamsOnOneConnectionAreTwoExchanges() throws {
        let play = try HTTP2Playbook()
        defer { try? play.finish() }
        let first = try play.get("/one")
        let second = try play.get("/two")
        #expect(play.servers.opened.count == 2)
        try play.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo", on: 1)
        try play.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none", on: 0)
        #expect(first.text == "one")
        #expect(second.text == "two")
        #expect(play.sink.flows.map(\.request.target) == ["/two", "/one"])
        #expect(play.sink.flows.map(\.streamID) == [3, 1])
    }

    @Test func aStreamResetBeforeItsAnswerIsRecordedAsTheClientsResetAndItsServerLetGo() throws {
        let play = try HTTP2Playbook()
        defer { try? play.finish() }
        let stream = try play.get("/slow")
        #expect(try play.serverReceived(0).hasPrefix("GET /slow "))
        try play.reset(stream)
        let flow = try #require(play.sink.flows.first)
        #expect(flow.error?.kind == .clientDisconnected)
        #expect(flow.error?.message == "the client reset the stream (RST_STREAM CANCEL) before the response")
        #expect(!play.servers.opened[0].isActive)
        #expect(play.proxy.isActive)
    }

    @Test func pastTwentyResetsAConnectionsResetStreamsAreCountedIntoOneRecord() throws {
        let play = try HTTP2Playbook()
        for index in 0..<25 {
            let stream = try play.get("/r\(index)")
            try play.reset(stream)
        }
        #expect(play.sink.flows.count == StreamResets.recordedOneByOne)
        try play.clientCloses()
        let flows = play.sink.flows
        #expect(flows.count == StreamResets.recordedOneByOne + 1)
        let counted = try #require(flows.last?.error?.message)
        #expect(counted.contains("the client reset 4 more streams of this connection before they were answered"))
        try play.finish()
    }

    @Test func aClientAddressOverItsResetBudgetHasItsConnectionClosed() throws {
        var limits = ClientBudget.Limits()
        limits.resetsPerWindow = 3
        limits.resetsPerConnectionWhileCooling = 5
        // One instant throughout: every reset falls in the budget's first window.
        let play = try HTTP2Playbook(budget: ClientBudget(limits: limits, now: { .uptimeNanoseconds(1_000_000_000) }))
        defer { try? play.finish() }
        for index in 0..<5 {
            try play.reset(try play.get("/r\(index)"))
            #expect(play.proxy.isActive, "closed after \(index + 1) resets")
        }
        try play.reset(try play.get("/r5"))
        #expect(!play.proxy.isActive)
        // Every stream that reached a server was let go.
        #expect(play.servers.opened.allSatisfy { !$0.isActive })
    }
}
