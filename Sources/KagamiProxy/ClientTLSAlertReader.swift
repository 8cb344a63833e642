import NIOCore

/// Reads the TLS record layer in front of the TLS handler of an intercepted connection until
/// the handshake is done, to catch a plaintext alert from the client. A client that refuses
/// Kagami's certificate says why in an alert ("unknown CA"); under TLS 1.3 some clients send it
/// unencrypted, which BoringSSL reports only as a malformed record.
final class ClientTLSAlertReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let state: ClientTLSState
    private var header: [UInt8] = []
    private var recordType: UInt8 = 0
    private var remaining = 0
    private var alert: [UInt8] = []

    init(state: ClientTLSState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state.handshakeCompleted {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        read(unwrapInboundIn(data).readableBytesView)
        context.fireChannelRead(data)
    }

    /// Follows record boundaries over any split of the bytes; keeps the body of alert records.
    func read(_ bytes: ByteBufferView) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if remaining == 0 {
                header.append(bytes[index])
                index += 1
                guard header.count == 5 else { continue }
                recordType = header[0]
                remaining = Int(header[3]) << 8 | Int(header[4])
                header.removeAll(keepingCapacity: true)
                alert.removeAll()
                continue
            }
            let count = min(remaining, bytes.endIndex - index)
            if recordType == 21, alert.count < 2 {
                alert.append(contentsOf: bytes[index..<(index + min(count, 2 - alert.count))])
                if alert.count == 2 { state.clientAlert = alert[1] }
            }
            remaining -= count
            index += count
        }
    }
}

extension TLSNames {
    /// RFC 8446 §6 alert descriptions, as a user would read them.
    static func alert(_ description: UInt8) -> String {
        switch description {
        case 0: "close notify"
        case 10: "unexpected message"
        case 20: "bad record MAC"
        case 40: "handshake failure"
        case 42: "bad certificate"
        case 43: "unsupported certificate"
        case 44: "certificate revoked"
        case 45: "certificate expired"
        case 46: "certificate unknown"
        case 47: "illegal parameter"
        case 48: "unknown CA"
        case 49: "access denied"
        case 50: "decode error"
        case 51: "decrypt error"
        case 70: "protocol version"
        case 71: "insufficient security"
        case 80: "internal error"
        case 86: "inappropriate fallback"
        case 90: "user canceled"
        case 109: "missing extension"
        case 110: "unsupported extension"
        case 112: "unrecognized name"
        case 116: "certificate required"
        case 120: "no application protocol"
        default: "alert \(description)"
        }
    }
}
