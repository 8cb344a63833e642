import KagamiFlow

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
    public var authority: String { Authority(host: host, port: port).description }

    /// The Host header a client would send: the port only when it is not the default.
    public var hostHeader: String {
        Authority(host: host, port: port).text(omittingPort: AbsoluteURL.defaultPort(for: scheme))
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

    /// Parses `scheme://authority[/path][?query]` (`AbsoluteURL`); http and https only.
    public init(absoluteURL text: String) throws(ParseError) {
        let url: AbsoluteURL
        do {
            url = try AbsoluteURL(parsing: text)
        } catch {
            switch error {
            case .notAbsolute: throw .notAbsolute(text)
            case .badScheme(let scheme): throw .unsupportedScheme(scheme)
            case .badAuthority(let authority): throw .badAuthority(authority)
            }
        }
        guard url.scheme == "http" || url.scheme == "https" else { throw .unsupportedScheme(url.scheme) }
        self.init(scheme: url.scheme, host: url.host, port: url.port, path: url.target)
    }

    /// Parses a CONNECT request target, `host:port`.
    public init(connectAuthority text: String) throws(ParseError) {
        guard let authority = Authority(parsing: text, defaultPort: nil) else { throw .badAuthority(text) }
        self.init(scheme: "https", host: authority.host, port: authority.port, path: "")
    }
}
