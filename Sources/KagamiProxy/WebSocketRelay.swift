import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// What Kagami does with one WebSocket connection once it switched: each direction's bytes go
/// through a `WebSocketMessageReader`, which passes them on and reads the messages out of them.
/// The handshake is recorded as a flow when the connection switches, each message as it
/// passes (handed to the hooks once per read, so the session writes them in batches behind
/// the flow), and the flow again when both sides have closed (its end, and any rule a peer
/// broke).
///
/// The message tools act on whole data messages: a message some tool may act on is kept
/// back until the tools have seen it (Rewrite Body rules change its text, a breakpoint holds
/// it until the admin API decides), and messages the admin API injects go in between
/// messages. While a message of one direction waits, that direction stops reading and what
/// it had read waits behind it, so messages keep their order.
final class WebSocketRelay {
    private var recorder: FlowRecorder?
    private let hooks: ExchangeHooks
    let flowID: UUID
    private let eventLoop: any EventLoop
    private let captureLimit: Int
    private var sent: WebSocketMessageReader
    private var received: WebSocketMessageReader
    private var pending: [WebSocketMessage] = []
    /// Pings and pongs past the first `keptControlMessages` of a direction: counted, not kept
    /// one row each, so a ping flood can't grow the session without bound.
    private var uncountedControl: [WebSocketMessage.Direction: (count: Int, bytes: Int, last: WebSocketMessage)] = [:]
    private var controlMessages: [WebSocketMessage.Direction: Int] = [:]
    static let keptControlMessages = 20
    private var failure: FlowError?
    private let tools: [any WebSocketMessageTool]
    private let live: LiveWebSockets
    /// What waits behind a held message, per direction.
    private var waiting: [WebSocketMessage.Direction: [Step]] = [:]
    /// The message of that direction a tool holds.
    private var holding: [WebSocketMessage.Direction: WebSocketMessage] = [:]
    /// Messages the admin API injected, waiting for a gap between messages.
    private var injections: [WebSocketMessage.Direction: [WebSocketMessage]] = [:]
    /// Where each direction's bytes go: the handler writing to the peer that receives them.
    var passOn: (ByteBuffer, WebSocketMessage.Direction, _ flush: Bool) -> Void = { _, _, _ in }
    /// Lets a direction read again once what it waited for went on.
    var resumeReading: (WebSocketMessage.Direction) -> Void = { _ in }

    private enum Step {
        case output(WebSocketMessageReader.Output, in: ByteBuffer)
        case read(ByteBuffer)
    }

    /// Nil unless the 101 switched to WebSocket (another protocol is relayed without capture).
    init?(
        recorder: FlowRecorder, response: HTTPResponseHead, hooks: ExchangeHooks, tools: @autoclosure () -> [any WebSocketMessageTool],
        captureLimit: Int, live: LiveWebSockets, eventLoop: any EventLoop
    ) {
        guard response.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else { return nil }
        let extensions = WebSocketExtensions(response.headers[canonicalForm: "sec-websocket-extensions"].joined(separator: ","))
        self.recorder = recorder
        self.hooks = hooks
        flowID = recorder.flow.id
        self.eventLoop = eventLoop
        self.live = live
        self.captureLimit = captureLimit
        sent = WebSocketMessageReader(.init(
            direction: .send, captureLimit: captureLimit, deflate: extensions.deflate,
            noContextTakeover: extensions.clientNoContextTakeover, unknownExtensions: extensions.unknown))
        received = WebSocketMessageReader(.init(
            direction: .receive, captureLimit: captureLimit, deflate: extensions.deflate,
            noContextTakeover: extensions.serverNoContextTakeover, unknownExtensions: extensions.unknown))
        self.tools = tools()
        // The handshake first: the messages that follow belong to a flow the store already has.
        hooks.upgraded(recorder.inProgress)
        let relay = NIOLoopBound(self, eventLoop: eventLoop)
        live.open(flowID) { message in
            eventLoop.submit { try relay.value.inject(message) }
        }
    }

    /// The relay of the WebSocket an exchange switched to, with the hooks' message tools.
    convenience init?(exchange: Exchange, response: HTTPResponseHead, settings: ConnectionContext, eventLoop: any EventLoop) {
        self.init(
            recorder: exchange.recorder, response: response, hooks: settings.hooks,
            tools: settings.hooks.messageTools(for: exchange, on: eventLoop),
            captureLimit: settings.captureLimit, live: settings.webSockets, eventLoop: eventLoop)
    }

    // MARK: Reading

    func read(_ buffer: ByteBuffer, from direction: WebSocketMessage.Direction) {
        if waiting[direction] != nil {
            waiting[direction]?.append(.read(buffer))
            return
        }
        process(buffer, from: direction)
    }

