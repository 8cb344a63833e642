/// Where one HTTP/1 exchange on a client connection stands, and what to do with each event that
/// reaches it. Pure logic: the `ClientConnectionHandler` feeds it the events it reads (request
/// parts, response parts, closes, decisions of rules and breakpoints) and performs the actions
/// it returns, so an impossible combination (a response collected for a rule while it streams,
/// an exchange finished twice) is not representable, and every path can be driven in a test
/// without sockets.
///
/// The request and the response overlap: a server may answer before the request's body is all
/// sent, so the response states remember whether the request is complete.
struct ExchangeStateMachine: Equatable {
    enum State: Equatable {
        /// Head read; body parts go to the server as they arrive.
        case streamingRequest
        /// Head read; the body is kept whole until its end, for a Rewrite Body rule or a
        /// breakpoint, which decide the request once it is complete.
        case collectingRequest
        /// The rules answered before the request's end: the rest of it is read and dropped,
        /// then the answer goes out.
        case discardingRequest
        /// The whole request is read and waits at a breakpoint for a decision.
        case heldAtRequestBreakpoint
        /// The whole request is read (sent, or on its way); no response head yet.
        case awaitingResponse
        /// The response is kept whole until its end, for a Rewrite Body rule or a breakpoint.
        case collectingResponse(requestComplete: Bool)
        /// The whole response waits at a breakpoint for a decision.
        case heldAtResponseBreakpoint(requestComplete: Bool)
        /// The response head went to the client; body parts follow as they arrive.
        case streamingResponse(requestComplete: Bool)
        /// The server agreed to switch protocols: its 101 went to the client as is; the end of the
        /// 101 (the last HTTP byte on the server connection) is awaited.
        case switchingProtocols
        /// Both connections now carry the other protocol (WebSocket); the relay owns them.
        case upgraded
        case finished
    }

    private(set) var state: State
    /// The request asked to switch protocols (`Connection: upgrade` with `Upgrade:`).
    let requestsUpgrade: Bool
    /// The client waits for a 100 (Continue) before it sends the request's body
    /// (`Expect: 100-continue`, RFC 9110 §10.1.1).
    let expectsContinue: Bool

    init(requestsUpgrade: Bool, expectsContinue: Bool = false) {
        state = .streamingRequest
        self.requestsUpgrade = requestsUpgrade
        self.expectsContinue = expectsContinue
    }

    /// True once the exchange is over as HTTP (finished, or handed to the relay of an upgraded
    /// connection): late callbacks (timers, connects) find nothing to do.
    var isFinished: Bool { state == .finished || state == .upgraded }

    var isRequestComplete: Bool {
        switch state {
        case .streamingRequest, .collectingRequest, .discardingRequest: false
        case .collectingResponse(let complete), .heldAtResponseBreakpoint(let complete), .streamingResponse(let complete): complete
        case .heldAtRequestBreakpoint, .awaitingResponse, .switchingProtocols, .upgraded, .finished: true
        }
    }

    /// True once a response head went to the client: an error can then only close the connection.
    var hasResponseStarted: Bool {
        switch state {
        case .streamingResponse, .switchingProtocols, .upgraded: true
        default: false
        }
    }

    // MARK: Request side

    enum RequestPartAction: Equatable {
        /// Send it to the server (and record it).
        case forward
        /// Keep it with the collected body.
        case collect
        /// Drop it: the request is answered locally or the exchange is over.
        case discard
    }

    mutating func requestBodyReceived() -> RequestPartAction {
        switch state {
        case .streamingRequest, .collectingResponse(requestComplete: false), .streamingResponse(requestComplete: false): .forward
        case .collectingRequest: .collect
        default: .discard
        }
    }

    enum RequestEndAction: Equatable {
        /// Send the end to the server.
        case forward
        /// The collected request is complete: run the rules on it, then hold it at a breakpoint
        /// or send it.
        case decideCollected
        /// Send the answer the rules made.
        case answerLocally
        case ignore
    }

