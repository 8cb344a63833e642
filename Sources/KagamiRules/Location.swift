import KagamiFlow

/// Where a rule applies, as Charles writes it: protocol, host, port, path and query, each blank
/// for "any". Host and protocol ignore case; path and query don't. Wildcards are those of
/// `WildcardPattern`; a path needs a trailing `/*` to take in sub-paths, and the query has no `?`.
public struct Location: Sendable, Hashable, Codable {
    public var `protocol`: String
    public var host: String
    public var port: Int?
    public var path: String
    public var query: String

    public init(protocol: String = "", host: String = "", port: Int? = nil, path: String = "", query: String = "") {
        self.protocol = `protocol`
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case `protocol`, host, port, path, query
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.protocol = try container.decodeIfPresent(String.self, forKey: .protocol) ?? ""
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? ""
        port = try container.decodeIfPresent(Int.self, forKey: .port)
        path = try container.decodeIfPresent(String.self, forKey: .path) ?? ""
        query = try container.decodeIfPresent(String.self, forKey: .query) ?? ""
        if let port, !(1...65535).contains(port) {
            throw DecodingError.dataCorruptedError(
                forKey: .port, in: container, debugDescription: "port \(port) is not between 1 and 65535")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !self.protocol.isEmpty { try container.encode(self.protocol, forKey: .protocol) }
        if !host.isEmpty { try container.encode(host, forKey: .host) }
        try container.encodeIfPresent(port, forKey: .port)
        if !path.isEmpty { try container.encode(path, forKey: .path) }
        if !query.isEmpty { try container.encode(query, forKey: .query) }
    }

    /// A location of a host and port only, as the SSL Proxying list holds them: `host`,
    /// `host:port`, `*:443` or `[::1]:8443`, with the same wildcards as every location.
    /// A bare IPv6 address (`::1`) is that host on any port.
    public init?(hostAndPort text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // A colon promises a port.
        guard !trimmed.hasSuffix(":") else { return nil }
        if !trimmed.hasPrefix("["), trimmed.firstIndex(of: ":") != trimmed.lastIndex(of: ":") {
            guard let (host, _) = Authority.split("[\(trimmed)]") else { return nil }
            self.init(host: host.lowercased(), port: nil)
            return
        }
        guard let (host, port) = Authority.split(trimmed) else { return nil }
        self.init(host: host.lowercased(), port: port)
    }

    /// `host` or `host:port` (an IPv6 host in brackets), as `init(hostAndPort:)` reads it.
    public var hostAndPort: String {
        let shownHost = host.isEmpty ? "*" : Authority.bracketed(host)
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }

    /// `https://api.example.com:8443/v1/*?debug=1`, with blanks shown as `*`.
    public var displayString: String {
        let scheme = self.protocol.isEmpty ? "*" : self.protocol
        let pathPart = path.isEmpty ? "/*" : path
        return "\(scheme)://\(hostAndPort)\(pathPart)\(query.isEmpty ? "" : "?\(query)")"
    }
}

/// A `Location` with its patterns compiled, ready to be asked about many requests.
/// A class: pipelines hold many and walk them on every request, and copying a struct of four
/// compiled patterns cost a retain per string (most of the pipeline's time).
public final class LocationMatcher: Sendable, Hashable {
    public let location: Location
    let scheme: WildcardPattern
    let host: WildcardPattern
    let path: WildcardPattern
    let query: WildcardPattern

    public static func == (lhs: LocationMatcher, rhs: LocationMatcher) -> Bool { lhs.location == rhs.location }
    public func hash(into hasher: inout Hasher) { hasher.combine(location) }

    public init(_ location: Location) {
        self.location = location
        scheme = WildcardPattern(location.protocol, caseInsensitive: true)
        host = WildcardPattern(location.host, caseInsensitive: true)
        path = WildcardPattern(location.path)
        query = WildcardPattern(location.query)
    }

    public func matches(_ request: FlowRequest) -> Bool {
        // Cheapest and most selective first: a port or host mismatch ends most checks.
        if let port = location.port, port != request.port { return false }
        guard host.matches(request.host), scheme.matches(request.scheme) else { return false }
        if path.matchesEverything && query.matchesEverything { return true }
        let target = request.target
        let pathPart: Substring
        let queryPart: Substring
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            pathPart = target[..<mark]
            queryPart = target[target.index(after: mark)...]
        } else {
            pathPart = target[...]
            queryPart = ""
        }
        return path.matches(String(pathPart)) && query.matches(String(queryPart))
    }

    /// Whether the host and port match, for what is known before a request is read (a CONNECT
    /// target): the rest of the location is not asked.
    public func matches(host candidate: String, port candidatePort: Int) -> Bool {
        if let port = location.port, port != candidatePort { return false }
        return host.matches(candidate)
    }

    /// True when the location names a whole host: its path and query match anything (blank or
    /// `*`), so it can be decided on a tunnel, whose requests are not seen.
    public var coversWholeHost: Bool {
        path.matchesEverything && query.matchesEverything
    }

    /// The path left after the part the location's trailing `*` matched, or nil when the
    /// location's path has no trailing `*` (a blank path counts as `*`).
    public func remainingPath(of request: FlowRequest) -> String? {
        if location.path.isEmpty { return request.path }
        return path.remainder(after: request.path)
    }
}

extension Array where Element == LocationMatcher {
    /// True when any location matches; an empty list matches nothing.
    func anyMatches(_ request: FlowRequest) -> Bool {
        contains { $0.matches(request) }
    }
}
