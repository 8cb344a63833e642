import Foundation
import KagamiControl
import KagamiFlow
import NIOCore
import NIOHTTP1
import Testing
@testable import KagamiProxy

/// The exchange's pure parts, driven by values: where a request head goes, the hook list's
/// verdicts in order, what is kept to send again, and which body part is held back.
@Suite struct ExchangePolicyTests {
    // MARK: Where a request goes

    func head(_ uri: String, _ fields: [(String, String)] = [], version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(version: version, method: .GET, uri: uri, headers: HTTPHeaders(fields))
    }

    @Test func aForwardRequestGoesToItsAbsoluteTargetWithHostAndWithoutProxyFields() throws {
        let route = RequestRoute(
            head("http://127.0.0.1:8080/a?b=1", [("Host", "elsewhere"), ("Proxy-Authorization", "Basic eA=="), ("Proxy-Connection", "keep-alive"), ("Accept", "*/*")]),
            mode: .forward, origin: nil)
        guard case .server(let target, let sent, let repeatOf) = route else { Issue.record("\(route)"); return }
        #expect(target == ProxyTarget(scheme: "http", host: "127.0.0.1", port: 8080, path: "/a?b=1"))
        #expect(sent.uri == "/a?b=1")
        #expect(sent.version == .http1_1)
        #expect(sent.headers["host"] == ["127.0.0.1:8080"])
        #expect(!sent.headers.contains(name: "proxy-authorization"))
        #expect(!sent.headers.contains(name: "proxy-connection"))
        #expect(sent.headers["accept"] == ["*/*"])
        #expect(repeatOf == nil)
    }

    @Test func originFormToAForwardProxyIsRefusedWithWhatToSend() {
        guard case .refuse(let status, let message) = RequestRoute(head("/a"), mode: .forward, origin: nil) else {
            Issue.record("not refused"); return
        }
        #expect(status == .badRequest)
        #expect(message.contains("absolute form"))
    }

    /// Host keeps its place among the fields (first, where clients put it), or is put first
    /// when the request had none; a Host naming another server is replaced where it stands.
    @Test func hostKeepsItsPlaceOnTheWayToTheServer() throws {
        let cases: [([(String, String)], [String])] = [
            ([("Host", "127.0.0.1:8080"), ("Accept", "*/*"), ("User-Agent", "curl")], ["Host", "Accept", "User-Agent"]),
            ([("Accept", "*/*"), ("host", "elsewhere"), ("User-Agent", "curl")], ["Accept", "host", "User-Agent"]),
            ([("Accept", "*/*"), ("User-Agent", "curl")], ["Host", "Accept", "User-Agent"]),
            ([("Host", "a"), ("Accept", "*/*"), ("Host", "b")], ["Host", "Accept"]),
        ]
        for (fields, order) in cases {
            guard case .server(_, let sent, _) = RequestRoute(head("http://127.0.0.1:8080/a", fields), mode: .forward, origin: nil) else {
                Issue.record("not sent: \(fields)"); continue
            }
            #expect(sent.headers.map(\.name) == order)
            #expect(sent.headers["host"] == ["127.0.0.1:8080"])
        }
    }

    /// An HTTP/2 stream to a forward proxy names its server in :authority (Host once decoded)
    /// and its path in :path: the standard form, as the absolute form is for HTTP/1.1.
    @Test func anHTTP2StreamGoesToItsAuthority() throws {
        let route = RequestRoute(head("/a?b=1", [("host", "127.0.0.1:8080"), ("accept", "*/*")], version: .http2), mode: .forward, origin: nil)
        guard case .server(let target, let sent, _) = route else { Issue.record("\(route)"); return }
        #expect(target == ProxyTarget(scheme: "http", host: "127.0.0.1", port: 8080, path: "/a?b=1"))
        #expect(sent.uri == "/a?b=1" && sent.version == .http1_1)
        #expect(sent.headers.map(\.name) == ["host", "accept"])
        // Without an authority there is nowhere to send it.
        guard case .refuse(.badRequest, _) = RequestRoute(head("/a", version: .http2), mode: .forward, origin: nil) else {
            Issue.record("a stream without :authority went on"); return
        }
    }

