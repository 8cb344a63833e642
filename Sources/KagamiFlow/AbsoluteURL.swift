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

    /// Read byte by byte: every delimiter is ASCII, which never occurs inside another
    /// character's UTF-8 (this runs on every request a forward proxy receives).
    public init(parsing text: String) throws(ParseError) {
        let bytes = text.utf8
        guard let separator = Self.firstSchemeSeparator(in: bytes) else { throw .notAbsolute(text) }
        let schemeBytes = bytes[..<separator]
        guard let first = schemeBytes.first, Self.isASCIILetter(first),
              schemeBytes.allSatisfy({ Self.isASCIILetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { throw .badScheme(String(text[..<separator])) }
        let scheme = String(decoding: schemeBytes.map { $0 | 0x20 }, as: UTF8.self)
        self.scheme = scheme
        let restStart = bytes.index(separator, offsetBy: 3)
        let authorityEnd = bytes[restStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var authorityStart = restStart
        if let at = bytes[restStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { authorityStart = bytes.index(after: at) }
        let authorityText = String(text[authorityStart..<authorityEnd])
        guard let authority = Authority(parsing: authorityText, defaultPort: Self.defaultPort(for: scheme)) else {
            throw .badAuthority(authorityText)
        }
        self.authority = authority
        let targetEnd = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let target = text[authorityEnd..<targetEnd]
        self.target = target.isEmpty || target.utf8.first == UInt8(ascii: "?") ? "/" + target : String(target)
    }

    /// Where the first `://` starts.
    private static func firstSchemeSeparator(in bytes: String.UTF8View) -> String.Index? {
        var index = bytes.startIndex
        while let colon = bytes[index...].firstIndex(of: UInt8(ascii: ":")) {
            let rest = bytes[bytes.index(after: colon)...]
            if rest.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) { return colon }
            index = bytes.index(after: colon)
        }
        return nil
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
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
        let bytes = text.utf8
        var host: Substring
        var portText: Substring?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = text[bytes.index(after: bytes.startIndex)..<close]
            let after = bytes.index(after: close)
            if after < bytes.endIndex {
                guard bytes[after] == UInt8(ascii: ":") else { return nil }
                portText = text[bytes.index(after: after)...]
            }
        } else if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            host = text[..<colon]
            portText = text[bytes.index(after: colon)...]
            // An IPv6 literal must be in brackets: `::1` alone is ambiguous.
            if host.utf8.contains(UInt8(ascii: ":")) { return nil }
        } else {
            host = Substring(text)
        }
        guard !host.isEmpty,
              !host.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "@") })
        else { return nil }
        guard let portText, !portText.isEmpty else { return (String(host), nil) }
        var port = 0
        for byte in portText.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            port = port * 10 + Int(byte - UInt8(ascii: "0"))
            guard port <= 65535 else { return nil }
        }
        guard port >= 1 else { return nil }
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
