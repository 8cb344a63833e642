import CKagamiZlib
import Foundation
import KagamiFlow

/// The messages of one direction of a WebSocket connection, out of its bytes: frames from
/// `WebSocketFrameParser`, fragments joined, control frames taken between fragments, payloads
/// unmasked and (permessage-deflate) inflated, each kept up to a capture limit so a message of
/// any size passes in bounded memory. It only watches: the bytes go on unchanged whatever it
/// finds. The first rule a peer breaks stops it with an error saying what and where.
struct WebSocketMessageReader {
    /// What the handshake settled for this direction.
    struct Configuration {
        var direction: WebSocketMessage.Direction
        /// Bytes of each payload kept.
        var captureLimit: Int
        /// permessage-deflate was negotiated.
        var deflate: Bool = false
        /// The sender resets its compression after each message (`*_no_context_takeover`).
        var noContextTakeover: Bool = false
        /// An extension other than permessage-deflate was negotiated: its RSV bits and payload
        /// encoding are unknown, so payloads are kept as sent and RSV bits are not checked.
        var unknownExtensions: Bool = false
    }

    private struct Message {
        var opcode: WebSocketMessage.Opcode
        var compressed: Bool
        var data = Data()
        var size = 0
        var truncated = false
    }

    private struct Frame {
        var header: WebSocketFrameParser.Header
        /// The message the frame belongs to: the data message in progress, or its own control frame.
        var isControl: Bool
    }

    let configuration: Configuration
    private var parser = WebSocketFrameParser()
    /// The data message whose fragments are arriving.
    private var message: Message?
    /// The control frame being read (between fragments of a data message, possibly).
    private var control: Message?
    private var frame: Frame?
    private var inflater: WebSocketInflater?
    /// Set once a rule was broken: nothing more is read.
    private(set) var failure: WebSocketProtocolError?
    /// True once a close frame was read: the sender sends no more frames.
    private(set) var closed = false

    init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Reads `bytes`, appending each message completed by them to `messages`.
    mutating func read(_ bytes: UnsafeRawBufferPointer, at time: Date, into messages: inout [WebSocketMessage]) {
        guard failure == nil else { return }
        var index = 0
        do {
            while let event = try parser.next(bytes, index: &index) {
                switch event {
                case .header(let header):
                    try begin(header)
                case .payload(let range, let offset):
                    try payload(UnsafeRawBufferPointer(rebasing: bytes[range]), offset: offset)
                case .frameEnd:
                    if let message = try endFrame(at: time) { messages.append(message) }
                }
            }
        } catch {
            failure = error
        }
    }

    mutating func read(_ bytes: [UInt8], at time: Date, into messages: inout [WebSocketMessage]) {
        bytes.withUnsafeBytes { read($0, at: time, into: &messages) }
    }

    private func fail(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(reason, at: parser.position)
    }

    private mutating func begin(_ header: WebSocketFrameParser.Header) throws(WebSocketProtocolError) {
        if closed { throw fail("frame after a close frame") }
        let masked = header.mask != nil
        switch configuration.direction {
        case .send where !masked: throw fail("client frame not masked")
        case .receive where masked: throw fail("server frame masked")
        default: break
        }
        let compressedBit = header.reserved & 0b100 != 0
        if !configuration.unknownExtensions {
            if header.reserved & 0b011 != 0 { throw fail("reserved bits RSV2/RSV3 set with no extension negotiated") }
            if compressedBit && !configuration.deflate { throw fail("RSV1 set but permessage-deflate was not negotiated") }
        }
        if header.opcode >= 8 {
            guard let opcode = WebSocketMessage.Opcode(rawValue: header.opcode) else { throw fail("reserved control opcode \(header.opcode)") }
            guard header.fin else { throw fail("fragmented control frame") }
            guard header.length <= 125 else { throw fail("control frame payload of \(header.length) bytes (at most 125)") }
            if compressedBit && !configuration.unknownExtensions { throw fail("RSV1 set on a control frame") }
            control = Message(opcode: opcode, compressed: false)
            frame = Frame(header: header, isControl: true)
            return
        }
        switch header.opcode {
        case 0:
            guard message != nil else { throw fail("continuation frame with no message to continue") }
            if compressedBit && !configuration.unknownExtensions { throw fail("RSV1 set on a continuation frame") }
        case 1, 2:
            guard message == nil else { throw fail("new data frame while a fragmented message is unfinished") }
            let opcode: WebSocketMessage.Opcode = header.opcode == 1 ? .text : .binary
            message = Message(opcode: opcode, compressed: compressedBit && configuration.deflate)
        default:
            throw fail("reserved data opcode \(header.opcode)")
        }
        frame = Frame(header: header, isControl: false)
    }

