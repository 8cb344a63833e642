#if canImport(Glibc)
import Glibc
#endif
import NIOCore

extension Channel {
    /// Acknowledges at once what the peer has sent on this TCP connection, rather than when the
    /// kernel's delayed-ACK timer fires (Linux; elsewhere, and on an HTTP/2 stream, nothing).
    ///
    /// A peer that writes without TCP_NODELAY (Python's `http.server` and `ssl` on a bare
    /// socket, Java's sockets) holds a small write back until its last one is acknowledged
    /// (Nagle). The kernel delays an ACK by at least 40 ms on a connection it has seen answer
    /// every message, which a kept-alive connection to a server is, so when Kagami reads part of
    /// a message and has nothing to write back until the rest comes, a response head written
    /// apart from its body waited 40 ms: through Kagami, not to the server directly.
    func acknowledgeReceivedBytes() {
        #if os(Linux)
        // A TCP socket's channel only: an HTTP/2 stream's stops the process on an option it
        // does not know.
        guard self is any SocketOptionProvider else { return }
        // Leaving the delayed-ACK mode sends an ACK that is due (tcp(7), TCP_QUICKACK); the kernel
        // goes back to delaying ACKs by itself as the exchange goes on.
        let quickACK = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_QUICKACK)))
        try? syncOptions?.setOption(quickACK, value: 1)
        #endif
    }
}