    mutating func requestEndReceived() -> RequestEndAction {
        switch state {
        case .streamingRequest:
            state = .awaitingResponse
            return .forward
        case .collectingRequest:
            state = .awaitingResponse
            return .decideCollected
        case .discardingRequest:
            state = .awaitingResponse
            return .answerLocally
        case .collectingResponse(requestComplete: false):
            state = .collectingResponse(requestComplete: true)
            return .forward
        case .streamingResponse(requestComplete: false):
            state = .streamingResponse(requestComplete: true)
            return .forward
        default:
            return .ignore
        }
    }

    /// A hook needs the whole request before it is decided: the body is kept until its end.
    mutating func collectRequest() {
        if state == .streamingRequest { state = .collectingRequest }
    }

    /// A request body too large to collect streams on from here.
    mutating func stopCollectingRequest() {
        if state == .collectingRequest { state = .streamingRequest }
    }

    enum LocalAnswerAction: Equatable {
        case answerNow
        /// The request is still being read; its end triggers `.answerLocally`.
        case waitForRequestEnd
    }

    /// The rules answer the request themselves (Map Local, Block List 403). A client waiting
    /// for a 100 (Continue) sends no body until it hears from the proxy: it gets the answer at
    /// once, and as its request was not read to the end, the connection closes after it.
    mutating func answerLocally() -> LocalAnswerAction {
        if isRequestComplete || expectsContinue { return .answerNow }
        state = .discardingRequest
        return .waitForRequestEnd
    }

    mutating func holdAtRequestBreakpoint() {
        if state == .awaitingResponse { state = .heldAtRequestBreakpoint }
    }

    mutating func resumeFromRequestBreakpoint() {
        if state == .heldAtRequestBreakpoint { state = .awaitingResponse }
    }

    // MARK: Response side

    enum ResponseHeadAction: Equatable {
        /// A 1xx other than 101: passed on, the real head follows.
        case relayInformational
        /// Keep the response until its end.
        case collect
        /// Run the response-head rules and send the head to the client.
        case relay
        /// 101 to a request that asked for it: send it as is; its end hands both connections over.
        case upgrade
        /// 101 to a request that did not ask to switch protocols.
        case rejectUpgrade
        case ignore
    }

    mutating func responseHeadReceived(status: Int, collect: Bool) -> ResponseHeadAction {
        let requestComplete: Bool
        switch state {
        case .streamingRequest, .collectingRequest: requestComplete = false
        case .awaitingResponse: requestComplete = true
        default: return .ignore
        }
        if status == 101 {
            // Only a request that is complete can switch: after it, the client's bytes are the
            // new protocol's.
            guard requestsUpgrade, requestComplete else { return .rejectUpgrade }
            state = .switchingProtocols
            return .upgrade
        }
        if status >= 100 && status < 200 { return .relayInformational }
        if collect {
            state = .collectingResponse(requestComplete: requestComplete)
            return .collect
        }
        state = .streamingResponse(requestComplete: requestComplete)
        return .relay
    }

    enum ResponsePartAction: Equatable {
        case relay
        case collect
        case ignore
    }

    mutating func responseBodyReceived() -> ResponsePartAction {
        switch state {
        case .streamingResponse: .relay
        case .collectingResponse: .collect
        default: .ignore
        }
    }

    /// A response too large to collect (or held responses sent on): it streams from here.
    mutating func startStreamingResponse() {
        switch state {
        case .collectingResponse(let complete), .heldAtResponseBreakpoint(let complete):
            state = .streamingResponse(requestComplete: complete)
        default:
            break
        }
    }

    enum ResponseEndAction: Equatable {
        case finish
        /// The 101 is complete: stop speaking HTTP on both connections and relay the new protocol.
        case switchProtocols
        /// The collected response is complete: the hooks decide it (rules rewrite it, a
        /// breakpoint holds it), then it goes to the client.
        case decideCollected
        case ignore
    }

    mutating func responseEndReceived() -> ResponseEndAction {
        switch state {
        case .streamingResponse:
            return .finish
        case .switchingProtocols:
            state = .upgraded
            return .switchProtocols
        case .collectingResponse:
            return .decideCollected
        default:
            return .ignore
        }
    }

    mutating func holdAtResponseBreakpoint() {
        if case .collectingResponse(let complete) = state { state = .heldAtResponseBreakpoint(requestComplete: complete) }
    }

    // MARK: Ends

