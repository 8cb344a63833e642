import Foundation
import Hummingbird
import KagamiJSON
import KagamiProxy

/// Who may use the UI and API. On loopback: anyone on this machine, but only under a loopback
/// Host name (a web page elsewhere can't point its DNS name at the UI). Elsewhere: the token,
/// as `?token=` once (answered with a cookie), then the cookie, or `Authorization: Bearer`.
/// Either way, a request that changes something must come from the UI's own pages or from a
/// program, never from another site (`UIAccess.crossSiteRefusal`).
struct UIAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = UIAccess.crossSiteRefusal(request) {
            return APIError(.forbidden, refusal).response
        }
        guard let token else {
            if let authority = request.head.authority, !UIAccess.isLoopbackAuthority(authority) {
                return APIError(.forbidden, "the Kagami UI answers only to loopback names (127.0.0.1, localhost, [::1]), not \(authority)").response
            }
            return try await next(request, context)
        }
        if request.headers[.authorization] == "Bearer \(token)" || request.cookies[UIAccess.cookieName]?.value == token {
            return try await next(request, context)
        }
        if request.uri.queryParameters.get("token") == token {
            // An error answered from a route gets the cookie too.
            var response: Response
            do {
                response = try await next(request, context)
            } catch let error as APIError {
                response = error.response
            }
            response.setCookie(Cookie(name: UIAccess.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        return APIError(.unauthorized, "this Kagami UI needs its token: open the address `kagami proxy` printed (with ?token=) or send Authorization: Bearer TOKEN").response
    }
}

enum UIAccess {
    static let cookieName = "kagami_token"

    /// A loopback address written as one (127.0.0.0/8, ::1) or `localhost`: never a name that
    /// merely starts like one, such as `127.0.0.1.evil.example`.
    static func isLoopback(_ host: String) -> Bool {
        UpstreamAllowList.isLoopback(host: host)
    }

    /// Why a state-changing request (anything but GET, HEAD, OPTIONS) is refused, or nil.
    /// A page on another site can make a browser send "simple" requests — no preflight, form or
    /// text/plain bodies — with the user's cookies and from loopback. Browsers mark such
    /// requests with `Sec-Fetch-Site` and `Origin`, and can't give them a JSON or YAML content
    /// type without a preflight this API never approves.
    static func crossSiteRefusal(_ request: Request) -> String? {
        switch request.method {
        case .get, .head, .options: return nil
        default: break
        }
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" {
            return "refused a \(request.method) from another site (Sec-Fetch-Site: \(site)): the admin API changes things only for the Kagami UI's own pages and for programs"
        }
        if let origin = request.headers[.origin] {
            let authority = request.head.authority ?? ""
            guard let originAuthority = originAuthority(origin), originAuthority == authority.lowercased() else {
                return "refused a \(request.method) from the page at \(origin): the admin API changes things only for the Kagami UI's own pages and for programs"
            }
        }
        if request.method != .delete {
            let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard isStructuredType(type) else {
                return "a \(request.method) to the admin API needs Content-Type: application/json (or YAML where the route reads it), got \(type.isEmpty ? "none" : type)"
            }
        }
        return nil
    }

    /// JSON or YAML media types: none of them can be sent cross-site without a preflight.
    static func isStructuredType(_ type: String) -> Bool {
        type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
            || type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml"
    }

    /// `http://127.0.0.1:8889` → `127.0.0.1:8889`, lowercased; nil for `null` or garbage.
    static func originAuthority(_ origin: String) -> String? {
        guard let separator = origin.range(of: "://") else { return nil }
        let authority = origin[separator.upperBound...]
        guard !authority.isEmpty, !authority.contains("/") else { return nil }
        return authority.lowercased()
    }

    /// `127.0.0.1:8889`, `localhost`, `[::1]:8889`.
    static func isLoopbackAuthority(_ authority: String) -> Bool {
        var host = Substring(authority)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return isLoopback(String(host))
    }

    /// 128 random bits, hex.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &generator)) }.joined()
    }
}

/// Every error the page and the admin API answer: the status and a JSON body
/// `{"error": "<message>", …details}`. Handlers throw it (Hummingbird's router renders any
/// `HTTPResponseError`); the access checks, which answer before any route, return `response`.
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    var message: String
    /// Members after `error` for a page to point at what to fix: `field`, `line`, `column`…
    var details: JSONObject

    init(_ status: HTTPResponse.Status, _ message: String, details: JSONObject = [:]) {
        self.status = status
        self.message = message
        self.details = details
    }

    /// What the proxy's tools (rules, breakpoints, repeat…) answer when the UI runs without a
    /// proxy (`kagami serve`, a test's UI): 503, the same from each.
    static let noProxy = APIError(.serviceUnavailable, "no proxy runs in this process (the UI was started without one)")

    /// No exchange with this id in the session.
    static func missing(_ id: String?) -> APIError {
        APIError(.notFound, "no exchange with id \(id ?? "") in this session")
    }

    var response: Response {
        var object: JSONObject = ["error": .string(message)]
        object.merge(details) { _, detail in detail }
        return jsonResponse(.object(object), status: status)
    }

    func response(from request: Request, context: some RequestContext) -> Response { response }
}

/// Hummingbird's own errors (a body over the size a route reads, a route that doesn't exist)
/// answered as `APIError`s too, so every error has the same body.
struct HummingbirdErrors<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            throw APIError(error.status, error.body ?? "\(error.status.code) \(error.status.reasonPhrase): \(request.uri.path)")
        }
    }
}

func jsonResponse(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    Response(
        status: status,
        headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
        body: .init(byteBuffer: ByteBuffer(string: value.serialized()))
    )
}
