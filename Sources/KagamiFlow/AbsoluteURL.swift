/// An absolute URL split the way a proxy needs it, `scheme://[userinfo@]host[:port][/path][?query][#fragment]`
/// (RFC 3986 §3): the one parser for request targets, rules and archives. User info and the
/// fragment are dropped (neither goes on the wire), an empty port means the scheme's default,
/// and the target is the origin form (`/` when the URL has no path).
public struct AbsoluteURL: Sendable, Hashable {
    /// Lowercased.
    public var scheme: String
    public var authority: Authority
    /// Path and query, starting with `/`.
    public var target: String

    public var host: String { authority.host }
    public var port: Int { authority.port }

    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        case notAbsolute(String)
        case badScheme(String)
        case badAuthority(String)

        public var description: String {
            switch self {
            case .notAbsolute(let text): "expected an absolute URL such as http://host/path, got \"\(text)\""
            case .badScheme(let scheme): "\"\(scheme)\" is not a URL scheme (a letter, then letters, digits, '+', '-' or '.')"
            case .badAuthority(let text): "invalid host or port in \"\(text)\""
            }
        }
    }

    public init(scheme: String, authority: Authority, target: String) {
        self.scheme = scheme
        self.authority = authority
        self.target = target
    }

    public init(parsing text: String) throws(ParseError) {
        guard let separator = text.range(of: "://") else { throw .notAbsolute(text) }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { throw .badScheme(String(scheme)) }
        self.scheme = scheme.lowercased()
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authorityText = rest[..<authorityEnd]
        if let at = authorityText.lastIndex(of: "@") { authorityText = authorityText[authorityText.index(after: at)...] }
        guard let authority = Authority(parsing: String(authorityText), defaultPort: Self.defaultPort(for: self.scheme)) else {
            throw .badAuthority(String(authorityText))
        }
        self.authority = authority
        var target = rest[authorityEnd...]
        if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
        self.target = target.isEmpty || target.hasPrefix("?") ? "/" + target : String(target)
    }

    /// 443 for `https` and `wss`, 80 otherwise.
    public static func defaultPort(for scheme: String) -> Int {
        switch scheme.lowercased() {
        case "https", "wss": 443
        default: 80
        }
    }

    /// The URL again, with the port only when it is not the scheme's default.
    public var text: String {
        "\(scheme)://\(authority.text(omittingPort: Self.defaultPort(for: scheme)))\(target)"
    }
}

/// A host and a port, written `host:port` with an IPv6 literal in brackets (`[::1]:8080`): the
/// one way Kagami reads and writes an authority.
public struct Authority: Sendable, Hashable, CustomStringConvertible {
    /// Without brackets.
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, `[v6]:port`, or without the port (`host`, `[v6]`) when `defaultPort` is
    /// given and the text has none; an empty port (`host:`) is the default too. Nil for what
    /// `split` refuses.
    public init?(parsing text: String, defaultPort: Int?) {
        guard let (host, port) = Self.split(text), let port = port ?? defaultPort else { return nil }
        self.init(host: host, port: port)
    }

    /// The host (without brackets) and the port, if any, of `host`, `host:port`, `[v6]` or
    /// `[v6]:port`; an empty port (`host:`) counts as none. Nil for an empty host, a host with
    /// spaces, slashes or `@`, an IPv6 literal outside brackets, or a port outside 1...65535.
    public static func split(_ text: String) -> (host: String, port: Int?)? {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            // An IPv6 literal must be in brackets: `::1` alone is ambiguous.
            if host.utf8.contains(UInt8(ascii: ":")) { return nil }
        } else {
            host = Substring(text)
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "\\" || $0 == "@" }) else { return nil }
        guard let portText, !portText.isEmpty else { return (String(host), nil) }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (1...65535).contains(port) else {
            return nil
        }
        return (String(host), port)
    }

    /// The host as it goes in a URL or a Host header: IPv6 literals in brackets.
    public var bracketedHost: String { Self.bracketed(host) }

    /// `host` as it goes in a URL or a Host header: an IPv6 literal in brackets.
    public static func bracketed(_ host: String) -> String { host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host }

    /// `host:port`.
    public var description: String { "\(bracketedHost):\(port)" }

    /// `host:port`, or `host` when the port is `defaultPort`.
    public func text(omittingPort defaultPort: Int) -> String {
        port == defaultPort ? bracketedHost : description
    }
}
