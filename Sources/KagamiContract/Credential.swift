// What an operation's `security` asks a request to carry: the mock asks for it.
import KagamiJSON

/// One credential a security scheme puts in a request, named by the scheme.
public struct Credential: Sendable, Hashable, Codable {
    public enum Place: Sendable, Hashable, Codable {
        /// An API key in this header, query parameter or cookie.
        case header(String), query(String), cookie(String)
        /// The `Authorization` header, with this scheme (`Basic`, `Bearer`) when the security
        /// scheme names one (OAuth 2 and OpenID Connect: `Bearer`).
        case authorization(String?)
    }

    /// The security scheme's name in `components/securitySchemes`.
    public var scheme: String
    public var place: Place

    public init(scheme: String, place: Place) {
        self.scheme = scheme
        self.place = place
    }

    /// The scheme's credential, or nil for a scheme that puts nothing a request can be seen to
    /// carry (mutual TLS, an unknown type).
    public init?(scheme name: String, definition: JSONValue) {
        scheme = name
        switch definition["type"]?.stringValue?.lowercased() {
        case "apikey":
            guard let key = definition["name"]?.stringValue, !key.isEmpty else { return nil }
            switch definition["in"]?.stringValue {
            case "header": place = .header(key)
            case "query": place = .query(key)
            case "cookie": place = .cookie(key)
            default: return nil
            }
        case "http":
            place = .authorization(definition["scheme"]?.stringValue)
        case "oauth2", "openidconnect":
            place = .authorization("Bearer")
        default:
            return nil
        }
    }

    /// How a message names where the credential goes.
    public var placeDescription: String {
        switch place {
        case .header(let name): "header '\(name)'"
        case .query(let name): "query parameter '\(name)'"
        case .cookie(let name): "cookie '\(name)'"
        case .authorization(let scheme?): "Authorization header (\(scheme))"
        case .authorization(nil): "Authorization header"
        }
    }
}
