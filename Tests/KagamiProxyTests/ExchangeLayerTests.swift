import Foundation
import KagamiControl
import KagamiFlow
import KagamiRules
import NIOCore
import NIOHTTP1
import Testing
@testable import KagamiProxy

/// The exchange as a layer without I/O: events in (parts from the client and the server, hook
/// verdicts, breakpoint decisions, timers, a lost server), the commands the connection carries
/// out come back, in order. No channel, no clock but the values passed in.
@Suite struct ExchangeLayerTests {
    struct Decides: ExchangeHook {
        var onRequestHead: @Sendable (Exchange) -> Bool = { _ in false }
        var onRequest: @Sendable (Exchange) -> RequestDecision = { _ in .proceed }
        var wholeResponse = false
        var onResponse: @Sendable (Exchange) -> ResponseDecision = { _ in .proceed }
        func requestHead(_ exchange: Exchange) -> Bool { onRequestHead(exchange) }
        func request(_ exchange: Exchange) -> RequestDecision { onRequest(exchange) }
        func needsWholeResponse(_ exchange: Exchange) -> Bool { wholeResponse }
        func response(_ exchange: Exchange) -> ResponseDecision { onResponse(exchange) }
    }

    static let timeouts = ExchangeTimeouts(connect: .seconds(3), response: .seconds(7), clientHalfClose: .seconds(2))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func exchange(_ fields: [(String, String)] = [], method: HTTPMethod = .GET, version: HTTPVersion = .http1_1, clock: @escaping () -> Date = { ExchangeLayerTests.start }) -> Exchange {
        let target = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 80, path: "/a")
        let head = HTTPRequestHead(version: version, method: method, uri: "/a", headers: HTTPHeaders([("Host", "127.0.0.1")] + fields))
        let recorder = FlowRecorder(mode: .forward, clientAddress: nil, target: target, head: head, captureLimit: 1 << 20)
        return Exchange(recorder: recorder, target: target, upstreamHead: head, clientHead: head, timeouts: Self.timeouts, wallClock: clock)
    }

    func response(_ status: HTTPResponseStatus = .ok, _ fields: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    /// The commands in words, for comparing whole sequences.
    static func said(_ commands: [ExchangeCommand]) -> [String] {
        commands.map { command in
            switch command {
            case .toClient(.head(let head)): "client: head \(head.status.code)"
            case .toClient(.body(let body)): "client: body \(body.readableBytes)"
            case .toClient(.end): "client: end"
            case .flushClient: "client: flush"
            case .endResponse(_, let close): close ? "client: end, close" : "client: end"
            case .answer(let head, _, let close, _): "client: answer \(head.status.code)\(close ? ", close" : "")"
            case .pauseServerWhileClientIsFull: "server: pause while client full"
            case .pauseClientReads: "client: pause reads"
            case .resumeClientReads: "client: resume reads"
            case .closeClient: "client: close"
            case .resetClient: "client: reset"
            case .toServer(.head): "server: head"
            case .toServer(.body(let body)): "server: body \(body.readableBytes)"
            case .toServer(.end): "server: end"
            case .endRequest: "server: end"
            case .flushServer: "server: flush"
            case .shapeServer(let profile): profile == nil ? "server: unshaped" : "server: shaped"
            case .pauseClientWhileServerIsFull: "client: pause while server full"
            case .resumeClientReadsUnlessServerIsFull: "client: resume reads unless server full"
            case .connectServer: "server: connect"
            case .letServerGo(let reuse): reuse ? "server: to the pool" : "server: close"
            case .startResponseTimer: "timer: response"
            case .switchProtocols: "switch protocols"
            case .after(let delay, let timer): "after \(delay.nanoseconds / 1_000_000) ms: \(timer)"
            case .when(_, let timer): "when done: \(timer)"
            case .ended: "ended"
            case .record(let flow, let then):
                "record \(flow.response.map { String($0.status) } ?? "-") \(flow.error.map { $0.kind.rawValue } ?? "ok")"
                    + (then.isEmpty ? "" : ", then [\(said(then).joined(separator: "; "))]")
            case .hold(let held): "hold \(held.phase.rawValue)"
            case .releaseHold: "release hold"
            }
        }
    }

    let now = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aStreamedResponseHoldsItsLastPartUntilTheSessionKeepsIt() {
        let exchange = exchange()
        let hooks = ExchangeHooks(list: [Decides()])
        #expect(Self.said(exchange.begin(hooks: hooks)) == ["client: pause reads", "server: connect"])
        #expect(Self.said(exchange.serverConnected(ServerConnectionFacts(remoteAddress: "127.0.0.1:80", isReused: false), now: now)) == [
            "server: unshaped", "server: head", "server: flush", "client: resume reads unless server full",
        ])
        // Once the request is out, the server's silence counts.
        #expect(Self.said(exchange.clientSentEnd(nil, hooks: hooks, now: now)) == ["server: end", "timer: response"])
        #expect(exchange.timeoutDeadline == now + .seconds(7))
        #expect(Self.said(exchange.serverSentHead(response(.ok, [("Content-Length", "8")]), tls: nil, hooks: hooks, now: now)) == [
            "timer: response", "client: head 200",
        ])
        #expect(Self.said(exchange.serverSentBody(ByteBuffer(string: "abcde"), now: now + .seconds(1))) == [
            "timer: response", "client: body 5", "server: pause while client full",
        ])
        #expect(exchange.timeoutDeadline == now + .seconds(8))
        // The part that completes the declared length waits for the session.
        #expect(Self.said(exchange.serverSentBody(ByteBuffer(string: "fgh"), now: now)) == ["timer: response"])
        #expect(Self.said(exchange.serverSentEnd(nil, hooks: hooks, now: now)) == [
            "timer: response", "ended", "server: to the pool", "record 200 ok, then [client: body 3; client: end]", "client: resume reads",
        ])
        #expect(exchange.state.isFinished)
        #expect(exchange.timeoutDeadline == nil)
    }

    @Test func partsBeforeTheServerConnectionWaitForItAndGoAgainWhenAPooledOneDropped() {
        let exchange = exchange([("Content-Length", "3")], method: .POST)
        let hooks = ExchangeHooks(list: [Decides()])
        _ = exchange.begin(hooks: hooks)
        #expect(exchange.clientSentBody(ByteBuffer(string: "abc"), hooks: hooks, now: now).isEmpty)
        #expect(exchange.clientSentEnd(nil, hooks: hooks, now: now).isEmpty)
        #expect(exchange.pendingParts.count == 2)
        #expect(Self.said(exchange.serverConnected(ServerConnectionFacts(isReused: true), now: now)) == [
            "server: unshaped", "server: head", "server: body 3", "client: pause while server full", "server: end",
            "timer: response", "server: flush", "client: resume reads unless server full",
        ])
        #expect(exchange.pendingParts.isEmpty)
        // The pooled connection turns out closed before any answer: the request goes again on a fresh one.
        #expect(Self.said(exchange.serverLost(ChannelError.eof, hooks: hooks)) == ["server: close", "server: connect"])
        #expect(exchange.timeoutDeadline == nil)
        #expect(exchange.pendingParts.count == 2)
        #expect(Self.said(exchange.serverConnected(ServerConnectionFacts(isReused: false), now: now)).contains("server: body 3"))
        // A fresh connection that drops is not tried again.
        #expect(Self.said(exchange.serverLost(ChannelError.eof, hooks: hooks)).contains { $0.hasPrefix("record 502") })
    }

    @Test func aClientThatDoesNotKeepAliveIsClosedOnceTheEndIsOut() {
        let exchange = exchange([("Connection", "close")])
        let hooks = ExchangeHooks(list: [])
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        _ = exchange.serverSentHead(response(.noContent, [("Content-Length", "0")]), tls: nil, hooks: hooks, now: now)
        #expect(Self.said(exchange.serverSentEnd(nil, hooks: hooks, now: now)).contains("record 204 ok, then [client: end, close]"))
    }

    @Test func aServerSilentPastItsTimeoutGetsTheClientA504() {
        let exchange = exchange()
        let hooks = ExchangeHooks(list: [])
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        #expect(Self.said(exchange.responseTimedOut()) == ["server: close", "ended", "record 504 timeout, then [client: answer 504]"])
        // Once the answer began, the status line is out: the client is closed instead.
        let streaming = self.exchange()
        _ = streaming.begin(hooks: hooks)
        _ = streaming.clientSentEnd(nil, hooks: hooks, now: now)
        _ = streaming.serverSentHead(response(.ok), tls: nil, hooks: hooks, now: now)
        #expect(Self.said(streaming.responseTimedOut()) == ["server: close", "ended", "record 200 timeout", "client: close"])
    }

    @Test func aServerLostDuringTheResponseClosesTheClient() {
        let exchange = exchange()
        let hooks = ExchangeHooks(list: [])
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        _ = exchange.serverSentHead(response(.ok, [("Content-Length", "10")]), tls: nil, hooks: hooks, now: now)
        _ = exchange.serverSentBody(ByteBuffer(string: "abc"), now: now)
        let said = Self.said(exchange.serverLost(ChannelError.eof, hooks: hooks))
        #expect(said.first == "server: close")
        #expect(said.last == "client: close")
        #expect(said.contains { $0.hasPrefix("record 200 ") && !$0.hasSuffix(" ok") })
        // Before any answer, with no pooled connection to retry on: a 502 page.
        let early = self.exchange()
        _ = early.begin(hooks: hooks)
        _ = early.clientSentEnd(nil, hooks: hooks, now: now)
        let refused = Self.said(early.serverLost(IOError(errnoCode: ECONNREFUSED, reason: "connect"), hooks: hooks))
        #expect(refused.count == 3)
        #expect(refused.last?.hasPrefix("record 502") == true)
    }

    @Test func aClientThatHalfClosesAfterItsRequestIsStillAnsweredButNotWaitedForLong() {
        let exchange = exchange()
        let hooks = ExchangeHooks(list: [])
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        #expect(Self.said(exchange.clientInputClosed()) == ["after 2000 ms: clientHalfClosed"])
        #expect(!exchange.clientKeepAlive)
        #expect(Self.said(exchange.timerFired(.clientHalfClosed, hooks: hooks)) == ["client: close"])
        _ = exchange.serverSentHead(response(.ok), tls: nil, hooks: hooks, now: now)
        #expect(exchange.timerFired(.clientHalfClosed, hooks: hooks).isEmpty)
        // A client that leaves mid-request is closed at once.
        let leaving = self.exchange([("Content-Length", "10")], method: .POST)
        _ = leaving.begin(hooks: hooks)
        #expect(Self.said(leaving.clientInputClosed()) == ["client: close"])
    }

    @Test func aHookCollectingTheRequestAnswers100ContinueItself() {
        let exchange = exchange([("Expect", "100-continue"), ("Content-Length", "3")], method: .POST)
        let hooks = ExchangeHooks(list: [Decides(onRequestHead: { _ in true })])
        #expect(Self.said(exchange.begin(hooks: hooks)) == ["client: head 100", "client: flush"])
        #expect(!exchange.upstreamHead.headers.contains(name: "expect"))
        #expect(exchange.clientSentBody(ByteBuffer(string: "abc"), hooks: hooks, now: now).isEmpty)
        #expect(Self.said(exchange.clientSentEnd(nil, hooks: hooks, now: now)) == ["client: pause reads", "server: connect"])
        #expect(exchange.pendingParts.count == 2)
    }

    @Test func aLocalAnswerWaitsForThrottlingsLatencyThenIsRecordedBeforeItIsWritten() {
        let exchange = exchange()
        exchange.throttle = ThrottleProfile(name: "slow", downloadKbps: 0, uploadKbps: 0, latencyMs: 250)
        let answer = FlowResponse(status: 403, reason: "Forbidden", version: "HTTP/1.1", headers: HeaderFields())
        let hooks = ExchangeHooks(list: [Decides(onRequest: { _ in .answer(answer) })])
        // Decided at the head, the answer waits for the request's end.
        #expect(exchange.begin(hooks: hooks).isEmpty)
        let waiting = Self.said(exchange.clientSentEnd(nil, hooks: hooks, now: now))
        #expect(waiting.count == 2)
        #expect(waiting.last?.hasPrefix("after 250 ms: answer") == true)
        #expect(Self.said(exchange.timerFired(.answer(answer), hooks: hooks)) == ["ended", "record 403 ok, then [client: answer 403]"])
        #expect(exchange.timerFired(.answer(answer), hooks: hooks).isEmpty)
    }

    @Test func aStoreBehindTheTrafficHoldsTheRequestBeforeItGoesOut() {
        struct Behind: ExchangeHook { var isBehind: Bool { true } }
        let exchange = exchange()
        let hooks = ExchangeHooks(list: [Behind()])
        #expect(Self.said(exchange.begin(hooks: hooks)) == ["client: pause reads", "client: pause reads", "after 2 ms: connect"])
        #expect(Self.said(exchange.timerFired(.connect, hooks: ExchangeHooks(list: []))) == ["server: connect"])
    }

    @Test func aRequestHeldAtABreakpointGoesOnEditedOrIsAbortedWithTheTimeItWasHeld() {
        var clock = Self.start
        let hooks = ExchangeHooks(list: [Decides(onRequestHead: { _ in true }, onRequest: { $0.breakpoint.heldID == nil && $0.breakpoint.hookPosition == 0 ? .holdAtBreakpoint : .proceed }), Decides()])
        let exchange = exchange([("Content-Length", "2")], method: .POST, clock: { clock })
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentBody(ByteBuffer(string: "hi"), hooks: hooks, now: now)
        let held = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        #expect(Self.said(held) == ["client: pause reads", "hold request"])
        guard case .hold(let holding) = held.last else { return }
        #expect(holding.request.body.data == Data("hi".utf8))
        #expect(holding.heldAt == Self.start)
        // A decision about another hold changes nothing.
        #expect(exchange.resolved(.cancel, id: UUID(), hooks: hooks).isEmpty)
        clock = Self.start.addingTimeInterval(1.5)
        var edited = holding.request
        edited.body = FlowBody(data: Data("edited".utf8))
        #expect(Self.said(exchange.resolved(.executeRequest(edited), id: holding.id, hooks: hooks)) == ["client: pause reads", "server: connect"])
        #expect(exchange.upstreamHead.headers["content-length"] == ["6"])
        #expect(exchange.recorder.flow.timings.heldAtRequest == 1.5)

        let aborted = self.exchange(clock: { clock })
        _ = aborted.begin(hooks: hooks)
        let abortHeld = aborted.clientSentEnd(nil, hooks: hooks, now: now)
        guard case .hold(let second) = abortHeld.last else { Issue.record("not held: \(Self.said(abortHeld))"); return }
        #expect(Self.said(aborted.resolved(.abort, id: second.id, hooks: hooks)) == ["ended", "record 502 aborted, then [client: answer 502]"])
    }

    @Test func aResponseHeldAtABreakpointLetsTheServerGoWhileTheClientWaits() {
        let hooks = ExchangeHooks(list: [Decides(wholeResponse: true, onResponse: { $0.breakpoint.heldID == nil && $0.breakpoint.phase == .request ? .holdAtBreakpoint : .proceed })])
        let exchange = exchange()
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        #expect(Self.said(exchange.serverSentHead(response(.ok, [("Content-Length", "4")]), tls: nil, hooks: hooks, now: now)) == ["timer: response"])
        _ = exchange.serverSentBody(ByteBuffer(string: "body"), now: now)
        let held = exchange.serverSentEnd(nil, hooks: hooks, now: now)
        #expect(Self.said(held) == ["timer: response", "server: to the pool", "hold response"])
        #expect(exchange.timeoutDeadline == nil)
        guard case .hold(let holding) = held.last else { return }
        var edited = try? #require(holding.response)
        edited?.body = FlowBody(data: Data("changed".utf8))
        let resolved = exchange.resolved(.executeResponse(edited!), id: holding.id, hooks: hooks)
        #expect(Self.said(resolved) == ["client: head 200", "ended", "server: to the pool", "record 200 ok, then [client: body 7; client: end]", "client: resume reads"])
        guard case .toClient(.head(let sent)) = resolved.first else { return }
        #expect(sent.headers["content-length"] == ["7"])
    }

    @Test func aResponseResetMidBodySendsHalfThenResets() {
        let hooks = ExchangeHooks(list: [Decides(wholeResponse: true, onResponse: { _ in .resetMidBody("scenario") })])
        let exchange = exchange()
        _ = exchange.begin(hooks: hooks)
        _ = exchange.clientSentEnd(nil, hooks: hooks, now: now)
        _ = exchange.serverSentHead(response(.ok, [("Content-Length", "10")]), tls: nil, hooks: hooks, now: now)
        _ = exchange.serverSentBody(ByteBuffer(string: "0123456789"), now: now)
        #expect(Self.said(exchange.serverSentEnd(nil, hooks: hooks, now: now)) == [
            "timer: response", "server: close", "client: head 200", "client: body 5", "client: flush", "ended", "record 200 connectionReset", "client: reset",
        ])
    }

    @Test func aClientLeavingAHeldExchangeReleasesTheHold() {
        let hooks = ExchangeHooks(list: [Decides(onRequest: { _ in .holdAtBreakpoint })])
        let exchange = exchange()
        _ = exchange.begin(hooks: hooks)
        let (commands, error) = exchange.clientClosed(resetting: nil)
        #expect(Self.said(commands) == ["ended", "release hold", "server: close"])
        #expect(error.kind == .clientDisconnected)
        #expect(exchange.state.isFinished)
    }

    @Test func aDropAndAResetEndTheExchangeWithoutAnAnswer() {
        let dropped = exchange()
        #expect(Self.said(dropped.begin(hooks: ExchangeHooks(list: [Decides(onRequest: { _ in .drop("blocked") })]))) == ["ended", "record - aborted", "client: close"])
        let reset = exchange()
        #expect(Self.said(reset.begin(hooks: ExchangeHooks(list: [Decides(onRequest: { _ in .reset("offline") })]))) == ["ended", "record - connectionReset", "client: reset"])
    }
}