    /// Ends the exchange; returns whether the request had been read completely (if not, the
    /// client connection can't be reused: the rest of the request is unread).
    @discardableResult
    mutating func finish() -> Bool {
        let complete = isRequestComplete
        state = .finished
        return complete
    }

    /// What happens to both connections when an exchange ends with the server's whole response.
    struct Ending: Equatable {
        /// The server connection goes back to the pool for the next exchange; otherwise it is closed.
        var reuseServerConnection: Bool
        /// The client connection is closed once the response's end is written.
        var closeClient: Bool
    }

    /// Ends the exchange after the server's response ended: the server connection is reused only
    /// when the request was all sent, the server keeps it alive and no upgrade was asked for (a
    /// server that did not switch may have stopped parsing at the upgrade request); the client's
    /// is closed when it asked to, or when the rest of its request is still unread.
    mutating func finishResponse(serverKeepsAlive: Bool, clientKeepsAlive: Bool) -> Ending {
        let complete = finish()
        return Ending(reuseServerConnection: complete && serverKeepsAlive && !requestsUpgrade, closeClient: !clientKeepsAlive || !complete)
    }

    /// How the server connection went away, as read from the error: the server closed it (end of
    /// file, reset, broken pipe: what a keep-alive connection it dropped while idle looks like), or
    /// something else failed.
    enum ConnectionLoss: Equatable {
        case closedByServer
        case failed
    }

    /// The server connection the exchange was using, and what sending the request again takes.
    struct ServerAttempt: Equatable {
        /// The connection was pooled from an earlier exchange (the server may have dropped it).
        var reusedConnection: Bool
        /// All of the request sent so far is kept, so it can be sent again.
        var requestKept: Bool
        /// Times the request was sent again already.
        var retries: Int
    }

    /// Times a request is sent again on a fresh connection after a pooled one was found dropped.
    static let maximumRetries = 2

    enum ConnectionLossAction: Equatable {
        /// A pooled connection the server had dropped, before any of the response came back: send
        /// the kept request again on a new connection.
        case retryOnFreshConnection
        /// Nothing went to the client yet: answer with an error page.
        case failBeforeResponse
        /// The status line is out: record the error and close the client connection.
        case failDuringResponse
        /// The exchange no longer uses the server connection.
        case ignore
    }

    /// The server connection failed or closed under the exchange.
    func upstreamLost(_ loss: ConnectionLoss = .failed, attempt: ServerAttempt? = nil) -> ConnectionLossAction {
        switch state {
        case .finished, .heldAtResponseBreakpoint, .heldAtRequestBreakpoint, .upgraded: .ignore
        case .streamingResponse, .switchingProtocols: .failDuringResponse
        case .streamingRequest, .collectingRequest, .awaitingResponse:
            if loss == .closedByServer, let attempt, attempt.reusedConnection, attempt.requestKept, attempt.retries < Self.maximumRetries {
                .retryOnFreshConnection
            } else {
                .failBeforeResponse
            }
        case .discardingRequest, .collectingResponse: .failBeforeResponse
        }
    }

    /// What the response timeout means where the exchange stands.
    enum TimeoutAction: Equatable {
        /// No response head went to the client: answer 504.
        case answerGatewayTimeout
        /// The status line is out: record the error and close the client connection.
        case closeClient
    }

    func responseTimedOut() -> TimeoutAction {
        hasResponseStarted ? .closeClient : .answerGatewayTimeout
    }

    // MARK: The client's side closing

    enum InputClosedAction: Equatable {
        /// Nothing complete to answer, or nobody will decide in time: the connection closes now.
        case closeNow
        /// The request is complete: it is still answered, and the connection closes after the
        /// answer (or when the answer hasn't begun within the half-close timeout).
        case answerThenClose
    }

    /// The client sent all it will: it half-closed (`shutdown(SHUT_WR)` after its request, as
    /// `nc -N` and some HTTP/1.0 clients do) or closed, which look the same on the wire.
    /// `held`: the exchange waits at a breakpoint, where no answer begins before someone decides.
    func clientInputClosed(held: Bool) -> InputClosedAction {
        isRequestComplete && !held && !isFinished ? .answerThenClose : .closeNow
    }
}