    /// True while a message of that direction waits for a decision: it reads no more.
    func isWaiting(_ direction: WebSocketMessage.Direction) -> Bool {
        waiting[direction] != nil
    }

    private func process(_ buffer: ByteBuffer, from direction: WebSocketMessage.Direction) {
        var outputs: [WebSocketMessageReader.Output] = []
        let now = Date()
        buffer.withUnsafeReadableBytes { bytes in
            switch direction {
            case .send:
                sent.read(bytes, at: now, mayHold: { mayHold(.send) }, hold: { self.mayAct(on: $0, going: .send) }, into: &outputs)
                if failure == nil, let error = sent.failure { noteFailure(error, by: "client") }
            case .receive:
                received.read(bytes, at: now, mayHold: { mayHold(.receive) }, hold: { self.mayAct(on: $0, going: .receive) }, into: &outputs)
                if failure == nil, let error = received.failure { noteFailure(error, by: "server") }
            }
        }
        var steps = outputs.map { Step.output($0, in: buffer) }[...]
        perform(&steps, going: direction)
    }

    private func mayAct(on opcode: WebSocketMessage.Opcode, going direction: WebSocketMessage.Direction) -> Bool {
        tools.contains { $0.mayAct(on: opcode, going: direction) }
    }

    private func mayHold(_ direction: WebSocketMessage.Direction) -> Bool {
        mayAct(on: .text, going: direction) || mayAct(on: .binary, going: direction)
    }

    /// Acts on what was read, in order, until a message is held; the rest waits behind it.
    private func perform(_ steps: inout ArraySlice<Step>, going direction: WebSocketMessage.Direction) {
        while let step = steps.popFirst() {
            switch step {
            case .read(let buffer):
                process(buffer, from: direction)
                if waiting[direction] != nil {
                    waiting[direction]?.append(contentsOf: steps)
                    return
                }
            case .output(.forward(let range), let buffer):
                if let slice = buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count) {
                    passOn(slice, direction, false)
                }
            case .output(.bytes(let bytes), _):
                passOn(bytes, direction, false)
            case .output(.passed(let message), _):
                keep(message)
            case .output(.held(let message), _):
                if !runTools(on: message, from: 0) {
                    waiting[direction] = Array(steps)
                    return
                }
            }
        }
        deliverInjections(going: direction)
    }

    /// Runs the tools from `first` on a held message; false when one of them holds it.
    private func runTools(on message: WebSocketMessage, from first: Int) -> Bool {
        var message = message
        let relay = NIOLoopBound(self, eventLoop: eventLoop)
        let direction = message.direction
        for index in tools.indices.dropFirst(first) {
            let outcome = tools[index].act(on: &message) { decided in
                relay.value.resume(direction, with: decided, after: index)
            }
            if outcome == .stop {
                holding[direction] = message
                return false
            }
        }
        send(message)
        return true
    }

    /// A tool decided on a held message (nil: drop it): the other tools go on, then what
    /// waited behind it. Called on the event loop.
    private func resume(_ direction: WebSocketMessage.Direction, with decided: WebSocketMessage?, after tool: Int) {
        guard let held = holding.removeValue(forKey: direction) else { return }
        if let decided {
            guard runTools(on: decided, from: tool + 1) else { return }
        } else {
            var dropped = held
            dropped.addNote("dropped at a breakpoint")
            record(dropped)
        }
        var steps = (waiting.removeValue(forKey: direction) ?? [])[...]
        perform(&steps, going: direction)
        flush()
        passOn(ByteBuffer(), direction, true)
        if waiting[direction] == nil { resumeReading(direction) }
    }

    /// Sends a whole message in a frame of Kagami's own, uncompressed, and records it.
    private func send(_ message: WebSocketMessage) {
        passOn(WebSocketFrameWriter.frame(
            opcode: message.opcode.rawValue, fin: true, payload: message.data, masked: message.direction == .send), message.direction, false)
        record(message)
    }

    private func record(_ message: WebSocketMessage) {
        var message = message
        if message.data.count > captureLimit {
            message.data = message.data.prefix(captureLimit)
            message.isTruncated = true
        }
        keep(message)
    }

    /// Adds a message to those the session keeps, but for pings and pongs beyond the first few
    /// of their direction, which are counted into one summary kept when the connection ends.
    private func keep(_ message: WebSocketMessage) {
        guard message.opcode == .ping || message.opcode == .pong else {
            pending.append(message)
            return
        }
        let seen = controlMessages[message.direction, default: 0] + 1
        controlMessages[message.direction] = seen
        if seen <= Self.keptControlMessages {
            pending.append(message)
        } else {
            let counted = uncountedControl[message.direction]
            uncountedControl[message.direction] = ((counted?.count ?? 0) + 1, (counted?.bytes ?? 0) + message.size, message)
        }
    }

    /// One message per direction standing for the pings and pongs counted but not kept: the
    /// last of them, its note saying how many there were.
    private func summariseControlMessages() {
        for direction in [WebSocketMessage.Direction.send, .receive] {
            guard let counted = uncountedControl.removeValue(forKey: direction) else { continue }
            var summary = counted.last
            summary.size = counted.bytes
            summary.addNote("the last of \(counted.count) more pings and pongs this way (\(counted.bytes) payload bytes), counted but not kept one by one")
            pending.append(summary)
        }
    }

    // MARK: Injecting

    /// A message of Kagami's own, sent at the next gap between messages going its way.
    func inject(_ message: WebSocketMessage) throws(WebSocketInjectionError) {
        let reader = message.direction == .send ? sent : received
        guard !reader.closed else { throw .closed(message.direction) }
        var message = message
        message.note = "injected"
        injections[message.direction, default: []].append(message)
        deliverInjections(going: message.direction)
        flush()
        passOn(ByteBuffer(), message.direction, true)
    }

    private func deliverInjections(going direction: WebSocketMessage.Direction) {
        guard let queued = injections[direction], !queued.isEmpty, waiting[direction] == nil else { return }
        let reader = direction == .send ? sent : received
        guard reader.isBetweenMessages else { return }
        injections[direction] = nil
        for message in queued { send(message) }
    }

    // MARK: Recording

    private func noteFailure(_ error: WebSocketProtocolError, by peer: String) {
        failure = FlowError(.badResponse, "WebSocket: the \(peer) broke RFC 6455: \(error); messages after it were relayed but not captured")
    }

    /// The session can't keep up with the messages: the relay stops reading until it can.
    var isBehind: Bool { hooks.isBehind }

    /// Hands the messages read so far to the hooks.
    func flush() {
        guard !pending.isEmpty else { return }
        hooks.messages(pending, of: flowID)
        pending.removeAll(keepingCapacity: true)
    }

    /// A side closed: the last messages and the flow with its end; `then` once they are kept.
    func finish(then: @escaping @Sendable () -> Void) {
        live.close(flowID)
        for tool in tools { tool.connectionClosed() }
        for (_, held) in holding {
            var lost = held
            lost.addNote("held when the connection closed: never sent")
            pending.append(lost)
        }
        holding.removeAll()
        summariseControlMessages()
        flush()
        guard var recorder else { return then() }
        self.recorder = nil
        var error = failure
        if error == nil, !sent.closed && !received.closed {
            error = FlowError(.connectionReset, "WebSocket closed without a close frame")
        }
        hooks.ended(recorder.finish(error: error), stored: then)
    }
}

