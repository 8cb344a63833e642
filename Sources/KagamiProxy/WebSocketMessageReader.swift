import CKagamiZlib
import Foundation
import KagamiFlow
import NIOCore

/// One direction of a WebSocket connection as the relay passes it on: frames from
/// `WebSocketFrameParser`, fragments joined, control frames taken between fragments, payloads
/// unmasked and (permessage-deflate) inflated. Each read says which bytes go on unchanged and
/// which messages passed, kept up to a capture limit so a message of any size passes in bounded
/// memory.
///
/// A data message the relay asks to hold (a breakpoint or a rule may act on it) does not go on:
/// it is read whole and handed out, and the relay sends what was decided in a frame of its own,
/// uncompressed (RFC 7692 lets any message go uncompressed, and an uncompressed message leaves
/// the receiver's compression window alone). Once a compressed message was held where the
/// sender keeps its window from message to message, the receiver's window no longer follows
/// the sender's, so from then on every compressed message of this direction is re-framed
/// uncompressed as it streams. A held message over the hold limit streams on the same way.
///
/// The first rule a peer breaks stops the reading with an error saying what and where; its
/// bytes from there on go on unread.
struct WebSocketMessageReader {
    /// What the handshake settled for this direction.
    struct Configuration {
        var direction: WebSocketMessage.Direction
        /// Bytes of each payload kept.
        var captureLimit: Int
        /// Bytes of a held message kept whole; a larger one streams on without stopping.
        var holdLimit: Int = 16 << 20
        /// permessage-deflate was negotiated.
        var deflate: Bool = false
        /// The sender resets its compression after each message (`*_no_context_takeover`).
        var noContextTakeover: Bool = false
        /// An extension other than permessage-deflate was negotiated: its RSV bits and payload
        /// encoding are unknown, so payloads are kept as sent and RSV bits are not checked.
        var unknownExtensions: Bool = false
    }

    /// What a read yields, in the order the relay acts on it.
    enum Output {
        /// Bytes of the buffer read, to go on unchanged.
        case forward(Range<Int>)
        /// Bytes to go on that the reader wrote: a frame header begun in an earlier read, or a
        /// message re-framed.
        case bytes(ByteBuffer)
        /// A message that went on (or is going on, in the bytes around it).
        case passed(WebSocketMessage)
        /// A whole data message kept back, its payload in full: the relay sends what is decided.
        case held(WebSocketMessage)
    }

    private enum Handling {
        case pass
        case hold
        /// Re-framed uncompressed as it streams; `started` once its first frame went.
        case reframe(started: Bool)

        var passes: Bool {
            if case .pass = self { return true }
            return false
        }
    }

    private struct Message {
        var opcode: WebSocketMessage.Opcode
        var compressed: Bool
        var handling: Handling = .pass
        var data = Data()
        var size = 0
        var truncated = false
        var note: String?
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
    /// The first bytes of the header being read went on already.
    private var headerBegunOnWire = false
    /// The receiver's compression window no longer follows the sender's (see above).
    private(set) var reframesCompressed = false
    /// Set once a rule was broken: nothing more is read.
    private(set) var failure: WebSocketProtocolError?
    /// The frames of the message being held, as they came: should its sender break a rule
    /// before it is whole, they go on as they are, so the receiver sees what it would have
    /// without Kagami (and fails the connection itself).
    private var heldWire: [UInt8] = []
    /// True once a close frame was read: the sender sends no more frames.
    private(set) var closed = false

    init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// The data message in progress is being kept back whole.
    private var isHolding: Bool {
        if case .hold? = message?.handling { return true }
        return false
    }

    /// Between messages: a message of Kagami's own may go in this direction now.
    var isBetweenMessages: Bool {
        failure != nil || (message == nil && parser.isAtFrameBoundary)
    }

