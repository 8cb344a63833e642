import CKagamiZlib
import Foundation
import KagamiTesting
import KagamiFlow
import Testing
@testable import KagamiProxy

/// The WebSocket frame parser and message reader fed bytes in pieces of every size, with
/// frames built here by the rules of RFC 6455 (and RFC 7692 for compression).
@Suite struct WebSocketMessageReaderTests {
    /// One frame's bytes. `mask` nil sends it unmasked; `length` overrides the encoded length
    /// form (for the 16- and 64-bit forms on small payloads).
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false, mask: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D], form: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let count = payload.count
        switch form ?? (count < 126 ? 7 : count <= 0xFFFF ? 16 : 64) {
        case 7:
            bytes.append(maskBit | UInt8(count))
        case 16:
            bytes.append(maskBit | 126)
            bytes += [UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(UInt64(count) >> UInt64(shift) & 0xFF)) }
        }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        return bytes
    }

    static func reader(_ direction: WebSocketMessage.Direction, limit: Int = 1 << 20, deflate: Bool = false, noContextTakeover: Bool = false) -> WebSocketMessageReader {
        WebSocketMessageReader(.init(direction: direction, captureLimit: limit, deflate: deflate, noContextTakeover: noContextTakeover))
    }

    /// Feeds `bytes` in pieces of `piece` bytes (0: all at once).
    static func read(_ bytes: [UInt8], into reader: inout WebSocketMessageReader, piece: Int = 0) -> [WebSocketMessage] {
        var messages: [WebSocketMessage] = []
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        if piece == 0 {
            reader.read(bytes, at: time, into: &messages)
        } else {
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + piece)
                reader.read(Array(bytes[index..<end]), at: time, into: &messages)
                index = end
            }
        }
        return messages
    }

    static let text = Array("Hello, Kagami — ハロー".utf8)

    @Test func textAndBinaryByteByByte() {
        let binary: [UInt8] = (0..<300).map { UInt8($0 & 0xFF) }
        let stream = Self.frame(1, Self.text) + Self.frame(2, binary) + Self.frame(2, [])
        for piece in [0, 1, 2, 3, 7, 13] {
            var reader = Self.reader(.send)
            let messages = Self.read(stream, into: &reader, piece: piece)
            #expect(reader.failure == nil)
            #expect(messages.map(\.opcode) == [.text, .binary, .binary], "piece \(piece)")
            #expect(messages.first?.text == String(decoding: Self.text, as: UTF8.self))
            #expect(messages.dropFirst().first?.data == Data(binary))
            #expect(messages.map(\.size) == [Self.text.count, 300, 0])
            #expect(messages.allSatisfy { $0.direction == .send && !$0.isTruncated })
        }
    }

    /// Fragments joined, with a ping and a pong between them (control frames may interleave).
    @Test func fragmentsWithControlFramesBetween() {
        let stream = Self.frame(1, Array("Hel".utf8), fin: false, mask: nil)
            + Self.frame(9, Array("ping?".utf8), mask: nil)
            + Self.frame(0, Array("lo, ".utf8), fin: false, mask: nil)
            + Self.frame(10, [], mask: nil)
            + Self.frame(0, Array("world".utf8), mask: nil)
        for piece in [0, 1, 5] {
            var reader = Self.reader(.receive)
            let messages = Self.read(stream, into: &reader, piece: piece)
            #expect(reader.failure == nil)
            #expect(messages.map(\.opcode) == [.ping, .pong, .text])
            #expect(messages.first?.data == Data("ping?".utf8))
            #expect(messages.last?.text == "Hello, world")
            #expect(messages.last?.size == 12)
        }
    }

    /// The 16- and 64-bit length forms, and a payload larger than the capture limit: counted
    /// whole, kept to the limit.
    @Test func extendedLengthsAndCaptureLimit() {
        let payload = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var reader = Self.reader(.send, limit: 1_000)
        let messages = Self.read(Self.frame(2, Array(payload.prefix(5)), form: 64) + Self.frame(2, Array(payload.prefix(200)), form: 16) + Self.frame(2, payload), into: &reader, piece: 4096)
        #expect(reader.failure == nil)
        #expect(messages.map(\.size) == [5, 200, 70_000])
        #expect(messages[2].isTruncated)
        #expect(messages[2].data == Data(payload.prefix(1_000)))
        #expect(!messages[1].isTruncated)
    }

    @Test func closeWithCodeAndReason() {
        var reader = Self.reader(.send)
        let messages = Self.read(Self.frame(8, [0x03, 0xE8] + Array("bye".utf8)), into: &reader, piece: 1)
        #expect(messages.first?.closeCode == 1000)
        #expect(messages.first?.closeReason == "bye")
        #expect(reader.closed)
        #expect(reader.failure == nil)
        // Nothing may follow a close.
        _ = Self.read(Self.frame(1, [0x41]), into: &reader)
        #expect(reader.failure?.reason == "frame after a close frame")
    }

    @Test(arguments: [
        (frame(1, [0x41], mask: nil), WebSocketMessage.Direction.send, "client frame not masked"),
        (frame(1, [0x41]), .receive, "server frame masked"),
        (frame(9, [UInt8](repeating: 0, count: 126)), .send, "control frame payload of 126 bytes (at most 125)"),
        (frame(9, [], fin: false), .send, "fragmented control frame"),
        (frame(0, [0x41]), .send, "continuation frame with no message to continue"),
        (frame(1, [0x41], fin: false) + frame(2, [0x42]), .send, "new data frame while a fragmented message is unfinished"),
        (frame(3, []), .send, "reserved data opcode 3"),
        (frame(11, []), .send, "reserved control opcode 11"),
        (frame(1, [0x41], rsv1: true), .send, "RSV1 set but permessage-deflate was not negotiated"),
        (frame(8, [0x03]), .send, "close frame with a 1-byte payload"),
        (frame(8, [0x03, 0xED]), .send, "close code 1005 may not be sent"),
        (frame(1, [0xC3, 0x28]), .send, "text message is not valid UTF-8"),
        ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], .send, "frame length has its most significant bit set"),
    ] as [([UInt8], WebSocketMessage.Direction, String)])
    func brokenRulesStopTheReader(bytes: [UInt8], direction: WebSocketMessage.Direction, reason: String) {
        var reader = Self.reader(direction)
        let valid = direction == .send ? Self.frame(1, [0x6F, 0x6B]) : Self.frame(1, [0x6F, 0x6B], mask: nil)
        let messages = Self.read(valid + bytes + valid, into: &reader, piece: 3)
        #expect(reader.failure?.reason == reason)
        // The message before the broken rule is kept; nothing after it is read.
        #expect(messages.count == 1)
        #expect(messages.first?.text == "ok")
    }

    // MARK: permessage-deflate

    /// Raw deflate as a permessage-deflate sender makes it: each message flushed with
    /// Z_SYNC_FLUSH and its trailing 00 00 FF FF taken off; the window carries over unless
    /// `reset`.
    final class Deflater {
        var stream = z_stream()
        init() { deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) }
        deinit { deflateEnd(&stream) }

        func compress(_ input: [UInt8], reset: Bool = false) -> [UInt8] {
            if reset { deflateReset(&stream) }
            var input = input
            var output = [UInt8](repeating: 0, count: input.count + 1024)
            let produced = input.withUnsafeMutableBufferPointer { inputBuffer in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                    stream.next_in = inputBuffer.baseAddress
                    stream.avail_in = uInt(inputBuffer.count)
                    stream.next_out = outputBuffer.baseAddress
                    stream.avail_out = uInt(outputBuffer.count)
                    CKagamiZlib.deflate(&stream, Z_SYNC_FLUSH)
                    return outputBuffer.count - Int(stream.avail_out)
                }
            }
            // Nothing pending to flush (an empty message): a single 0x00 byte stands for it (§7.2.3.6).
            guard produced >= 4 else { return [0x00] }
            return Array(output[0..<(produced - 4)])
        }
    }

    @Test func deflatedMessagesWithContextTakeover() {
        let deflater = Deflater()
        let first = Array(String(repeating: "kagami mirror ", count: 50).utf8)
        let second = Array(String(repeating: "kagami mirror ", count: 60).utf8)
        let firstWire = deflater.compress(first)
        let secondWire = deflater.compress(second)
        // The second refers back to the first's window: it is tiny on the wire.
        #expect(secondWire.count < 20)
        // Fragmented: RSV1 on the first frame only.
        let stream = Self.frame(1, Array(firstWire.prefix(5)), fin: false, rsv1: true)
            + Self.frame(0, Array(firstWire.dropFirst(5)))
            + Self.frame(1, secondWire, rsv1: true)
            + Self.frame(1, Array("plain".utf8))
        for piece in [0, 1, 6] {
            var reader = Self.reader(.send, deflate: true)
            let messages = Self.read(stream, into: &reader, piece: piece)
            #expect(reader.failure == nil)
            #expect(messages.map(\.data) == [Data(first), Data(second), Data("plain".utf8)])
            #expect(messages.map(\.isCompressed) == [true, true, false])
            #expect(messages.first?.size == firstWire.count)
        }
    }

    @Test func deflatedWithoutContextTakeoverAndTruncated() {
        let deflater = Deflater()
        let big = Array(String(repeating: "0123456789", count: 10_000).utf8)
        let stream = Self.frame(2, deflater.compress(big), rsv1: true, mask: nil)
            + Self.frame(2, deflater.compress(Array("after".utf8), reset: true), rsv1: true, mask: nil)
        var reader = Self.reader(.receive, limit: 64, deflate: true, noContextTakeover: true)
        let messages = Self.read(stream, into: &reader, piece: 100)
        #expect(reader.failure == nil)
        #expect(messages.first?.data == Data(big.prefix(64)))
        #expect(messages.first?.isTruncated == true)
        #expect(messages.last?.data == Data("after".utf8))
    }

    @Test func corruptDeflateIsAnError() {
        var reader = Self.reader(.send, deflate: true)
        _ = Self.read(Self.frame(2, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF], rsv1: true), into: &reader)
        #expect(reader.failure?.reason.hasPrefix("permessage-deflate payload does not inflate") == true)
    }

    // MARK: Holding and re-framing

    /// Passes `stream` through a reader as the relay does, in pieces of `piece` bytes: what
    /// goes on, with each held message sent back whole in a frame of its own at its place.
    static func relayed(
        _ stream: [UInt8], reader: inout WebSocketMessageReader, piece: Int, mayHold: Bool = true, hold: (Int, WebSocketMessage.Opcode) -> Bool
    ) -> (wire: [UInt8], held: [WebSocketMessage], passed: [WebSocketMessage]) {
        var wire: [UInt8] = []
        var held: [WebSocketMessage] = []
        var passed: [WebSocketMessage] = []
        var started = 0
        var index = 0
        while index < stream.count || (stream.isEmpty && index == 0) {
            let end = piece == 0 ? stream.count : min(stream.count, index + piece)
            let bytes = Array(stream[index..<end])
            var outputs: [WebSocketMessageReader.Output] = []
            bytes.withUnsafeBytes { buffer in
                reader.read(buffer, at: Date(timeIntervalSince1970: 1_700_000_000), mayHold: { mayHold }, hold: { opcode in
                    started += 1
                    return hold(started, opcode)
                }, into: &outputs)
            }
            for output in outputs {
                switch output {
                case .forward(let range): wire += bytes[range]
                case .bytes(let buffer): wire += buffer.readableBytesView
                case .passed(let message): passed.append(message)
                case .held(let message):
                    held.append(message)
                    wire += WebSocketFrameWriter.frame(
                        opcode: message.opcode.rawValue, fin: true, payload: message.data, masked: message.direction == .send).readableBytesView
                }
            }
            index = end
            if stream.isEmpty { break }
        }
        return (wire, held, passed)
    }

    @Test func heldMessagesStayBackAndTheRestGoesOnAsSent() {
        let first = Self.frame(1, Array("first".utf8))
        let second = Self.frame(1, Array("hold".utf8), fin: false) + Self.frame(9, [1]) + Self.frame(0, Array(" me".utf8))
        let third = Self.frame(2, [1, 2, 3], form: 64) + Self.frame(10, [])
        for piece in [0, 1, 2, 5, 13] {
            var reader = Self.reader(.send)
            let result = Self.relayed(first + second + third, reader: &reader, piece: piece) { number, _ in number == 2 }
            #expect(reader.failure == nil)
            #expect(result.held.map(\.text) == ["hold me"], "piece \(piece)")
            // The ping inside the held message went on at once; the held one follows whole.
            let ping = Self.frame(9, [1])
            let resent = Array(WebSocketFrameWriter.frame(opcode: 1, fin: true, payload: Data("hold me".utf8), masked: false).readableBytesView)
            #expect(result.wire.count == first.count + ping.count + resent.count + 4 + third.count, "piece \(piece)")
            #expect(Array(result.wire.prefix(first.count + ping.count)) == first + ping, "piece \(piece)")
            #expect(Array(result.wire.suffix(third.count)) == third, "piece \(piece)")
            #expect(result.passed.map(\.opcode) == [.text, .ping, .binary, .pong])
            var receiver = Self.reader(.send)
            #expect(Self.read(result.wire, into: &receiver).compactMap(\.text) == ["first", "hold me"])
            #expect(receiver.failure == nil)
        }
    }

    /// A sender that breaks a rule while its message is held: the frames kept back go on as
    /// they came, then everything after them, so the receiver gets exactly the sender's bytes and
    /// fails the connection itself (Autobahn 5.18, 6.3.1, 6.6.1 with message tools on). (A
    /// control frame between held fragments goes on at once, ahead of them, as it always does.)
    static let brokenWhileHolding: [(String, [UInt8])] = {
        let secondText: [UInt8] = frame(1, Array("fragment1".utf8), fin: false) + frame(1, Array("fragment2".utf8))
        let badText: [UInt8] = frame(1, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xED, 0xA0, 0x80, 0x65])
        let badFragments: [UInt8] = frame(1, [0xCE], fin: false) + frame(0, [0x80, 0xFF])
        let reservedOpcode: [UInt8] = frame(1, Array("part".utf8), fin: false) + frame(5, [1, 2])
        return [
            ("a second text frame inside a fragmented message", secondText),
            ("invalid UTF-8 in one frame", badText),
            ("invalid UTF-8 across fragments", badFragments),
            ("a reserved opcode after a held fragment", reservedOpcode),
        ]
    }()

    @Test(arguments: brokenWhileHolding)
    func aRuleBrokenWhileHoldingLeavesTheBytesAsSent(what: String, stream: [UInt8]) {
        let before = Self.frame(1, Array("fine".utf8))
        let after = Self.frame(8, [0x03, 0xE8])
        for piece in [0, 1, 3, 7] {
            var reader = Self.reader(.send)
            let result = Self.relayed(before + stream + after, reader: &reader, piece: piece) { _, _ in true }
            #expect(reader.failure != nil, "\(what), piece \(piece)")
            #expect(result.held.isEmpty || result.held.map(\.text) == ["fine"], "\(what), piece \(piece)")
            // "fine" was held and re-sent in a frame of Kagami's own (unmasked here): the rest is
            // the sender's bytes exactly.
            let resent = Array(WebSocketFrameWriter.frame(opcode: 1, fin: true, payload: Data("fine".utf8), masked: true).readableBytesView)
            #expect(result.wire.count == resent.count + stream.count + after.count, "\(what), piece \(piece)")
            #expect(Array(result.wire.suffix(stream.count + after.count)) == stream + after, "\(what), piece \(piece)")
        }
    }

    /// Once a compressed message was held (and sent uncompressed), the receiver's window misses
    /// it: every compressed message after it goes uncompressed too, and the receiver reads
    /// each as the sender meant it.
    @Test func compressedMessagesAfterAHeldOneGoUncompressed() {
        let deflater = Deflater()
        let texts = (1...4).map { String(repeating: "kagami mirror \($0) ", count: 30) }
        let stream = texts.flatMap { Self.frame(1, deflater.compress(Array($0.utf8)), rsv1: true) } + Self.frame(1, Array("plain".utf8))
        for piece in [0, 1, 7, 64] {
            var reader = Self.reader(.send, deflate: true)
            let result = Self.relayed(stream, reader: &reader, piece: piece) { number, _ in number == 2 }
            #expect(reader.failure == nil)
            #expect(reader.reframesCompressed)
            var receiver = Self.reader(.send, deflate: true)
            let messages = Self.read(result.wire, into: &receiver)
            #expect(receiver.failure == nil, "piece \(piece)")
            #expect(messages.compactMap(\.text) == texts + ["plain"], "piece \(piece)")
            // The first went on compressed, as sent; none after it.
            #expect(messages.map(\.isCompressed) == [true, false, false, false, false])
        }
    }

    /// A message too large to hold streams on re-framed: the receiver gets it whole.
    @Test func aMessageOverTheHoldLimitStreamsOn() {
        let deflater = Deflater()
        let big = Array(String(repeating: "0123456789", count: 500).utf8)
        let wire = deflater.compress(big)
        let stream = Self.frame(1, Array(wire.prefix(10)), fin: false, rsv1: true) + Self.frame(0, Array(wire.dropFirst(10)))
            + Self.frame(2, Array(repeating: 7, count: 3000))
        for piece in [0, 3, 100] {
            var reader = WebSocketMessageReader(.init(direction: .send, captureLimit: 64, holdLimit: 1000, deflate: true))
            let result = Self.relayed(stream, reader: &reader, piece: piece) { _, _ in true }
            #expect(result.held.isEmpty)
            #expect(result.passed.map(\.note) == ["over 1000 bytes: passed on without stopping", "over 1000 bytes: passed on without stopping"])
            #expect(result.passed.allSatisfy { $0.data.count == 64 && $0.isTruncated })
            var receiver = Self.reader(.send, deflate: true)
            let messages = Self.read(result.wire, into: &receiver)
            #expect(receiver.failure == nil, "piece \(piece)")
            #expect(messages.map(\.data) == [Data(big), Data(repeating: 7, count: 3000)], "piece \(piece)")
        }
    }

    /// Random streams, random messages held: whatever is held or re-framed, the receiver reads
    /// the same messages the sender sent, in order.
    @Test func fuzzedHoldingKeepsTheMessages() {
        var random = SeededGenerator(state: 0x686F_6C64)
        for round in 0..<300 {
            let deflater = Deflater()
            var stream: [UInt8] = []
            var sentTexts: [Data] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let size = Int.random(in: 0...400, using: &random)
                let payload = (0..<size).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
                switch Int.random(in: 0...3, using: &random) {
                case 0: stream += Self.frame(1, payload)
                case 1: stream += Self.frame(2, Array(payload.prefix(size / 2)), fin: false) + Self.frame(9, Array(payload.prefix(5))) + Self.frame(0, Array(payload.dropFirst(size / 2)))
                default: stream += Self.frame(1, deflater.compress(payload), rsv1: true)
                }
                sentTexts.append(Data(payload))
            }
            var reader = WebSocketMessageReader(.init(direction: .send, captureLimit: 64, holdLimit: 200, deflate: true))
            var choices = random
            // Every third round holds nothing: the bytes then go on exactly as sent.
            let holding = round % 3 != 0
            let result = Self.relayed(stream, reader: &reader, piece: Int.random(in: 0...40, using: &random), mayHold: holding) { _, _ in
                holding && Bool.random(using: &choices)
            }
            #expect(reader.failure == nil, "round \(round)")
            if !holding { #expect(result.wire == stream, "round \(round)") }
            var receiver = Self.reader(.send, deflate: true)
            let messages = Self.read(result.wire, into: &receiver).filter { !$0.opcode.isControl }
            #expect(receiver.failure == nil, "round \(round)")
            #expect(messages.map(\.data) == sentTexts, "round \(round)")
        }
    }

    // MARK: Fuzzing

    /// A seeded generator, so a failing run can be repeated.

    /// Valid streams cut at random points must give the same messages as read whole; mutated
    /// streams (bytes flipped, inserted, dropped, lengths made huge) must never crash or hang,
    /// and must end in messages or one clear error.
    @Test func fuzzedStreams() {
        var random = SeededGenerator(state: 0x6B61_6761_6D69)
        for round in 0..<400 {
            // One connection per round: the window carries over within it only.
            let deflater = Deflater()
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let size = Int.random(in: 0...300, using: &random)
                let payload = (0..<size).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
                switch Int.random(in: 0...4, using: &random) {
                case 0: stream += Self.frame(1, payload)
                case 1: stream += Self.frame(2, payload, form: [7, 16, 64].randomElement(using: &random).map { $0 == 7 && size >= 126 ? 16 : $0 })
                case 2: stream += Self.frame(1, Array(payload.prefix(size / 2)), fin: false) + Self.frame(9, Array(payload.prefix(10))) + Self.frame(0, Array(payload.dropFirst(size / 2)))
                case 3: stream += Self.frame(1, deflater.compress(payload), rsv1: true)
                default: stream += Self.frame(10, Array(payload.prefix(125)))
                }
            }
            var whole = Self.reader(.send, limit: 128, deflate: true)
            let expected = Self.read(stream, into: &whole)
            #expect(whole.failure == nil, "round \(round)")
            var pieces = Self.reader(.send, limit: 128, deflate: true)
            #expect(Self.read(stream, into: &pieces, piece: Int.random(in: 1...64, using: &random)) == expected, "round \(round)")

            var mutated = stream
            for _ in 0..<Int.random(in: 1...4, using: &random) where !mutated.isEmpty {
                let at = Int.random(in: 0..<mutated.count, using: &random)
                switch Int.random(in: 0...3, using: &random) {
                case 0: mutated[at] ^= UInt8.random(in: 1...255, using: &random)
                case 1: mutated.insert(UInt8.random(in: 0...255, using: &random), at: at)
                case 2: mutated.remove(at: at)
                default: mutated.insert(contentsOf: [0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], at: at)
                }
            }
            var fuzzed = Self.reader(.send, limit: 128, deflate: true)
            let messages = Self.read(mutated, into: &fuzzed, piece: Int.random(in: 1...32, using: &random))
            #expect(messages.allSatisfy { $0.data.count <= 128 }, "round \(round)")
        }
    }
}
