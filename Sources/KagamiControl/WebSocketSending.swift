import Foundation
import KagamiFlow

/// The WebSockets open through a running proxy, as the admin API sees them: which flows have one
/// open, and a message sent into one of them.
public protocol WebSocketSending: Sendable {
    /// The flows whose WebSocket is open.
    var open: Set<UUID> { get }
    /// Sends `message` on the open WebSocket of flow `flowID`, its direction saying to which
    /// peer, at the next gap between that direction's messages; it is recorded as injected.
    /// Throws `WebSocketInjectionError`.
    func inject(_ message: WebSocketMessage, into flowID: UUID) async throws
}

public enum WebSocketInjectionError: Error, Sendable, CustomStringConvertible {
    case notOpen(UUID)
    case closed(WebSocketMessage.Direction)

    public var description: String {
        switch self {
        case .notOpen(let id): "flow \(id.uuidString) is not an open WebSocket (it may have closed)"
        case .closed(.send): "the client closed its side of the WebSocket: nothing more can go to the server"
        case .closed(.receive): "the server closed its side of the WebSocket: nothing more can go to the client"
        }
    }
}
