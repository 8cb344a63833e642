import Foundation
import NIOCore

/// RFC 6455 frames out of a byte stream that arrives in pieces of any size: a state machine fed
/// bytes, handing out frame headers and the ranges of payload bytes it has seen, without
/// copying. What a frame means (fragments, control frames, masking rules) is the business of
/// `WebSocketMessageReader`; this only knows the wire layout (§5.2).
struct WebSocketFrameParser {
    struct Header: Equatable {
        var fin: Bool
        /// RSV1...RSV3 as the low three bits.
        var reserved: UInt8
        var opcode: UInt8
        /// The masking key, for masked frames (client to server).
        var mask: (UInt8, UInt8, UInt8, UInt8)?
        var length: UInt64

        static func == (a: Header, b: Header) -> Bool {
            a.fin == b.fin && a.reserved == b.reserved && a.opcode == b.opcode && a.length == b.length
                && a.mask.map { [$0.0, $0.1, $0.2, $0.3] } == b.mask.map { [$0.0, $0.1, $0.2, $0.3] }
        }
    }

    enum Event: Equatable {
        case header(Header)
        /// Payload bytes in the buffer just given, starting `offset` bytes into the frame's
        /// payload (for unmasking).
        case payload(Range<Int>, offset: UInt64)
        case frameEnd
    }

    private enum State {
        case header
        case payload(received: UInt64, length: UInt64)
    }

    private var state = State.header
    /// The bytes of the header being read or last read (at most 14).
    private(set) var headerBytes: [UInt8] = []
    /// `headerBytes` holds a whole header (the last one read).
    private var headerComplete = false
    /// Bytes consumed so far, for errors that say where.
    private(set) var position: UInt64 = 0

    /// The next event from `bytes`, starting at `index` (advanced past what it used), or nil
    /// when all of `bytes` is used and more are needed.
    mutating func next(_ bytes: UnsafeRawBufferPointer, index: inout Int) throws(WebSocketProtocolError) -> Event? {
        switch state {
        case .payload(let received, let length):
            if received == length {
                state = .header
                return .frameEnd
            }
            guard index < bytes.count else { return nil }
            let available = UInt64(bytes.count - index)
            let count = Int(min(available, length - received))
            let range = index..<(index + count)
            index += count
            position += UInt64(count)
            state = .payload(received: received + UInt64(count), length: length)
            return .payload(range, offset: received)
        case .header:
            if headerComplete {
                headerComplete = false
                headerBytes.removeAll(keepingCapacity: true)
            }
            while index < bytes.count {
                let needed = Self.headerLength(headerBytes)
                if let needed, headerBytes.count >= needed { break }
                let take = min((needed ?? 2) - headerBytes.count, bytes.count - index)
                headerBytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                position += UInt64(take)
            }
            guard let needed = Self.headerLength(headerBytes), headerBytes.count >= needed else { return nil }
            let header = try decodeHeader()
            headerComplete = true
            state = .payload(received: 0, length: header.length)
            return .header(header)
        }
    }

    /// Bytes of a header not yet complete: what the last read ended with.
    var partialHeaderCount: Int { headerComplete ? 0 : headerBytes.count }

    /// Between frames: no header or payload under way.
    var isAtFrameBoundary: Bool {
        if case .header = state { return partialHeaderCount == 0 }
        return false
    }

    /// The whole header's length once its first two bytes are known.
    private static func headerLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        let masked = bytes[1] & 0x80 != 0
        let extended = switch bytes[1] & 0x7F {
        case 126: 2
        case 127: 8
        default: 0
        }
        return 2 + extended + (masked ? 4 : 0)
    }

    private func decodeHeader() throws(WebSocketProtocolError) -> Header {
        let b = headerBytes
        var length = UInt64(b[1] & 0x7F)
        var at = 2
        if length == 126 {
            length = UInt64(b[2]) << 8 | UInt64(b[3])
            at = 4
        } else if length == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(b[i]) }
            at = 10
            guard length >> 63 == 0 else {
                throw WebSocketProtocolError("frame length has its most significant bit set", at: position)
            }
        }
        let mask = b[1] & 0x80 != 0 ? (b[at], b[at + 1], b[at + 2], b[at + 3]) : nil
        return Header(fin: b[0] & 0x80 != 0, reserved: (b[0] >> 4) & 0x07, opcode: b[0] & 0x0F, mask: mask, length: length)
    }
}

/// RFC 6455 frames as Kagami writes them: re-framed or injected messages, each payload in one
/// frame, masked with a fresh key when they go to the server (§5.3).
enum WebSocketFrameWriter {
    static func frame(opcode: UInt8, fin: Bool, payload: UnsafeRawBufferPointer, masked: Bool) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(payload.count + 14)
        buffer.writeInteger((fin ? 0x80 : 0) | opcode)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            buffer.writeInteger(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(payload.count))
        } else {
            buffer.writeInteger(maskBit | 127)
            buffer.writeInteger(UInt64(payload.count))
        }
        guard masked else {
            buffer.writeBytes(payload)
            return buffer
        }
        let key = UInt32.random(in: .min ... .max)
        buffer.writeInteger(key)
        let keyBytes = [UInt8(key >> 24), UInt8(key >> 16 & 0xFF), UInt8(key >> 8 & 0xFF), UInt8(key & 0xFF)]
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: payload.count) { out in
            for i in 0..<payload.count { out[i] = payload[i] ^ keyBytes[i & 3] }
            return payload.count
        }
        return buffer
    }

    static func frame(opcode: UInt8, fin: Bool, payload: Data, masked: Bool) -> ByteBuffer {
        payload.withUnsafeBytes { frame(opcode: opcode, fin: fin, payload: $0, masked: masked) }
    }
}

/// A peer broke RFC 6455: what, and where in its byte stream.
struct WebSocketProtocolError: Error, Equatable, CustomStringConvertible {
    var reason: String
    /// Bytes of that direction's stream read when it was found.
    var position: UInt64

    init(_ reason: String, at position: UInt64) {
        self.reason = reason
        self.position = position
    }

    var description: String { "\(reason) (at byte \(position))" }
}
