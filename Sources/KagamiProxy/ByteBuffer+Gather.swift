import NIOCore

extension Optional where Wrapped == ByteBuffer {
    /// Keeps `incoming` after what was gathered so far: how a handler that must see the first
    /// bytes of a connection (a TLS ClientHello, the HTTP/2 preface) collects them across reads.
    mutating func gather(_ incoming: ByteBuffer) {
        if case .some = self {
            var incoming = incoming
            self?.writeBuffer(&incoming)
        } else {
            self = incoming
        }
    }
}