    @Test func httpsInAbsoluteFormWantsATunnelUnlessItIsARepeat() throws {
        guard case .refuse(let status, _) = RequestRoute(head("https://127.0.0.1/"), mode: .forward, origin: nil) else {
            Issue.record("not refused"); return
        }
        #expect(status == .notImplemented)
        let id = UUID()
        let repeated = RequestRoute(head("https://127.0.0.1/", [(Flow.repeatHeaderName, id.uuidString)]), mode: .forward, origin: nil)
        guard case .server(let target, let sent, let repeatOf) = repeated else { Issue.record("\(repeated)"); return }
        #expect(target.scheme == "https")
        #expect(repeatOf == id)
        #expect(!sent.headers.contains(name: Flow.repeatHeaderName))
    }

    @Test func theCertificatePageIsKagamisOwn() {
        #expect(RequestRoute(head("http://\(CertificatePage.host)/"), mode: .forward, origin: nil) == .certificatePage)
    }

    @Test func insideAnInterceptedTunnelAPathIsOnTheTunnelsServerAndHostIsKept() {
        let origin = InterceptedOrigin(scheme: "https", host: "127.0.0.1", port: 8443, tls: nil)
        let route = RequestRoute(head("/feed", [("Host", "api.example.test")]), mode: .forward, origin: origin)
        guard case .server(let target, let sent, _) = route else { Issue.record("\(route)"); return }
        #expect(target == ProxyTarget(scheme: "https", host: "127.0.0.1", port: 8443, path: "/feed"))
        #expect(sent.headers["host"] == ["api.example.test"])
        guard case .refuse(.badRequest, _) = RequestRoute(head("::bad::"), mode: .forward, origin: origin) else {
            Issue.record("a bad target inside a tunnel went on"); return
        }
    }

