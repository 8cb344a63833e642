import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import KagamiProxy

/// The exchange state machine driven event by event, with no sockets: each path an exchange
/// can take, and the events that must find nothing to do.
@Suite struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    /// Runs one transition outside `#expect`, which can't mutate what it captures.
    func step<T>(_ machine: inout Machine, _ transition: (inout Machine) -> T) -> T { transition(&machine) }

    @Test func streamedRequestAndResponse() {
        var machine = Machine(requestsUpgrade: false)
        #expect(step(&machine) { $0.requestBodyReceived() } == .forward)
        #expect(!machine.isRequestComplete)
        #expect(step(&machine) { $0.requestEndReceived() } == .forward)
        #expect(machine.state == .awaitingResponse)
        #expect(step(&machine) { $0.responseHeadReceived(status: 100, collect: false) } == .relayInformational)
        #expect(machine.state == .awaitingResponse)
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: false) } == .relay)
        #expect(machine.hasResponseStarted)
        #expect(step(&machine) { $0.responseBodyReceived() } == .relay)
        #expect(step(&machine) { $0.responseEndReceived() } == .finish)
        #expect(step(&machine) { $0.finish() })
        #expect(machine.isFinished)
        // Anything late finds a finished exchange.
        #expect(step(&machine) { $0.requestBodyReceived() } == .discard)
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: false) } == .ignore)
        #expect(step(&machine) { $0.responseBodyReceived() } == .ignore)
        #expect(machine.upstreamLost() == .ignore)
    }

    /// A server may answer before the request's body is all read: the body still goes out,
    /// and the connection can't be reused if the exchange ends before the request does.
    @Test func responseBeforeRequestEnds() {
        var machine = Machine(requestsUpgrade: false)
        #expect(step(&machine) { $0.responseHeadReceived(status: 413, collect: false) } == .relay)
        #expect(machine.state == .streamingResponse(requestComplete: false))
        #expect(step(&machine) { $0.requestBodyReceived() } == .forward)
        #expect(step(&machine) { $0.requestEndReceived() } == .forward)
        #expect(machine.state == .streamingResponse(requestComplete: true))

        var early = Machine(requestsUpgrade: false)
        _ = early.responseHeadReceived(status: 413, collect: false)
        #expect(step(&early) { $0.responseEndReceived() } == .finish)
        #expect(step(&early) { $0.finish() } == false)
    }

    @Test func collectedRequestHeldAtBreakpoint() {
        var machine = Machine(requestsUpgrade: false)
        machine.collectRequest()
        #expect(step(&machine) { $0.requestBodyReceived() } == .collect)
        #expect(step(&machine) { $0.requestEndReceived() } == .decideCollected)
        machine.holdAtRequestBreakpoint()
        #expect(machine.state == .heldAtRequestBreakpoint)
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: false) } == .ignore)
        #expect(machine.upstreamLost() == .ignore)
        machine.resumeFromRequestBreakpoint()
        #expect(machine.state == .awaitingResponse)
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: false) } == .relay)
    }

    /// A body too large to collect streams from the point it passed the limit.
    @Test func collectingStopsForALargeBody() {
        var machine = Machine(requestsUpgrade: false)
        machine.collectRequest()
        #expect(step(&machine) { $0.requestBodyReceived() } == .collect)
        machine.stopCollectingRequest()
        #expect(step(&machine) { $0.requestBodyReceived() } == .forward)
        #expect(step(&machine) { $0.requestEndReceived() } == .forward)
    }

    /// A client waiting for a 100 (Continue) sends no body: a local answer goes at once, and
    /// the request, unread, keeps the connection from being reused.
    @Test func localAnswerToAClientWaitingForContinueGoesAtOnce() {
        var machine = Machine(requestsUpgrade: false, expectsContinue: true)
        #expect(step(&machine) { $0.answerLocally() } == .answerNow)
        #expect(step(&machine) { $0.finish() } == false)
    }

    @Test func localAnswerWaitsForTheRequestsEnd() {
        var machine = Machine(requestsUpgrade: false)
        #expect(step(&machine) { $0.answerLocally() } == .waitForRequestEnd)
        #expect(step(&machine) { $0.requestBodyReceived() } == .discard)
        #expect(step(&machine) { $0.requestEndReceived() } == .answerLocally)
        #expect(step(&machine) { $0.answerLocally() } == .answerNow)
    }

    @Test func collectedResponseHeldAtBreakpointThenSent() {
        var machine = Machine(requestsUpgrade: false)
        _ = machine.requestEndReceived()
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: true) } == .collect)
        #expect(!machine.hasResponseStarted)
        #expect(machine.upstreamLost() == .failBeforeResponse)
        #expect(step(&machine) { $0.responseBodyReceived() } == .collect)
        #expect(step(&machine) { $0.responseEndReceived() } == .decideCollected)
        machine.holdAtResponseBreakpoint()
        #expect(machine.state == .heldAtResponseBreakpoint(requestComplete: true))
        #expect(machine.upstreamLost() == .ignore)
        machine.startStreamingResponse()
        #expect(machine.hasResponseStarted)
        #expect(step(&machine) { $0.finish() })
    }

    /// A collected response is decided by the hooks once complete.
    @Test func collectedResponseDecidedWhenComplete() {
        var machine = Machine(requestsUpgrade: false)
        _ = machine.requestEndReceived()
        _ = machine.responseHeadReceived(status: 200, collect: true)
        #expect(step(&machine) { $0.responseEndReceived() } == .decideCollected)
    }

    @Test func upgradeSwitchesOnlyWhenAsked() {
        var machine = Machine(requestsUpgrade: true)
        _ = machine.requestEndReceived()
        #expect(step(&machine) { $0.responseHeadReceived(status: 101, collect: true) } == .upgrade)
        #expect(machine.state == .switchingProtocols)
        #expect(machine.upstreamLost() == .failDuringResponse)
        #expect(step(&machine) { $0.responseEndReceived() } == .switchProtocols)
        #expect(machine.state == .upgraded)
        #expect(machine.isFinished)
        #expect(machine.upstreamLost() == .ignore)
        #expect(step(&machine) { $0.requestBodyReceived() } == .discard)
        var unasked = Machine(requestsUpgrade: false)
        _ = unasked.requestEndReceived()
        #expect(step(&unasked) { $0.responseHeadReceived(status: 101, collect: false) } == .rejectUpgrade)
        // The client's bytes after an unfinished request can't be the new protocol's.
        var unfinished = Machine(requestsUpgrade: true)
        #expect(step(&unfinished) { $0.responseHeadReceived(status: 101, collect: false) } == .rejectUpgrade)
    }

    @Test func requestsUpgradeNeedsConnectionUpgrade() {
        var headers = HTTPHeaders([("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade")])
        #expect(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: headers).requestsUpgrade)
        headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        #expect(!HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: headers).requestsUpgrade)
    }

    /// The 101 goes to the client as the server framed it: no Transfer-Encoding, no `0\r\n\r\n`.
    @Test func switchingProtocolsResponseGetsNoFraming() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ProxyResponseEncoder())
        try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/chat")))
        let head = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
        ])
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        var written = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }
        #expect(String(buffer: written) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        _ = try channel.finish()
    }
}
