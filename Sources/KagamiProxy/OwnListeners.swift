import KagamiControl
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kagami's own listening sockets — the proxy's and its admin API's — which no connection the
/// proxy makes on a client's behalf may reach, whatever the address says: a client of the proxy
/// must never ride it into the admin API (which can read and write files) nor loop it into
/// itself. Decided twice, so no new spelling of "this host" gets through: before connecting, on
/// the address (`isOwn(_:port:)`): one of our ports at any address of this host — loopback,
/// `0.0.0.0`/`::`, every interface's address, IPv4-mapped forms, what a name resolves to; and
/// after connecting, on the connected socket's peer (`isOwn(peer:)`), the same way.
///
/// (Not by the source of the connections our listeners accept: the kernel gives the same
/// ephemeral port to connections with different destinations, so a client's source can equal
/// the local end of one of the proxy's server connections.)
final class OwnListeners: Sendable {
    private let ports = NIOLockedValueBox<Set<Int>>([])

    func add(port: Int) {
        ports.withLockedValue { _ = $0.insert(port) }
    }

    /// `address:port` reaches one of our listeners: the port is ours and the address is this host's.
    func isOwn(_ address: IPAddressBytes, port: Int) -> Bool {
        guard ports.withLockedValue({ $0.contains(port) }) else { return false }
        return HostAddresses.isThisHost(address)
    }

    /// A connected socket's peer is one of our listeners.
    func isOwn(peer: SocketAddress) -> Bool {
        guard let port = peer.port, let address = IPAddressBytes(peer) else { return false }
        return isOwn(address, port: port)
    }
}

/// The addresses that reach this host.
enum HostAddresses {
    /// Loopback (127.0.0.0/8, ::1), "this host" (0.0.0.0/8, ::), IPv4-compatible forms of those,
    /// and every address an interface of this host has now (IPv4-mapped forms are read as the
    /// IPv4 address they carry by `IPAddressBytes`).
    static func isThisHost(_ address: IPAddressBytes) -> Bool {
        let bytes = address.bytes
        if bytes.count == 4 {
            if bytes[0] == 127 || bytes[0] == 0 { return true }
        } else if bytes.count == 16 {
            if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] <= 1 { return true }
            // ::a.b.c.d (IPv4-compatible, deprecated but still parsed).
            if bytes[0..<12].allSatisfy({ $0 == 0 }) {
                return isThisHost(IPAddressBytes(bytes: Array(bytes[12...])))
            }
        }
        return interfaceAddresses().contains(address)
    }

    /// Every address the interfaces of this host have, read when asked (they change with the
    /// network; only connections to one of our own ports ask).
    static func interfaceAddresses() -> Set<IPAddressBytes> {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var found: Set<IPAddressBytes> = []
        var next = first
        while let entry = next {
            defer { next = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr else { continue }
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var address = v4.pointee.sin_addr
                    found.insert(IPAddressBytes(bytes: withUnsafeBytes(of: &address) { Array($0) }))
                }
            case AF_INET6:
                socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var address = v6.pointee.sin6_addr
                    found.insert(IPAddressBytes(bytes: withUnsafeBytes(of: &address) { Array($0) }))
                }
            default:
                break
            }
        }
        return found
    }
}

extension IPAddressBytes {
    /// The address of an IPv4 or IPv6 socket address; nil for a Unix socket.
    init?(_ socketAddress: SocketAddress) {
        switch socketAddress {
        case .v4(let v4):
            var address = v4.address.sin_addr
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        case .v6(let v6):
            var address = v6.address.sin6_addr
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        case .unixDomainSocket:
            return nil
        }
    }
}
