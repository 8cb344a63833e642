import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1

/// What Kagami keeps of one WebSocket connection: the handshake as a flow, recorded when the
/// connection switches, then each message of both directions as the relay passes its bytes
/// on, handed to the hooks (recording: the sink) once per read so they are written in batches
/// behind the flow, and
/// the flow again when both sides have closed (its end, and any rule a peer broke).
final class WebSocketCapture {
    private var recorder: FlowRecorder?
    private let hooks: ExchangeHooks
    private let flowID: UUID
    private var sent: WebSocketMessageReader
    private var received: WebSocketMessageReader
    private var pending: [WebSocketMessage] = []
    private var failure: FlowError?

    /// Nil unless the 101 switched to WebSocket (another protocol is relayed without capture).
    init?(recorder: FlowRecorder, response: HTTPResponseHead, hooks: ExchangeHooks, captureLimit: Int) {
        guard response.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else { return nil }
        let extensions = WebSocketExtensions(response.headers[canonicalForm: "sec-websocket-extensions"].joined(separator: ","))
        self.recorder = recorder
        self.hooks = hooks
        self.flowID = recorder.flow.id
        sent = WebSocketMessageReader(.init(
            direction: .send, captureLimit: captureLimit, deflate: extensions.deflate,
            noContextTakeover: extensions.clientNoContextTakeover, unknownExtensions: extensions.unknown))
        received = WebSocketMessageReader(.init(
            direction: .receive, captureLimit: captureLimit, deflate: extensions.deflate,
            noContextTakeover: extensions.serverNoContextTakeover, unknownExtensions: extensions.unknown))
        // The handshake first: the messages that follow belong to a flow the store already has.
        hooks.upgraded(recorder.inProgress)
    }

    func read(_ buffer: ByteBuffer, from direction: WebSocketMessage.Direction) {
        let now = Date()
        buffer.withUnsafeReadableBytes { bytes in
            switch direction {
            case .send:
                sent.read(bytes, at: now, into: &pending)
                if failure == nil, let error = sent.failure { noteFailure(error, by: "client") }
            case .receive:
                received.read(bytes, at: now, into: &pending)
                if failure == nil, let error = received.failure { noteFailure(error, by: "server") }
            }
        }
    }

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