    private mutating func payload(_ bytes: UnsafeRawBufferPointer, offset: UInt64) throws(WebSocketProtocolError) {
        guard let frame else { return }
        if frame.isControl {
            control?.size += bytes.count
            control?.data.append(contentsOf: Self.unmasked(bytes, mask: frame.header.mask, offset: offset))
            return
        }
        guard var current = message else { return }
        message = nil
        defer { message = current }
        current.size += bytes.count
        if current.compressed {
            // Every compressed byte goes through the inflater, kept or not: later messages
            // may refer back to it (context takeover).
            let plain = Self.unmasked(bytes, mask: frame.header.mask, offset: offset)
            try inflate(plain, into: &current)
        } else {
            let room = configuration.captureLimit - current.data.count
            if room >= bytes.count {
                current.data.append(contentsOf: Self.unmasked(bytes, mask: frame.header.mask, offset: offset))
            } else {
                if room > 0 {
                    current.data.append(contentsOf: Self.unmasked(UnsafeRawBufferPointer(rebasing: bytes[0..<room]), mask: frame.header.mask, offset: offset))
                }
                current.truncated = true
            }
        }
    }

    private mutating func inflate<Bytes: Collection<UInt8>>(_ bytes: Bytes, into message: inout Message) throws(WebSocketProtocolError) {
        if inflater == nil { inflater = WebSocketInflater() }
        guard let inflater else { return }
        let room = configuration.captureLimit - message.data.count
        switch inflater.inflate(Array(bytes), keepingAtMost: room, into: &message.data) {
        case .ok(let dropped): if dropped { message.truncated = true }
        case .failed(let reason): throw fail("permessage-deflate payload does not inflate: \(reason)")
        }
    }

    private mutating func endFrame(at time: Date) throws(WebSocketProtocolError) -> WebSocketMessage? {
        guard let frame else { return nil }
        self.frame = nil
        if frame.isControl {
            guard let control else { return nil }
            self.control = nil
            if control.opcode == .close {
                try checkClose(control.data)
                closed = true
            }
            return WebSocketMessage(direction: configuration.direction, time: time, opcode: control.opcode, data: control.data, size: control.size)
        }
        guard frame.header.fin, var current = message else { return nil }
        message = nil
        if current.compressed {
            // The sender removed the final empty block's tail; put it back (RFC 7692 §7.2.2).
            try inflate([0x00, 0x00, 0xFF, 0xFF], into: &current)
            if configuration.noContextTakeover { inflater?.reset() }
        }
        if current.opcode == .text, !current.truncated, String(validating: current.data, as: UTF8.self) == nil {
            throw fail("text message is not valid UTF-8")
        }
        return WebSocketMessage(
            direction: configuration.direction, time: time, opcode: current.opcode, data: current.data,
            size: current.size, isTruncated: current.truncated, isCompressed: current.compressed)
    }

    /// §5.5.1 and §7.4: no payload, or a code a peer may send followed by UTF-8 text.
    private func checkClose(_ payload: Data) throws(WebSocketProtocolError) {
        if payload.isEmpty { return }
        guard payload.count >= 2 else { throw fail("close frame with a 1-byte payload") }
        let code = Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1])
        let valid = (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
        guard valid else { throw fail("close code \(code) may not be sent") }
        guard String(validating: payload.dropFirst(2), as: UTF8.self) != nil else { throw fail("close reason is not valid UTF-8") }
    }

    private static func unmasked(_ bytes: UnsafeRawBufferPointer, mask: (UInt8, UInt8, UInt8, UInt8)?, offset: UInt64) -> [UInt8] {
        guard let mask else { return Array(bytes) }
        let key = [mask.0, mask.1, mask.2, mask.3]
        var out = [UInt8](repeating: 0, count: bytes.count)
        var k = Int(offset & 3)
        for i in 0..<bytes.count {
            out[i] = bytes[i] ^ key[k]
            k = (k + 1) & 3
        }
        return out
    }
}

/// A raw-deflate inflater that keeps its window from message to message.
final class WebSocketInflater {
    enum Outcome {
        /// `dropped`: output past the room given was thrown away.
        case ok(dropped: Bool)
        case failed(String)
    }

    private var stream = z_stream()
    private var started = false
    private var output = [UInt8](repeating: 0, count: 16 * 1024)

    init() {
        started = inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if started { inflateEnd(&stream) }
    }

    func reset() {
        if started { inflateReset(&stream) }
    }

    func inflate(_ input: [UInt8], keepingAtMost room: Int, into data: inout Data) -> Outcome {
        guard started else { return .failed("zlib could not start") }
        var room = room
        var dropped = false
        var input = input
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                output.withUnsafeMutableBufferPointer { outputBuffer in
                    stream.next_out = outputBuffer.baseAddress
                    stream.avail_out = uInt(outputBuffer.count)
                    status = CKagamiZlib.inflate(&stream, Z_SYNC_FLUSH)
                    let produced = outputBuffer.count - Int(stream.avail_out)
                    let kept = max(0, min(room, produced))
                    if kept > 0, let base = outputBuffer.baseAddress { data.append(base, count: kept) }
                    if kept < produced { dropped = true }
                    room -= kept
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
            stream.next_in = nil
        }
        switch status {
        case Z_STREAM_END:
            // A final block: what follows starts afresh.
            inflateReset(&stream)
            return .ok(dropped: dropped)
        case Z_OK, Z_BUF_ERROR:
            return .ok(dropped: dropped)
        default:
            return .failed(stream.msg.map { String(cString: $0) } ?? "zlib status \(status)")
        }
    }
}
