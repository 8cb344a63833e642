import KagamiTesting
import NIOCore
import Testing
@testable import KagamiProxy

/// The record reader finds a client's plaintext alert however the bytes are split.
@Suite struct ClientTLSAlertReaderTests {
    static let handshakeRecord: [UInt8] = [22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3]
    static let changeCipherSpec: [UInt8] = [20, 3, 3, 0, 1, 1]
    static let unknownCA: [UInt8] = [21, 3, 3, 0, 2, 2, 48]

    @Test func anAlertIsFoundWhateverTheSplit() {
        let stream = Self.handshakeRecord + Self.changeCipherSpec + Self.unknownCA
        for split in 1...stream.count {
            let state = ClientTLSState()
            let reader = ClientTLSAlertReader(state: state)
            var offset = 0
            while offset < stream.count {
                let piece = ByteBuffer(bytes: stream[offset..<min(stream.count, offset + split)])
                reader.read(piece.readableBytesView)
                offset += split
            }
            #expect(state.clientAlert == 48, "split every \(split) bytes")
            #expect(TLSNames.alert(state.clientAlert ?? 0) == "unknown CA")
        }
    }

    @Test func encryptedRecordsAndGarbageFindNoAlert() {
        var rng = SeededGenerator(state: 21)
        let state = ClientTLSState()
        let reader = ClientTLSAlertReader(state: state)
        reader.read(ByteBuffer(bytes: Self.handshakeRecord + [23, 3, 3, 0, 3, 21, 3, 3]).readableBytesView)
        #expect(state.clientAlert == nil)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            reader.read(ByteBuffer(bytes: bytes).readableBytesView)
        }
    }
}
