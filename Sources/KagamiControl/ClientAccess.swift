import Foundation
import Synchronization

/// Who may use the proxy (Charles's Access Control): this machine (loopback) always, the
/// networks the user allowed (`--allow-client`), and addresses allowed while it runs. Any other
/// address is held: kept as pending for the user to allow or deny in the web UI, its requests
/// answered with a 403 page that says so and never relayed. A proxy listening on `0.0.0.0` in a
/// café is then no open relay for the café.
public final class ClientAccess: Sendable {
    public enum Decision: String, Sendable, Hashable {
        case allowed, pending, denied
    }

    /// An address that asked to use the proxy and has not been allowed.
    public struct Client: Sendable, Hashable {
        public var address: String
        public var firstSeen: Date
        public var lastSeen: Date
        /// Connections it opened.
        public var attempts: Int
        /// Its latest request line, for the user to recognise the device (`GET http://… HTTP/1.1`).
        public var lastRequest: String?
    }

    public struct State: Sendable, Hashable {
        /// The networks allowed from the start (`--allow-client`), loopback not listed.
        public var networks: [IPNetwork]
        public var allowed: [String]
        public var pending: [Client]
        public var denied: [Client]
    }

    /// Addresses kept as pending or denied at most; the oldest is forgotten past it.
    package static let maximumRemembered = 256

    private let networks: [IPNetwork]
    private let state = Mutex<(allowed: Set<IPAddressBytes>, pending: [IPAddressBytes: Client], denied: [IPAddressBytes: Client])>(([], [:], [:]))

    public init(allowing networks: [IPNetwork] = []) {
        self.networks = networks
    }

    /// What a connection from `address` gets; a new address not allowed is remembered as pending.
    /// No address (a Unix socket) is this machine.
    package func decide(_ address: IPAddressBytes?) -> Decision {
        guard let address else { return .allowed }
        if address.isLoopback || networks.contains(where: { $0.contains(address) }) { return .allowed }
        let now = Date()
        return state.withLock { state in
            if state.allowed.contains(address) { return .allowed }
            if var client = state.denied[address] {
                client.lastSeen = now
                client.attempts += 1
                state.denied[address] = client
                return .denied
            }
            var client = state.pending[address] ?? Client(address: address.text, firstSeen: now, lastSeen: now, attempts: 0)
            client.lastSeen = now
            client.attempts += 1
            state.pending[address] = client
            Self.forgetOldest(&state.pending)
            return .pending
        }
    }

    /// Notes the request line a held client sent.
    package func held(_ address: IPAddressBytes?, sent requestLine: String) {
        guard let address else { return }
        state.withLock { state in
            if state.pending[address] != nil { state.pending[address]?.lastRequest = String(requestLine.prefix(300)) }
            if state.denied[address] != nil { state.denied[address]?.lastRequest = String(requestLine.prefix(300)) }
        }
    }

    public enum Change: String, Sendable {
        case allow, deny, forget
    }

    public struct UnknownAddress: Error, CustomStringConvertible {
        public var address: String
        public var description: String { "\(address) is not an IP address" }
    }

    /// Allows or denies `address` from now on (its next connection), or forgets what was decided.
    public func change(_ text: String, to change: Change) throws(UnknownAddress) {
        guard let address = IPAddressBytes(text) else { throw UnknownAddress(address: text) }
        state.withLock { state in
            let known = state.pending.removeValue(forKey: address) ?? state.denied.removeValue(forKey: address)
            state.allowed.remove(address)
            let now = Date()
            switch change {
            case .allow:
                state.allowed.insert(address)
            case .deny:
                state.denied[address] = known ?? Client(address: address.text, firstSeen: now, lastSeen: now, attempts: 0)
                Self.forgetOldest(&state.denied)
            case .forget:
                break
            }
        }
    }

    public var current: State {
        state.withLock { state in
            State(
                networks: networks,
                allowed: state.allowed.map(\.text).sorted(),
                pending: state.pending.values.sorted { $0.firstSeen < $1.firstSeen },
                denied: state.denied.values.sorted { $0.firstSeen < $1.firstSeen })
        }
    }

    private static func forgetOldest(_ clients: inout [IPAddressBytes: Client]) {
        while clients.count > maximumRemembered, let oldest = clients.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            clients.removeValue(forKey: oldest.key)
        }
    }
}
