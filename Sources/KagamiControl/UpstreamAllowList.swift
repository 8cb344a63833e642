#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The servers the proxy may connect to (`--upstream-allow`): networks, single addresses and
/// host names. A name that no entry allows is refused without being looked up, and the
/// addresses a name resolves to must fall within an allowed network too whenever networks are
/// listed, so a name can't be pointed somewhere else behind the list's back.
public struct UpstreamAllowList: Sendable, Hashable, CustomStringConvertible {
    public enum Entry: Sendable, Hashable, CustomStringConvertible {
        /// Addresses within a network: `10.0.0.0/8`, `::1/128` (a single address is /32 or /128).
        case network(IPNetwork)
        /// A host name, exact (`api.internal`) or every name under a domain (`*.internal`).
        case hostName(String)

        public var description: String {
            switch self {
            case .network(let network): network.description
            case .hostName(let name): name
            }
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// 127.0.0.0/8, ::1 and `localhost` (answered locally, never asked of DNS).
    public static let loopback = UpstreamAllowList([
        .network(IPNetwork(bytes: [127, 0, 0, 0], prefixLength: 8)),
        .network(IPNetwork(bytes: Array(repeating: 0, count: 15) + [1], prefixLength: 128)),
        .hostName("localhost"),
    ])

    /// The environment variable that gives the default list to proxies whose configuration
    /// sets none (the same syntax as `--upstream-allow`, entries separated by commas).
    public static let environmentVariable = "KAGAMI_UPSTREAM_ALLOW"

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var entry: String
        /// Where the entry came from: `--upstream-allow` or the environment variable.
        public var source: String
        public var description: String {
            "\(source): \"\(entry)\" is not a network (10.0.0.0/8), an IP address, a host name (api.internal, *.internal) or \"loopback\""
        }
    }

    /// Reads entries such as `loopback`, `10.0.0.0/8`, `::1`, `api.internal`, `*.internal`.
    public init(parsing texts: [String], source: String = "--upstream-allow") throws(ParseError) {
        var entries: [Entry] = []
        for raw in texts {
            let text = raw.trimmingSpaces()
            if text.lowercased() == "loopback" {
                entries += Self.loopback.entries
            } else if let network = IPNetwork(text) {
                entries.append(.network(network))
            } else if let name = Self.hostNamePattern(text) {
                entries.append(.hostName(name))
            } else {
                throw ParseError(entry: text, source: source)
            }
        }
        self.init(entries)
    }

    /// The list in `KAGAMI_UPSTREAM_ALLOW`, nil when it is unset or empty.
    public static func fromEnvironment() throws(ParseError) -> UpstreamAllowList? {
        guard let value = getenv(environmentVariable).map({ String(cString: $0) }), !value.trimmingSpaces().isEmpty else {
            return nil
        }
        return try UpstreamAllowList(parsing: value.split(separator: ",").map(String.init), source: environmentVariable)
    }

    public var description: String { entries.map(\.description).joined(separator: ", ") }

    /// True for a loopback address written strictly (127.0.0.0/8, ::1, in brackets or not)
    /// and for `localhost` and names under `.localhost`.
    public static func isLoopback(host: String) -> Bool {
        switch loopback.decision(for: host) {
        case .address, .localhost: true
        case .lookUp, .refused: false
        }
    }

    /// What connecting to `host` takes, decided before anything is looked up.
    package enum Decision: Equatable {
        /// An allowed IP literal: connect to it as it is.
        case address(IPAddressBytes)
        /// `localhost` and names under `.localhost` (RFC 6761): loopback, without a lookup.
        case localhost
        /// An allowed name: look it up, then keep only the allowed addresses.
        case lookUp
        case refused(String)
    }

    package func decision(for host: String) -> Decision {
        if let address = IPAddressBytes(host) {
            return permits(address) ? .address(address) : .refused("\(host) is outside the upstream allow list (\(self))")
        }
        let name = Self.normalised(host)
        if name == "localhost" || name.hasSuffix(".localhost") {
            let loopback = [IPAddressBytes.loopbackV4, .loopbackV6]
            return permitsName(name) || loopback.contains(where: permits) ? .localhost : .refused("\(host) is outside the upstream allow list (\(self))")
        }
        return permitsName(name) ? .lookUp : .refused("\(host) is not in the upstream allow list (\(self)); it was not looked up")
    }

    /// Whether an address a name resolved to may be used: inside a listed network, or anything
    /// when only names are listed.
    package func permitsResolved(_ address: IPAddressBytes) -> Bool {
        hasNetworks ? permits(address) : true
    }

    package func permits(_ address: IPAddressBytes) -> Bool {
        entries.contains { entry in
            if case .network(let network) = entry { return network.contains(address) }
            return false
        }
    }

    private var hasNetworks: Bool {
        entries.contains { if case .network = $0 { true } else { false } }
    }

    private func permitsName(_ name: String) -> Bool {
        entries.contains { entry in
            guard case .hostName(let pattern) = entry else { return false }
            if pattern.hasPrefix("*.") { return name.hasSuffix(pattern.dropFirst()) }
            return name == pattern
        }
    }

    private static func normalised(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// A host name (letters, digits, `-`, dots), optionally starting with `*.`; nil otherwise.
    private static func hostNamePattern(_ text: String) -> String? {
        let name = normalised(text)
        let body = name.hasPrefix("*.") ? name.dropFirst(2) : Substring(name)
        let labels = body.split(separator: ".", omittingEmptySubsequences: false)
        guard !body.isEmpty, labels.allSatisfy({ label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }) else { return nil }
        return name
    }
}

/// An IPv4 or IPv6 network: an address and how many of its leading bits count.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]
    public let prefixLength: Int

    package init(bytes: [UInt8], prefixLength: Int) {
        self.bytes = bytes
        self.prefixLength = prefixLength
    }

    /// `10.0.0.0/8`, `fd00::/8`, or a single address.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddressBytes(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...maximum).contains(given), parts[1].allSatisfy(\.isNumber) else { return nil }
            length = given
        }
        self.init(bytes: address.bytes, prefixLength: length)
    }

    public var description: String {
        let address = IPAddressBytes(bytes: bytes).text
        return prefixLength == bytes.count * 8 ? address : "\(address)/\(prefixLength)"
    }

    package func contains(_ address: IPAddressBytes) -> Bool {
        guard address.bytes.count == bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(bytes, address.bytes) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if mine & mask != theirs & mask { return false }
            remaining -= bits
        }
        return true
    }
}

/// The bytes of an IPv4 (4) or IPv6 (16) address; an IPv4-mapped IPv6 address counts as the
/// IPv4 address it carries, so `::ffff:10.0.0.1` is judged as `10.0.0.1`.
package struct IPAddressBytes: Hashable {
    package let bytes: [UInt8]

    package static let loopbackV4 = IPAddressBytes(bytes: [127, 0, 0, 1])
    package static let loopbackV6 = IPAddressBytes(bytes: Array(repeating: 0, count: 15) + [1])

    package init(bytes: [UInt8]) {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes[12...])
        } else {
            self.bytes = bytes
        }
    }

    /// Only the strict textual forms (dotted quad, RFC 4291 text, optionally in brackets):
    /// `127.1` or `0x7f.0.0.1` are names here, never addresses.
    package init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) })
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
        } else {
            return nil
        }
    }

    package var isLoopback: Bool { UpstreamAllowList.loopback.permits(self) }

    package var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
