/// Where a request goes: parsed from an absolute-form request target (`http://host:port/p?q`),
/// a CONNECT authority (`host:port`) or a reverse-proxy upstream URL.
public struct ProxyTarget: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int
    /// Origin-form path and query, `/` when the URL had none.
    public var path: String

    public init(scheme: String, host: String, port: Int, path: String = "/") {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
    }

    public var description: String { "\(scheme)://\(authority)\(path)" }

    /// `host:port`, with IPv6 literals in brackets.
    public var authority: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// The Host header a client would send: the port only when it is not the default.
    public var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (scheme == "https" ? 443 : 80) ? h : "\(h):\(port)"
    }

    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        case notAbsolute(String)
        case unsupportedScheme(String)
        case badAuthority(String)

        public var description: String {
            switch self {
            case .notAbsolute(let s): "expected an absolute URL such as http://host/path, got \"\(s)\""
            case .unsupportedScheme(let s): "unsupported scheme \"\(s)\" (http and https are supported)"
            case .badAuthority(let s): "invalid host or port in \"\(s)\""
            }
        }
    }

    /// Parses `scheme://authority[/path][?query]`.
    public init(absoluteURL text: String) throws(ParseError) {
        guard let schemeEnd = text.range(of: "://") else { throw .notAbsolute(text) }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let (host, port) = try Self.splitAuthority(String(authority), defaultPort: scheme == "https" ? 443 : 80)
        var path = String(rest[authorityEnd...])
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        self.init(scheme: scheme, host: host, port: port, path: path)
    }

    /// Parses a CONNECT request target, `host:port`.
    public init(connectAuthority text: String) throws(ParseError) {
        let (host, port) = try Self.splitAuthority(text, defaultPort: nil)
        self.init(scheme: "https", host: host, port: port, path: "")
    }

    static func splitAuthority(_ authority: String, defaultPort: Int?) throws(ParseError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badAuthority(authority) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw .badAuthority(authority) }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = Substring(authority)
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "\\" }) else {
            throw .badAuthority(authority)
        }
        let port: Int
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { throw .badAuthority(authority) }
            port = p
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw .badAuthority(authority)
        }
        return (String(host), port)
    }
}
