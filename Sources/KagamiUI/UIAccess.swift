import Foundation
import Hummingbird
import KagamiFlow
import KagamiJSON
import KagamiControl
import NIOCore
import Synchronization

/// The request context of Kagami's web servers: Hummingbird's, and the client's address, for
/// the access checks.
struct UIRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Who may use the UI and API: whoever presents the token — as `?token=` once (answered with a
/// cookie), then the cookie, or `Authorization: Bearer` — on loopback too, since the API reads
/// and writes files as the user running Kagami. Refused whatever they present: a loopback UI
/// asked for under another name (DNS rebinding), and a change requested by another site
/// (`UIAccess.crossSiteRefusal`). Wrong tokens are counted per client address (`TokenGuesses`).
/// (The proxy itself never connects to the UI: `OwnListeners` in the engine.)
struct UIAccessMiddleware: RouterMiddleware {
    typealias Context = UIRequestContext
    let token: String
    /// The UI listens on loopback only: it answers only to loopback Host names.
    let loopbackOnly: Bool
    let guesses: TokenGuesses

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = UIAccess.crossSiteRefusal(request) {
            return APIError(.forbidden, refusal).response
        }
        if loopbackOnly, let authority = request.head.authority, !UIAccess.isLoopbackAuthority(authority) {
            return APIError(.forbidden, "the Kagami UI answers only to loopback names (127.0.0.1, localhost, [::1]), not \(authority)").response
        }
        let presented = UIAccess.presentedToken(request, matching: token)
        switch presented {
        case .cookieOrHeader:
            return try await next(request, context)
        case .query:
            // An error answered from a route gets the cookie too.
            var response: Response
            do {
                response = try await next(request, context)
            } catch let error as APIError {
                response = error.response
            }
            response.setCookie(UIAccess.cookie(token))
            return response
        case .wrong:
            return (guesses.wrong(from: context.remoteAddress) ?? UIAccess.missingToken).response
        case .none:
            return (guesses.limit(for: context.remoteAddress) ?? UIAccess.missingToken).response
        }
    }
}

/// Wrong tokens counted per client address: past `allowed` within `window`, that address gets
/// 429 for every request without the right token until the window has passed. The right token
/// always works, so a local user can't lock the owner out by guessing.
final class TokenGuesses: Sendable {
    let allowed: Int
    let window: Duration
    private let failures = Mutex<[String: (count: Int, since: ContinuousClock.Instant)]>([:])

    init(allowed: Int = 20, window: Duration = .seconds(60)) {
        self.allowed = allowed
        self.window = window
    }

    /// 429 when `peer` has sent too many wrong tokens within the window, else nil.
    func limit(for peer: SocketAddress?) -> APIError? {
        count(peer, adding: 0)
    }

    /// Counts a wrong token from `peer`: the 429 when that is one too many, else nil.
    func wrong(from peer: SocketAddress?) -> APIError? {
        count(peer, adding: 1)
    }

    private func count(_ peer: SocketAddress?, adding added: Int) -> APIError? {
        let address = peer?.ipAddress ?? "unknown"
        let now = ContinuousClock.now
        let (count, since) = failures.withLock { failures -> (Int, ContinuousClock.Instant) in
            var entry = failures[address] ?? (0, now)
            if now - entry.since > window { entry = (0, now) }
            guard added > 0 || entry.count > 0 else { return entry }
            entry.count += added
            if failures.count > 10_000 { failures = failures.filter { now - $0.value.since <= window } }
            failures[address] = entry
            return entry
        }
        guard count > allowed else { return nil }
        let wait = max(1, Int((window - (now - since)).components.seconds) + 1)
        return APIError(
            .tooManyRequests, "\(count) wrong tokens from \(address) within \(window.components.seconds) s: wait \(wait) s (the right token still works)",
            details: ["retryAfter": .integer(wait)])
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
        guard let (host, _) = Authority.split(authority) else { return false }
        return isLoopback(host)
    }

    static let missingToken = APIError(
        .unauthorized,
        "the Kagami admin API needs its token: open the web UI at the address `kagami proxy` printed (it carries ?token=), or send Authorization: Bearer followed by the token in \(AdminToken.path)")

    enum Presented: Equatable {
        case cookieOrHeader, query, wrong, none
    }

    /// Where the request carries `token`, or whether it carries another one.
    static func presentedToken(_ request: Request, matching token: String) -> Presented {
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let cookie = request.cookies[cookieName]?.value
        if let bearer, AdminToken.matches(bearer, token) { return .cookieOrHeader }
        if let cookie, AdminToken.matches(cookie, token) { return .cookieOrHeader }
        let query = request.uri.queryParameters.get("token")
        if let query, AdminToken.matches(query, token) { return .query }
        return [bearer, cookie, query].contains { $0?.isEmpty == false } ? .wrong : .none
    }

    /// The cookie a browser keeps the token in: never sent by another site's requests, never
    /// read by scripts.
    static func cookie(_ token: String) -> Cookie {
        Cookie(name: cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict)
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