    /// Reads `bytes`. `hold` is asked at the first frame of each data message whether to keep
    /// that message back. `mayHold` false says it will hold nothing this read: the bytes of a
    /// frame header split across reads then go on at once, as every other byte does (asked only
    /// when a read ends inside a header).
    mutating func read(
        _ bytes: UnsafeRawBufferPointer, at time: Date, mayHold: () -> Bool = { true }, hold: (WebSocketMessage.Opcode) -> Bool,
        into outputs: inout [Output]
    ) {
        guard failure == nil else {
            if !bytes.isEmpty { outputs.append(.forward(0..<bytes.count)) }
            return
        }
        var index = 0
        // The first bytes of a header that arrived in earlier reads and were kept back: they go
        // on with their frame, or as they are if the frame breaks a rule.
        var unsentHeader = !headerBegunOnWire && parser.partialHeaderCount > 0 ? parser.headerBytes : []
        // Where the bytes to forward from this buffer start, while there are some.
        var run: Int?
        func endRun(at end: Int) {
            if let start = run, end > start { outputs.append(.forward(start..<end)) }
            run = nil
        }
        var eventStart = 0
        do {
            while true {
                eventStart = index
                guard let event = try parser.next(bytes, index: &index) else { break }
                switch event {
                case .header(let header):
                    let carried = parser.headerBytes.count - (index - eventStart)
                    // A header whose first bytes already went on goes on whatever follows.
                    let begunOnWire = headerBegunOnWire
                    headerBegunOnWire = false
                    if try begin(header, hold: begunOnWire ? { _ in false } : hold) {
                        if carried > 0 && !begunOnWire {
                            endRun(at: eventStart)
                            outputs.append(.bytes(ByteBuffer(bytes: parser.headerBytes)))
                            run = index
                        } else if run == nil {
                            run = eventStart
                        }
                    } else {
                        endRun(at: eventStart)
                        if isHolding { heldWire += parser.headerBytes }
                    }
                    unsentHeader = []
                case .payload(let range, let offset):
                    var produced: [Output] = []
                    if try payload(UnsafeRawBufferPointer(rebasing: bytes[range]), offset: offset, into: &produced) {
                        if run == nil { run = range.lowerBound }
                    } else {
                        endRun(at: range.lowerBound)
                        outputs += produced
                        // Held on, its bytes are kept as they came; streaming on re-framed, they went.
                        if isHolding {
                            heldWire.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[range]))
                        } else {
                            heldWire = []
                        }
                    }
                case .frameEnd:
                    var produced: [Output] = []
                    try endFrame(at: time, into: &produced)
                    if case .passed(let message)? = produced.first, produced.count == 1 {
                        outputs.append(.passed(message))
                    } else {
                        endRun(at: index)
                        outputs += produced
                    }
                }
            }
        } catch {
            // From here on the bytes go on as they came: first what was kept back of them.
            failure = error
            endRun(at: eventStart)
            if !heldWire.isEmpty { outputs.append(.bytes(ByteBuffer(bytes: heldWire))) }
            heldWire = []
            if !unsentHeader.isEmpty { outputs.append(.bytes(ByteBuffer(bytes: unsentHeader))) }
            if eventStart < bytes.count { outputs.append(.forward(eventStart..<bytes.count)) }
            return
        }
        // The bytes of a header not yet complete wait for the rest of it, unless its frame
        // will pass whatever it is.
        let partial = min(parser.partialHeaderCount, bytes.count)
        if partial > 0, headerBegunOnWire || (!reframesCompressed && (message?.handling.passes ?? true) && !mayHold()) {
            if run == nil { run = bytes.count - partial }
            headerBegunOnWire = true
            endRun(at: bytes.count)
        } else {
            endRun(at: bytes.count - partial)
        }
    }

    /// Reads `bytes` holding nothing, appending the messages completed by them to `messages`.
    mutating func read(_ bytes: UnsafeRawBufferPointer, at time: Date, into messages: inout [WebSocketMessage]) {
        var outputs: [Output] = []
        read(bytes, at: time, mayHold: { false }, hold: { _ in false }, into: &outputs)
        for case .passed(let message) in outputs { messages.append(message) }
    }

    mutating func read(_ bytes: [UInt8], at time: Date, into messages: inout [WebSocketMessage]) {
        bytes.withUnsafeBytes { read($0, at: time, into: &messages) }
    }

    private func fail(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(reason, at: parser.position)
    }

    /// A frame header: true when the frame's bytes go on as they are.
    private mutating func begin(_ header: WebSocketFrameParser.Header, hold: (WebSocketMessage.Opcode) -> Bool) throws(WebSocketProtocolError) -> Bool {
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
            return true
        }
        switch header.opcode {
        case 0:
            guard message != nil else { throw fail("continuation frame with no message to continue") }
            if compressedBit && !configuration.unknownExtensions { throw fail("RSV1 set on a continuation frame") }
        case 1, 2:
            guard message == nil else { throw fail("new data frame while a fragmented message is unfinished") }
            let opcode: WebSocketMessage.Opcode = header.opcode == 1 ? .text : .binary
            var started = Message(opcode: opcode, compressed: compressedBit && configuration.deflate)
            // Payloads of an unknown extension can't be re-framed: they always pass as sent.
            if !configuration.unknownExtensions {
                if hold(opcode) {
                    started.handling = .hold
                } else if started.compressed && reframesCompressed {
                    started.handling = .reframe(started: false)
                }
                if started.compressed && !configuration.noContextTakeover && !started.handling.passes { reframesCompressed = true }
            }
            message = started
        default:
            throw fail("reserved data opcode \(header.opcode)")
        }
        frame = Frame(header: header, isControl: false)
        return message?.handling.passes ?? true
    }

    /// Payload bytes of the current frame: true when they go on as they are.
    private mutating func payload(
        _ bytes: UnsafeRawBufferPointer, offset: UInt64, into outputs: inout [Output]
    ) throws(WebSocketProtocolError) -> Bool {
        guard let frame else { return true }
        if frame.isControl {
            control?.size += bytes.count
            control?.data.append(contentsOf: Self.unmasked(bytes, mask: frame.header.mask, offset: offset))
            return true
        }
        guard var current = message else { return true }
        message = nil
        defer { message = current }
        current.size += bytes.count
        switch current.handling {
        case .pass:
            if current.compressed {
                // Every compressed byte goes through the inflater, kept or not: later messages
                // may refer back to it (context takeover).
                try inflate(Self.unmasked(bytes, mask: frame.header.mask, offset: offset), into: &current, outputs: &outputs)
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
            return true
        case .hold, .reframe:
            let plain = Self.unmasked(bytes, mask: frame.header.mask, offset: offset)
            if current.compressed {
                try inflate(plain, into: &current, outputs: &outputs)
            } else {
                plain.withUnsafeBytes { take($0, into: &current, outputs: &outputs) }
            }
            return false
        }
    }

    /// Plain payload bytes of a held or re-framed message.
    private mutating func take(_ plain: UnsafeRawBufferPointer, into message: inout Message, outputs: inout [Output]) {
        guard !plain.isEmpty else { return }
        switch message.handling {
        case .pass:
            let room = configuration.captureLimit - message.data.count
            if room < plain.count { message.truncated = true }
            if room > 0 { message.data.append(contentsOf: UnsafeRawBufferPointer(rebasing: plain[0..<min(room, plain.count)])) }
        case .hold:
            if message.data.count + plain.count <= configuration.holdLimit {
                message.data.append(contentsOf: plain)
                return
            }
            // Too large to hold: what was read goes on as the first frame, the rest streams.
            let limit = configuration.holdLimit
            message.note = "over \(limit >= 1 << 20 ? "\(limit >> 20) MB" : "\(limit) bytes"): passed on without stopping"
            outputs.append(.bytes(WebSocketFrameWriter.frame(
                opcode: message.opcode.rawValue, fin: false, payload: message.data, masked: configuration.direction == .send)))
            message.handling = .reframe(started: true)
            if message.data.count > configuration.captureLimit {
                message.data.removeSubrange(configuration.captureLimit...)
                message.truncated = true
            }
            if message.compressed && !configuration.noContextTakeover { reframesCompressed = true }
            take(plain, into: &message, outputs: &outputs)
        case .reframe(let started):
            outputs.append(.bytes(WebSocketFrameWriter.frame(
                opcode: started ? 0 : message.opcode.rawValue, fin: false, payload: plain, masked: configuration.direction == .send)))
            message.handling = .reframe(started: true)
            let room = configuration.captureLimit - message.data.count
            if room < plain.count { message.truncated = true }
            if room > 0 { message.data.append(contentsOf: UnsafeRawBufferPointer(rebasing: plain[0..<min(room, plain.count)])) }
        }
    }

    private mutating func inflate(_ bytes: [UInt8], into message: inout Message, outputs: inout [Output]) throws(WebSocketProtocolError) {
        if inflater == nil { inflater = WebSocketInflater() }
        guard let inflater else { return }
        let outcome = inflater.inflate(bytes) { chunk in take(chunk, into: &message, outputs: &outputs) }
        if case .failed(let reason) = outcome { throw fail("permessage-deflate payload does not inflate: \(reason)") }
    }

    private mutating func endFrame(at time: Date, into outputs: inout [Output]) throws(WebSocketProtocolError) {
        guard let frame else { return }
        self.frame = nil
        if frame.isControl {
            guard let control else { return }
            self.control = nil
            if control.opcode == .close {
                try checkClose(control.data)
                closed = true
            }
            outputs.append(.passed(WebSocketMessage(
                direction: configuration.direction, time: time, opcode: control.opcode, data: control.data, size: control.size)))
            return
        }
        guard frame.header.fin, var current = message else { return }
        message = nil
        if current.compressed {
            // The sender removed the final empty block's tail; put it back (RFC 7692 §7.2.2).
            try inflate([0x00, 0x00, 0xFF, 0xFF], into: &current, outputs: &outputs)
            if configuration.noContextTakeover { inflater?.reset() }
        }
        if current.opcode == .text, !current.truncated, String(validating: current.data, as: UTF8.self) == nil {
            throw fail("text message is not valid UTF-8")
        }
        let message = WebSocketMessage(
            direction: configuration.direction, time: time, opcode: current.opcode, data: current.data,
            size: current.size, isTruncated: current.truncated, isCompressed: current.compressed, note: current.note)
        switch current.handling {
        case .pass:
            outputs.append(.passed(message))
        case .hold:
            heldWire = []
            outputs.append(.held(message))
        case .reframe(let started):
            outputs.append(.bytes(WebSocketFrameWriter.frame(
                opcode: started ? 0 : current.opcode.rawValue, fin: true, payload: UnsafeRawBufferPointer(start: nil, count: 0),
                masked: configuration.direction == .send)))
            outputs.append(.passed(message))
        }
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
        case ok
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

    /// Inflates `input`, handing each piece of output to `output` as it comes.
    func inflate(_ input: [UInt8], output: (UnsafeRawBufferPointer) -> Void) -> Outcome {
        guard started else { return .failed("zlib could not start") }
        var input = input
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                self.output.withUnsafeMutableBufferPointer { outputBuffer in
                    stream.next_out = outputBuffer.baseAddress
                    stream.avail_out = uInt(outputBuffer.count)
                    status = CKagamiZlib.inflate(&stream, Z_SYNC_FLUSH)
                    let produced = outputBuffer.count - Int(stream.avail_out)
                    if produced > 0 { output(UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(outputBuffer)[0..<produced])) }
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
            stream.next_in = nil
        }
        switch status {
        case Z_STREAM_END:
            // A final block: what follows starts afresh.
            inflateReset(&stream)
            return .ok
        case Z_OK, Z_BUF_ERROR:
            return .ok
        default:
            return .failed(stream.msg.map { String(cString: $0) } ?? "zlib status \(status)")
        }
    }
}