extension WebSocketMessage {
    /// Adds what Kagami did to the message to what its note already says.
    mutating func addNote(_ text: String) {
        note = note.map { "\($0); \(text)" } ?? text
    }
}

/// The WebSocket connections open through a proxy, by flow id, for the admin API to inject
/// messages into.
public final class LiveWebSockets: WebSocketSending {
    typealias Injector = @Sendable (WebSocketMessage) -> EventLoopFuture<Void>
    private let sockets = NIOLockedValueBox<[UUID: Injector]>([:])

    public init() {}

    func open(_ flowID: UUID, injector: @escaping Injector) {
        sockets.withLockedValue { $0[flowID] = injector }
    }

    func close(_ flowID: UUID) {
        _ = sockets.withLockedValue { $0.removeValue(forKey: flowID) }
    }

    /// The flows whose WebSocket is open.
    public var open: Set<UUID> {
        sockets.withLockedValue { Set($0.keys) }
    }

    /// Sends `message` on the open WebSocket of flow `flowID`, its direction saying to which
    /// peer, at the next gap between that direction's messages; it is recorded as injected.
    public func inject(_ message: WebSocketMessage, into flowID: UUID) async throws {
        guard let injector = sockets.withLockedValue({ $0[flowID] }) else { throw WebSocketInjectionError.notOpen(flowID) }
        try await injector(message).get()
    }
}


/// The `Sec-WebSocket-Extensions` the server accepted (RFC 7692 for permessage-deflate).
struct WebSocketExtensions {
    var deflate = false
    var clientNoContextTakeover = false
    var serverNoContextTakeover = false
    /// Another extension was accepted.
    var unknown = false

    init(_ header: String) {
        for offer in header.split(separator: ",") {
            let parameters = offer.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parameters.first, !name.isEmpty else { continue }
            guard name == "permessage-deflate" else {
                unknown = true
                continue
            }
            deflate = true
            for parameter in parameters.dropFirst() {
                let key = parameter.split(separator: "=").first.map(String.init) ?? parameter
                if key == "client_no_context_takeover" { clientNoContextTakeover = true }
                if key == "server_no_context_takeover" { serverNoContextTakeover = true }
            }
        }
    }
}
