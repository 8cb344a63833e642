import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import NIOCore

/// What a message tool did with a whole message.
enum MessageToolOutcome: Equatable {
    /// Changed in place, or left as it was: the next tool goes on.
    case proceed
    /// Held: `decided` is called later with what to send.
    case stop
}

/// What a hook does with the data messages of one WebSocket connection (see `WebSocketRelay`).
/// One per connection and hook, used on the connection's event loop.
protocol WebSocketMessageTool: AnyObject {
    /// Asked as a data message starts: true when the tool may act on it, so the relay keeps
    /// it back until it is whole.
    func mayAct(on opcode: WebSocketMessage.Opcode, going direction: WebSocketMessage.Direction) -> Bool
    /// A whole message kept back: changed in place (`.proceed`), or held (`.stop`), in which
    /// case `decided` is called later on the connection's event loop with what to send (nil:
    /// drop it).
    func act(on message: inout WebSocketMessage, decided: @escaping @Sendable (WebSocketMessage?) -> Void) -> MessageToolOutcome
    /// The connection closed: let go of anything held.
    func connectionClosed()
}

/// Rewrite Body rules on text messages.
final class MessageRewriteTool: WebSocketMessageTool {
    let rewrites: MessageRewrites

    init(_ rewrites: MessageRewrites) {
        self.rewrites = rewrites
    }

    func mayAct(on opcode: WebSocketMessage.Opcode, going direction: WebSocketMessage.Direction) -> Bool {
        opcode == .text && rewrites.covers(direction)
    }

    func act(on message: inout WebSocketMessage, decided: @escaping @Sendable (WebSocketMessage?) -> Void) -> MessageToolOutcome {
        guard let text = message.text, !message.isTruncated else { return .proceed }
        let (rewritten, applications) = rewrites.rewrite(text, going: message.direction)
        guard !applications.isEmpty else { return .proceed }
        message.data = Data(rewritten.utf8)
        for application in applications { message.addNote("\(application.name): \(application.description)") }
        return .proceed
    }

    func connectionClosed() {}
}

/// Message breakpoints: hold a matching message until the admin API decides, as breakpoints
/// hold requests and responses. The breakpoints are looked up as each message starts, so one
/// set while the connection is open stops its next messages.
final class BreakpointMessageTool: WebSocketMessageTool {
    private let breakpoints: Breakpoints
    private let handshake: FlowRequest
    private let response: FlowResponse?
    private let flowID: UUID
    private let eventLoop: any EventLoop
    private var heldID: UUID?
    private var autoContinue: Scheduled<Void>?

    init(breakpoints: Breakpoints, handshake: FlowRequest, response: FlowResponse?, flowID: UUID, eventLoop: any EventLoop) {
        self.breakpoints = breakpoints
        self.handshake = handshake
        self.response = response
        self.flowID = flowID
        self.eventLoop = eventLoop
    }

    func mayAct(on opcode: WebSocketMessage.Opcode, going direction: WebSocketMessage.Direction) -> Bool {
        breakpoints.messageStops(for: handshake)?.covers(direction) ?? false
    }

    func act(on message: inout WebSocketMessage, decided: @escaping @Sendable (WebSocketMessage?) -> Void) -> MessageToolOutcome {
        guard let locations = breakpoints.messageStops(for: handshake)?.stops(message.opcode, text: message.text, going: message.direction),
              !locations.isEmpty else { return .proceed }
        let id = UUID()
        let heldAt = Date()
        heldID = id
        let held = HeldExchange(
            id: id, flowID: flowID, phase: .message, heldAt: heldAt, request: handshake, response: response,
            message: message, locations: locations)
        let original = message
        let loop = eventLoop
        let tool = NIOLoopBound(self, eventLoop: loop)
        breakpoints.hold(held) { resolution in
            loop.execute {
                tool.value.heldID = nil
                tool.value.autoContinue?.cancel()
                let waited = String(format: "%.1f", Date().timeIntervalSince(heldAt))
                switch resolution {
                case .abort:
                    decided(nil)
                case .executeMessage(var edited):
                    edited.note = original.note
                    edited.addNote("held \(waited) s at a breakpoint, then edited")
                    decided(edited)
                default:
                    var message = original
                    message.addNote("held \(waited) s at a breakpoint, then sent unchanged")
                    decided(message)
                }
            }
        }
        if let seconds = breakpoints.autoContinueSeconds {
            let breakpoints = breakpoints
            autoContinue = loop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) { breakpoints.autoContinue(id) }
        }
        return .stop
    }

    func connectionClosed() {
        autoContinue?.cancel()
        if let heldID { breakpoints.release(heldID) }
        heldID = nil
    }
}
