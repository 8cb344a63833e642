import KagamiControl
import Foundation
import KagamiRules
import KagamiFlow
import NIOCore
import NIOHTTP1

/// What the connection does for an exchange, in order. Each event of an exchange (a part from
/// the client or the server, a hook list's verdict, a breakpoint's decision, a timer, the
/// server lost) goes to `Exchange`, which decides and returns these; the client connection's
/// handler carries them out and decides nothing itself.
/// Cases with large payloads (a flow, an answer, a held exchange) are boxed: commands go through
/// arrays on every exchange, and a command is as large as its largest case.
enum ExchangeCommand {
    // MARK: The client's side

    /// A part to the client, flushed with the next flush (or the end of the read).
    case toClient(HTTPServerResponsePart)
    case flushClient
    /// The response's end to the client, flushed; the connection closes once it is out when
    /// `close`, and the client's next request is read otherwise.
    case endResponse(HTTPHeaders?, close: Bool)
    /// Kagami's own answer (an error page, a Map Local file, a 403): head, body and end,
    /// written as the server's would be under `shaping`; the connection closes once it is out
    /// when `close`.
    indirect case answer(HTTPResponseHead, ByteBuffer, close: Bool, shaping: ThrottleProfile?)
    /// The client's connection can take no more: the server is not read until it can.
    case pauseServerWhileClientIsFull
    case pauseClientReads
    case resumeClientReads
    /// Closes the client connection now (what it was not sent, it won't be).
    case closeClient
    /// Resets the client connection (TCP RST; on an HTTP/2 stream, RST_STREAM).
    case resetClient

    // MARK: The server's side

    /// A part of the request to the server (the exchange sends none before it has one).
    case toServer(HTTPClientRequestPart)
    /// The request's end to the server, flushed; the exchange is told when it has left
    /// (`Exchange.requestLeft`).
    case endRequest(HTTPHeaders?)
    case flushServer
    /// The server connection is shaped by this throttling profile (nil: not shaped).
    case shapeServer(ThrottleProfile?)
    /// The server's connection can take no more: the client is not read until it can, and the
    /// server's not reading counts as its silence.
    case pauseClientWhileServerIsFull
    case resumeClientReadsUnlessServerIsFull
    /// A server connection for the exchange's target, from the pool.
    case connectServer
    /// The server connection leaves the exchange: back to the pool when `reuse`, else closed.
    case letServerGo(reuse: Bool)
    /// The exchange's `timeoutDeadline` moved: the response timer follows it.
    case startResponseTimer
    /// The server answered 101 to an upgrade and its side of it is complete: both
    /// connections leave HTTP for a relay.
    case switchProtocols(HTTPResponseHead)

    // MARK: Time, the session, the breakpoints

    /// This timer fires after this long, unless the exchange is over by then.
    case after(TimeAmount, ExchangeTimer)
    /// This timer fires once the work is done, unless the exchange is over by then.
    case when(HookWait, ExchangeTimer)
    /// The exchange is over on this connection: it waits for its next request.
    case ended
    /// The flow goes to the hooks' end (the session keeps it); `then` is carried out once it
    /// is kept, so a client never sees an exchange complete that a crash could lose.
    indirect case record(Flow, then: [ExchangeCommand])
    /// The exchange waits at a breakpoint until the breakpoints decide.
    indirect case hold(HeldExchange)
    /// Nobody waits for a decision about this held exchange any longer.
    case releaseHold(UUID)
}

/// What an exchange is told about the server connection the pool gave it.
struct ServerConnectionFacts: Equatable {
    var remoteAddress: String? = nil
    /// How long a new connection's TLS handshake took.
    var tlsHandshake: TimeAmount? = nil
    var isReused: Bool
}

/// A timer an exchange set (`ExchangeCommand.after`, `.when`).
enum ExchangeTimer: Equatable {
    /// Throttling's latency passed (or what a hook waited for is done): the request hooks go
    /// on from this position.
    case requestHooks(from: Int)
    /// Throttling's latency passed: the local answer goes out.
    indirect case answer(FlowResponse)
    /// The session may have caught up: the server connection is asked for again.
    case connect
    /// The client closed its side and the answer did not begin in time.
    case clientHalfClosed
}

/// The timeouts an exchange runs under.
struct ExchangeTimeouts: Equatable {
    var connect: TimeAmount
    /// How long the server may stay silent once the request is sent (or stop reading it).
    var response: TimeAmount
    /// How long the answer may take to begin once the client closed its side.
    var clientHalfClose: TimeAmount

    static let standard = ExchangeTimeouts(connect: .seconds(10), response: .seconds(60), clientHalfClose: .seconds(10))
}
