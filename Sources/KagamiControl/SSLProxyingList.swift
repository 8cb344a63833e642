import KagamiRules
import Synchronization

/// Charles's SSL Proxying list: which CONNECT targets are decrypted, as locations of a host
/// and port (`Location(hostAndPort:)`) matched as every tool's locations are. Empty include
/// list means every host; an exclude match wins over an include match.
public struct SSLProxyingList: Sendable, Hashable {
    /// Compiled once; each keeps its location, which is what compares and hashes.
    private var includeMatchers: [LocationMatcher]
    private var excludeMatchers: [LocationMatcher]

    public var include: [Location] {
        get { includeMatchers.map(\.location) }
        set { includeMatchers = newValue.map(LocationMatcher.init) }
    }

    public var exclude: [Location] {
        get { excludeMatchers.map(\.location) }
        set { excludeMatchers = newValue.map(LocationMatcher.init) }
    }

    public init(include: [Location] = [], exclude: [Location] = []) {
        includeMatchers = include.map(LocationMatcher.init)
        excludeMatchers = exclude.map(LocationMatcher.init)
    }

    public func intercepts(host: String, port: Int) -> Bool {
        if excludeMatchers.contains(where: { $0.matches(host: host, port: port) }) { return false }
        return includeMatchers.isEmpty || includeMatchers.contains { $0.matches(host: host, port: port) }
    }
}

/// The SSL Proxying list in force: replaced from the admin API while the proxy runs, read once
/// per CONNECT (tunnels already open keep what they were given).
public final class LiveSSLProxying: Sendable {
    private let list: Mutex<SSLProxyingList>

    public init(_ list: SSLProxyingList = SSLProxyingList()) {
        self.list = Mutex(list)
    }

    public var current: SSLProxyingList {
        list.withLock { $0 }
    }

    public func replace(with list: SSLProxyingList) {
        self.list.withLock { $0 = list }
    }
}
