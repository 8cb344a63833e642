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

    /// A pooled connection found dropped is retried only while nothing of the response came
    /// back, the whole request is kept, the server closed it (not another failure), and at most
    /// twice.
    @Test func aDroppedPooledConnectionIsRetriedOnlyWhileNothingCameBack() {
        let pooled = Machine.ServerAttempt(reusedConnection: true, requestKept: true, retries: 0)
        var machine = Machine(requestsUpgrade: false)
        #expect(machine.upstreamLost(.closedByServer, attempt: pooled) == .retryOnFreshConnection)
        _ = step(&machine) { $0.requestEndReceived() }
        #expect(machine.state == .awaitingResponse)
        #expect(machine.upstreamLost(.closedByServer, attempt: pooled) == .retryOnFreshConnection)
        #expect(machine.upstreamLost(.failed, attempt: pooled) == .failBeforeResponse)
        #expect(machine.upstreamLost(.closedByServer, attempt: nil) == .failBeforeResponse)
        #expect(machine.upstreamLost(.closedByServer, attempt: .init(reusedConnection: false, requestKept: true, retries: 0)) == .failBeforeResponse)
        #expect(machine.upstreamLost(.closedByServer, attempt: .init(reusedConnection: true, requestKept: false, retries: 0)) == .failBeforeResponse)
        #expect(machine.upstreamLost(.closedByServer, attempt: .init(reusedConnection: true, requestKept: true, retries: Machine.maximumRetries)) == .failBeforeResponse)
        // A response head came back (kept whole for a rule): sending the request again could
        // repeat what the server already did.
        #expect(step(&machine) { $0.responseHeadReceived(status: 200, collect: true) } == .collect)
        #expect(machine.upstreamLost(.closedByServer, attempt: pooled) == .failBeforeResponse)
        machine.startStreamingResponse()
        #expect(machine.upstreamLost(.closedByServer, attempt: pooled) == .failDuringResponse)
    }

    /// Both connections at the end of a response: the server's is reused only after a whole
    /// request, kept alive and with no upgrade asked for; the client's is closed when it asked or
    /// its request is still unread.
    @Test(arguments: [
        (true, false, true, true, true, false),
        (true, false, false, true, false, false),
        (true, false, true, false, true, true),
        (true, true, true, true, false, false),
        (false, false, true, true, false, true),
    ])
    func theEndOfAResponseDecidesBothConnections(
        requestComplete: Bool, upgrade: Bool, serverKeepsAlive: Bool, clientKeepsAlive: Bool, reuse: Bool, closeClient: Bool
    ) {
        var machine = Machine(requestsUpgrade: upgrade)
        if requestComplete { _ = step(&machine) { $0.requestEndReceived() } }
        _ = step(&machine) { $0.responseHeadReceived(status: 200, collect: false) }
        let ending = step(&machine) { $0.finishResponse(serverKeepsAlive: serverKeepsAlive, clientKeepsAlive: clientKeepsAlive) }
        #expect(ending == Machine.Ending(reuseServerConnection: reuse, closeClient: closeClient))
        #expect(machine.isFinished)
    }

    @Test func aResponseTimeoutAnswers504UntilTheStatusLineIsOut() {
        var machine = Machine(requestsUpgrade: false)
        _ = step(&machine) { $0.requestEndReceived() }
        #expect(machine.responseTimedOut() == .answerGatewayTimeout)
        _ = step(&machine) { $0.responseHeadReceived(status: 200, collect: true) }
        #expect(machine.responseTimedOut() == .answerGatewayTimeout)
        machine.startStreamingResponse()
        #expect(machine.responseTimedOut() == .closeClient)
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

    @Test func aClientThatClosesItsSideIsAnsweredOnlyWhenItsRequestIsCompleteAndNotHeld() {
        var machine = Machine(requestsUpgrade: false)
        #expect(machine.clientInputClosed(held: false) == .closeNow)
        _ = step(&machine) { $0.requestEndReceived() }
        #expect(machine.clientInputClosed(held: false) == .answerThenClose)
        #expect(machine.clientInputClosed(held: true) == .closeNow)
        _ = step(&machine) { $0.finish() }
        #expect(machine.clientInputClosed(held: false) == .closeNow)
    }
}
