import KagamiFlow
import NIOCore

extension SocketAddress {
    /// `ip:port`, `[v6]:port` (`Authority`), as flows store client and server addresses; nil for
    /// an address without an IP (a Unix socket).
    var authorityText: String? {
        guard let ip = ipAddress, let port else { return nil }
        return Authority(host: ip, port: port).description
    }
}
