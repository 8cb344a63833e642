import Foundation

extension Flow {
    /// The exchange is a WebSocket handshake the server accepted: messages followed it.
    public var isWebSocket: Bool {
        guard let response, response.status == 101 else { return false }
        return response.headers.values(for: "upgrade").contains { $0.lowercased() == "websocket" }
    }
}

/// One WebSocket message (or control frame) seen on an upgraded exchange, as the application
/// at either end sees it: unmasked, reassembled from its fragments, inflated when the
/// connection negotiated permessage-deflate.
public struct WebSocketMessage: Sendable, Hashable, Codable {
    public enum Direction: String, Sendable, Hashable, Codable {
        /// From the client to the server.
        case send
        /// From the server to the client.
        case receive
    }

    /// RFC 6455 opcodes a message can have (continuation frames are folded into their message).
    public enum Opcode: UInt8, Sendable, Hashable, Codable {
        case text = 1
        case binary = 2
        case close = 8
        case ping = 9
        case pong = 10

        public var isControl: Bool { rawValue >= 8 }
    }

    public var direction: Direction
    /// When its last frame had arrived.
    public var time: Date
    public var opcode: Opcode
    /// The payload, up to the capture limit.
    public var data: Data
    /// Payload bytes on the wire, over all fragments (compressed bytes when compressed).
    public var size: Int
    /// True when `data` holds only the first part of the payload.
    public var isTruncated: Bool
    /// Sent compressed (permessage-deflate); `data` is the inflated payload.
    public var isCompressed: Bool
    /// What Kagami did to the message on its way, in words ("edited at a breakpoint",
    /// "dropped at a breakpoint", "injected", a rule's change); nil when it passed as sent.
    public var note: String?

    public init(
        direction: Direction, time: Date, opcode: Opcode, data: Data, size: Int,
        isTruncated: Bool = false, isCompressed: Bool = false, note: String? = nil
    ) {
        self.direction = direction
        self.time = time
        self.opcode = opcode
        self.data = data
        self.size = size
        self.isTruncated = isTruncated
        self.isCompressed = isCompressed
        self.note = note
    }

    /// The status code of a close frame, when it carries one.
    public var closeCode: UInt16? {
        guard opcode == .close, data.count >= 2 else { return nil }
        return UInt16(data[data.startIndex]) << 8 | UInt16(data[data.startIndex + 1])
    }

    /// The reason text of a close frame (after its code).
    public var closeReason: String? {
        guard opcode == .close, data.count > 2 else { return nil }
        return String(decoding: data.dropFirst(2), as: UTF8.self)
    }

    /// The payload as text, for text messages.
    public var text: String? {
        opcode == .text ? String(decoding: data, as: UTF8.self) : nil
    }
}