    @Test func aReverseProxyJoinsItsBasePathAndNamesItsServer() {
        let upstream = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 9000, path: "/v2/")
        let route = RequestRoute(head("/users?x=1", [("Host", "127.0.0.1:8888")]), mode: .reverse(upstream), origin: nil)
        guard case .server(let target, let sent, _) = route else { Issue.record("\(route)"); return }
        #expect(target.path == "/v2/users?x=1")
        #expect(sent.uri == "/v2/users?x=1")
        #expect(sent.headers["host"] == ["127.0.0.1:9000"])
    }

    @Test func http2CookiesAreJoinedIntoOneField() {
        let route = RequestRoute(
            head("http://127.0.0.1/", [("cookie", "a=1"), ("cookie", "b=2")], version: HTTPVersion(major: 2, minor: 0)),
            mode: .forward, origin: nil)
        guard case .server(_, let sent, _) = route else { Issue.record("\(route)"); return }
        #expect(sent.headers["cookie"] == ["a=1; b=2"])
    }

    // MARK: The hook list

    struct Decides: ExchangeHook {
        var onRequest: @Sendable (Exchange) -> RequestDecision = { _ in .proceed }
        var onResponse: @Sendable (Exchange) -> ResponseDecision = { _ in .proceed }
        func request(_ exchange: Exchange) -> RequestDecision { onRequest(exchange) }
        func response(_ exchange: Exchange) -> ResponseDecision { onResponse(exchange) }
    }

    func exchange(_ uri: String = "/a") -> Exchange {
        let target = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 80, path: uri)
        let sent = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: ["Host": "127.0.0.1"])
        let recorder = FlowRecorder(mode: .forward, clientAddress: nil, target: target, head: sent, captureLimit: 1 << 20)
        return Exchange(recorder: recorder, target: target, upstreamHead: sent, clientHead: sent)
    }

    @Test func everyHookLettingTheRequestGoConnects() {
        let hooks = ExchangeHooks(list: [Decides(), Decides()])
        #expect(hooks.runRequest(exchange(), from: 0) == .connect)
    }

    @Test func aChangedRequestIsWhatTheNextHookSees() {
        let changed = Decides(onRequest: { exchange in
            var request = exchange.recorder.flow.request
            request.port = 9999
            request.target = "/b"
            return .send(request)
        })
        let seen = Decides(onRequest: { exchange in
            exchange.target.port == 9999 && exchange.upstreamHead.uri == "/b" ? .proceed : .drop("the change was not seen")
        })
        let exchange = exchange()
        #expect(ExchangeHooks(list: [changed, seen]).runRequest(exchange, from: 0) == .connect)
        #expect(exchange.recorder.flow.request.target == "/b")
    }

    @Test func theFirstHookThatStopsTheRequestDecidesAndNamesItsPlace() {
        let answer = FlowResponse(status: 403, reason: "Forbidden", version: "HTTP/1.1", headers: HeaderFields())
        let never = Decides(onRequest: { _ in .drop("a later hook ran") })
        #expect(ExchangeHooks(list: [Decides(), Decides(onRequest: { _ in .answer(answer) }), never]).runRequest(exchange(), from: 0) == .answer(answer))
        #expect(ExchangeHooks(list: [Decides(), Decides(onRequest: { _ in .holdAtBreakpoint }), never]).runRequest(exchange(), from: 0) == .holdAtBreakpoint(position: 1))
        #expect(ExchangeHooks(list: [Decides(onRequest: { _ in .delay(.milliseconds(30)) }), never]).runRequest(exchange(), from: 0) == .delay(.milliseconds(30), position: 0))
        #expect(ExchangeHooks(list: [Decides(onRequest: { _ in .wait }), never]).runRequest(exchange(), from: 0) == .wait)
        #expect(ExchangeHooks(list: [Decides(onRequest: { _ in .reset("r") }), never]).runRequest(exchange(), from: 0) == .reset("r"))
    }

    @Test func afterAHoldOrADelayTheHooksAfterItGoOn() {
        let hold = Decides(onRequest: { _ in .holdAtBreakpoint })
        let hooks = ExchangeHooks(list: [hold, Decides()])
        #expect(hooks.runRequest(exchange(), from: 0) == .holdAtBreakpoint(position: 0))
        #expect(hooks.runRequest(exchange(), from: 1) == .connect)
    }

    @Test func theResponseHooksReplaceInOrderAndStopAtAHold() throws {
        let exchange = exchange()
        exchange.collectedResponse = (HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "2"]), ByteBuffer(string: "ab"))
        let replacement = FlowResponse(
            status: 201, reason: "Created", version: "HTTP/1.1", headers: HeaderFields([("Content-Length", "2")]), body: FlowBody(data: Data("xyz".utf8)))
        let replace = Decides(onResponse: { _ in .replace(replacement) })
        let seen = Decides(onResponse: { exchange in
            exchange.collectedFlowResponse?.status == 201 ? .holdAtBreakpoint : .resetMidBody("the change was not seen")
        })
        #expect(ExchangeHooks(list: [replace, seen, Decides()]).runResponse(exchange, from: 0) == .holdAtBreakpoint(position: 1))
        let (head, body) = try #require(exchange.collectedResponse)
        #expect(String(buffer: body) == "xyz")
        #expect(head.headers["content-length"] == ["3"])
        #expect(ExchangeHooks(list: [replace, seen, Decides()]).runResponse(exchange, from: 2) == .send)
    }

    // MARK: Breakpoint decisions

    func heldRequest(at since: Date, position: Int) -> Exchange {
        let exchange = exchange()
        exchange.state.collectRequest()
        _ = exchange.state.requestEndReceived()
        exchange.pendingParts = [.end(nil)]
        exchange.state.holdAtRequestBreakpoint()
        exchange.breakpoint.heldID = UUID()
        exchange.breakpoint.heldSince = since
        exchange.breakpoint.hookPosition = position
        exchange.breakpoint.phase = .request
        return exchange
    }

    @Test func anEditedRequestGoesOnFromTheHookAfterTheBreakpointWithTheTimeHeld() {
        let since = Date(timeIntervalSince1970: 1_000)
        let exchange = heldRequest(at: since, position: 2)
        var edited = exchange.recorder.flow.request
        edited.port = 9001
        edited.target = "/edited"
        edited.body = FlowBody(data: Data("{}".utf8))
        #expect(exchange.resolve(.executeRequest(edited), at: since.addingTimeInterval(3)) == .continueRequest(after: 2))
        #expect(exchange.target.port == 9001)
        #expect(exchange.upstreamHead.uri == "/edited")
        #expect(exchange.upstreamHead.headers["content-length"] == ["2"])
        #expect(exchange.upstreamHead.headers["host"] == ["127.0.0.1:9001"])
        #expect(exchange.recorder.flow.timings.heldAtRequest == 3)
        #expect(exchange.recorder.flow.appliedRules.last?.description == "request held 3.0 s, then executed with edits")
        #expect(exchange.breakpoint.heldID == nil)
        #expect(exchange.state.state == .awaitingResponse)
    }

    @Test func anAbortFailsTheExchangeAndACancelGoesOnUnchanged() {
        let since = Date(timeIntervalSince1970: 1_000)
        let aborted = heldRequest(at: since, position: 1)
        #expect(aborted.resolve(.abort, at: since) == .fail(FlowError(.aborted, "aborted at a request breakpoint")))
        let cancelled = heldRequest(at: since, position: 1)
        #expect(cancelled.resolve(.cancel, at: since) == .continueRequest(after: 1))
        #expect(cancelled.upstreamHead.uri == "/a")
    }

    // MARK: What goes to the client

    @Test func aLocalAnswerToAnUnreadRequestSaysItClosesTheConnection() {
        let answer = FlowResponse(status: 200, reason: "OK", headers: HeaderFields([("Content-Length", "2")]), body: FlowBody(data: Data("ok".utf8)))
        let read = exchange().localAnswerHead(answer, requestRead: true)
        #expect(!read.close)
        #expect(!read.head.headers.contains(name: "connection"))
        #expect(read.head.status == .ok)
        let unread = exchange().localAnswerHead(answer, requestRead: false)
        #expect(unread.close)
        #expect(unread.head.headers["connection"] == ["close"])
        let closing = FlowResponse(status: 403, reason: "Forbidden", headers: HeaderFields([("Connection", "close")]))
        #expect(exchange().localAnswerHead(closing, requestRead: true).close)
        let custom = FlowResponse(status: 503, reason: "Down For Maintenance")
        #expect(exchange().localAnswerHead(custom, requestRead: true).head.status.reasonPhrase == "Down For Maintenance")
    }

    @Test func aRelayedHeadSetsWhatTheExchangesEndNeeds() {
        let exchange = exchange()
        let sent = exchange.relaying(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "5", "Connection": "close"]))
        #expect(sent.headers["content-length"] == ["5"])
        // The server's close is passed on: the client's connection ends with this exchange too.
        #expect(!exchange.upstreamKeepAlive)
        #expect(!exchange.clientKeepAlive)
        #expect(exchange.responseBody.remaining == 5)
        #expect(exchange.recorder.flow.response?.status == 200)
        let kept = self.exchange()
        _ = kept.relaying(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Transfer-Encoding": "chunked"]))
        #expect(kept.upstreamKeepAlive && kept.clientKeepAlive)
        #expect(kept.responseBody.remaining == nil)
    }

    @Test func aClientLeavingSaysHowAndWhen() {
        let exchange = exchange()
        #expect(exchange.clientLeft(resetting: nil) == FlowError(.clientDisconnected, "the client closed the connection before the response"))
        #expect(exchange.clientLeft(resetting: .cancel).message == "the client reset the stream (RST_STREAM CANCEL) before the response")
        _ = exchange.state.requestEndReceived()
        _ = exchange.state.responseHeadReceived(status: 200, collect: false)
        #expect(exchange.clientLeft(resetting: nil).message == "the client closed the connection during the response")
    }

    @Test func aSilentServerIsNamedWithTheLimit() {
        let target = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 8080, path: "/")
        #expect(UpstreamFailure.silence(of: target, stalled: false, for: .seconds(30)) == FlowError(.timeout, "no response from 127.0.0.1:8080 within 30 s"))
        #expect(UpstreamFailure.silence(of: target, stalled: true, for: .milliseconds(1500)) == FlowError(.timeout, "127.0.0.1:8080 stopped reading the request for 1500 ms"))
    }

    // MARK: Sending again, holding the last part

    @Test func aSmallRequestIsKeptToSendAgainAndABigOneIsNot() {
        var replay = RequestReplay()
        let head = HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/"))
        replay.sent(head)
        replay.sent(.body(.byteBuffer(ByteBuffer(repeating: 1, count: 1000))))
        replay.sent(.end(nil))
        #expect(replay.isKept)
        let again = replay.takeForRetry()
        #expect(again?.count == 3)
        #expect(replay.retries == 1)
        #expect(replay.parts?.isEmpty == true)

        var big = RequestReplay()
        big.sent(head)
        big.sent(.body(.byteBuffer(ByteBuffer(repeating: 1, count: RequestReplay.maximumBytes + 1))))
        #expect(!big.isKept)
        big.sent(.end(nil))
        #expect(!big.isKept)
        #expect(big.takeForRetry() == nil)
        #expect(big.retries == 0)
    }

    @Test func thePartCompletingADeclaredLengthIsHeldBack() {
        var countdown = ResponseBodyCountdown(remaining: 10)
        #expect(countdown.received(4) == .relay)
        #expect(countdown.received(5) == .relay)
        #expect(countdown.received(1) == .holdAsLast)
        var exact = ResponseBodyCountdown(remaining: 3)
        #expect(exact.received(3) == .holdAsLast)
        var undeclared = ResponseBodyCountdown(remaining: nil)
        #expect(undeclared.received(1 << 20) == .relay)
    }
}
