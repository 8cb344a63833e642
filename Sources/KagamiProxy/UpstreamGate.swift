import KagamiControl
import KagamiFlow
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The one way the proxy opens a connection to a server: it applies the upstream allow list
/// before any lookup and again to the addresses a name resolves to, answers `localhost` without
/// asking DNS, and counts what it did so tests can prove where the proxy tried to go.
final class UpstreamGate: Sendable {
    typealias SystemResolver = @Sendable (any EventLoop) -> any Resolver & Sendable

    let allowList: UpstreamAllowList?
    private let counters = NIOLockedValueBox(UpstreamStatistics())
    /// Looks names up (DNS); replaced in tests so that no test asks a real resolver.
    private let systemResolver: SystemResolver
    /// Kagami's own listeners (its proxy, its admin API): never connected to, so a client of
    /// the proxy can't reach the admin API through the proxy, and a request can't loop back
    /// into the proxy.
    let ownListeners = OwnListeners()

    init(allowList: UpstreamAllowList?, systemResolver: @escaping SystemResolver = { NIORandomizedDNSResolver(loop: $0) }) {
        self.allowList = allowList
        self.systemResolver = systemResolver
    }

    var statistics: UpstreamStatistics { counters.withLockedValue { $0 } }

    /// What connecting to `host:port` would be refused for, decided without a lookup (a name
    /// the list allows may still be refused for what it resolves to); nil when it may be tried.
    func refusal(host: String, port: Int) -> DestinationNotAllowed? {
        guard case .refused(let reason) = decision(host: host, port: port) else { return nil }
        counters.withLockedValue { $0.refusedBeforeLookup += 1 }
        return DestinationNotAllowed(host: host, reason: reason)
    }

    private func decision(host: String, port: Int) -> UpstreamAllowList.Decision {
        let decision = allowList?.decision(for: host) ?? Self.decisionWithoutList(for: host)
        switch decision {
        case .localhost where ownListeners.isOwn(.loopbackV4, port: port):
            return .refused(Self.itself(Authority(host: host, port: port).description))
        case .address(let address) where ownListeners.isOwn(address, port: port):
            return .refused(Self.itself(Authority(host: host, port: port).description))
        default:
            return decision
        }
    }

    static func itself(_ destination: String) -> String {
        "\(destination) is Kagami itself (its proxy or its web UI and admin API): open the web UI directly, not through the proxy"
    }

    /// Connects `bootstrap` to `host:port`, or fails with `DestinationNotAllowed` without a
    /// lookup or a connection attempt when the allow list refuses `host` or it is one of
    /// Kagami's own listeners; a connection whose peer turns out to be one of them is closed
    /// before a byte is sent and fails the same way.
    func connect(_ bootstrap: ClientBootstrap, host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let decision = decision(host: host, port: port)
        if case .refused(let reason) = decision {
            counters.withLockedValue { $0.refusedBeforeLookup += 1 }
            return eventLoop.makeFailedFuture(DestinationNotAllowed(host: host, reason: reason))
        }
        let system: (any Resolver & Sendable)?
        if case .lookUp = decision {
            system = systemResolver(eventLoop)
            counters.withLockedValue { $0.lookups += 1 }
        } else {
            system = nil
        }
        let resolver = AllowListResolver(decision: decision, host: host, allowList: allowList, ownListeners: ownListeners, system: system, counters: counters, eventLoop: eventLoop)
        let ownListeners = ownListeners
        let counters = counters
        return bootstrap.resolver(resolver).connect(host: host, port: port).flatMap { channel in
            if let peer = channel.remoteAddress, ownListeners.isOwn(peer: peer) {
                counters.withLockedValue { $0.refusedAfterConnect += 1 }
                let refusal = DestinationNotAllowed(host: host, reason: Self.itself("\(host) (\(peer.authorityText ?? "this host"))"))
                return channel.close().flatMapThrowing { throw refusal }
            }
            return channel.eventLoop.makeSucceededFuture(channel)
        }
    }

    private static func decisionWithoutList(for host: String) -> UpstreamAllowList.Decision {
        if let address = IPAddressBytes(host) { return .address(address) }
        let name = host.lowercased()
        return name == "localhost" || name == "localhost." || name.hasSuffix(".localhost") ? .localhost : .lookUp
    }
}

/// What the proxy's connect path did, for tests and diagnostics.
public struct UpstreamStatistics: Sendable, Hashable {
    /// Destinations refused before anything was looked up or dialled.
    public var refusedBeforeLookup = 0
    /// Names looked up through the system resolver (DNS).
    public var lookups = 0
    /// Addresses a lookup returned that the allow list then refused.
    public var refusedAfterLookup = 0
    /// Connections closed at once because their peer was one of Kagami's own listeners.
    public var refusedAfterConnect = 0
    /// Addresses handed to the connection attempt.
    public var addressesDialled = 0
    /// Of those, addresses outside 127.0.0.0/8 and ::1.
    public var addressesDialledOutsideLoopback = 0
}

/// The refusal a client gets as 403, and the flow keeps as its error.
public struct DestinationNotAllowed: Error, Sendable, CustomStringConvertible {
    public var host: String
    public var reason: String
    public var description: String { "destination not allowed: \(reason)" }
}

/// Gives Happy Eyeballs only addresses the allow list accepts: literals as they are,
/// `localhost` as loopback, other names through the system resolver, filtered.
private final class AllowListResolver: Resolver, Sendable {
    private let decision: UpstreamAllowList.Decision
    private let host: String
    private let allowList: UpstreamAllowList?
    private let counters: NIOLockedValueBox<UpstreamStatistics>
    private let eventLoop: any EventLoop
    private let ownListeners: OwnListeners
    private let system: (any Resolver & Sendable)?

    init(decision: UpstreamAllowList.Decision, host: String, allowList: UpstreamAllowList?, ownListeners: OwnListeners, system: (any Resolver & Sendable)?, counters: NIOLockedValueBox<UpstreamStatistics>, eventLoop: any EventLoop) {
        self.decision = decision
        self.host = host
        self.allowList = allowList
        self.ownListeners = ownListeners
        self.system = system
        self.counters = counters
        self.eventLoop = eventLoop
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        answer(family: 4, port: port) { $0.initiateAQuery(host: host, port: port) }
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        answer(family: 16, port: port) { $0.initiateAAAAQuery(host: host, port: port) }
    }

    func cancelQueries() {
        system?.cancelQueries()
    }

    private func answer(family byteCount: Int, port: Int, lookUp: (any Resolver & Sendable) -> EventLoopFuture<[SocketAddress]>) -> EventLoopFuture<[SocketAddress]> {
        switch decision {
        case .refused(let reason):
            return eventLoop.makeFailedFuture(DestinationNotAllowed(host: host, reason: reason))
        case .address(let address):
            return eventLoop.makeCompletedFuture { try dialled(address.bytes.count == byteCount ? [address] : [], port: port) }
        case .localhost:
            let address = byteCount == 4 ? IPAddressBytes.loopbackV4 : .loopbackV6
            return eventLoop.makeCompletedFuture { try dialled([address], port: port) }
        case .lookUp:
            guard let system else { return eventLoop.makeSucceededFuture([]) }
            let allowList = allowList
            let host = host
            let ownListeners = ownListeners
            return lookUp(system).flatMapThrowing { found in
                var kept: [IPAddressBytes] = []
                var refused: [String] = []
                var itself = false
                for address in found {
                    guard let bytes = IPAddressBytes(address) else { continue }
                    if ownListeners.isOwn(bytes, port: port) {
                        itself = true
                        refused.append(bytes.text)
                    } else if allowList?.permitsResolved(bytes) ?? true {
                        kept.append(bytes)
                    } else {
                        refused.append(bytes.text)
                    }
                }
                if !refused.isEmpty {
                    self.counters.withLockedValue { $0.refusedAfterLookup += refused.count }
                    if kept.isEmpty {
                        let reason = itself
                            ? UpstreamGate.itself("\(host), which resolved to \(refused.joined(separator: ", ")),")
                            : "\(host) resolved to \(refused.joined(separator: ", ")), outside the upstream allow list (\(allowList?.description ?? ""))"
                        throw DestinationNotAllowed(host: host, reason: reason)
                    }
                }
                return try self.dialled(kept, port: port)
            }
        }
    }

    private func dialled(_ addresses: [IPAddressBytes], port: Int) throws -> [SocketAddress] {
        let outside = addresses.filter { !$0.isLoopback }.count
        counters.withLockedValue {
            $0.addressesDialled += addresses.count
            $0.addressesDialledOutsideLoopback += outside
        }
        return try addresses.map { try SocketAddress(ipAddress: $0.text, port: port) }
    }
}
