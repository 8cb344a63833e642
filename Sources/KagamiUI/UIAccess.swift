import Foundation
import Hummingbird
import KagamiJSON

/// Who may use the UI and API. On loopback: anyone on this machine, but only under a loopback
/// Host name (a web page elsewhere can't point its DNS name at the UI). Elsewhere: the token,
/// as `?token=` once (answered with a cookie), then the cookie, or `Authorization: Bearer`.
struct UIAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token else {
            if let authority = request.head.authority, !UIAccess.isLoopbackAuthority(authority) {
                return apiError(.forbidden, "the Kagami UI answers only to loopback names (127.0.0.1, localhost, [::1]), not \(authority)")
            }
            return try await next(request, context)
        }
        if request.headers[.authorization] == "Bearer \(token)" || request.cookies[UIAccess.cookieName]?.value == token {
            return try await next(request, context)
        }
        if request.uri.queryParameters.get("token") == token {
            var response = try await next(request, context)
            response.setCookie(Cookie(name: UIAccess.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        return apiError(.unauthorized, "this Kagami UI needs its token: open the address `kagami proxy` printed (with ?token=) or send Authorization: Bearer TOKEN")
    }
}

enum UIAccess {
    static let cookieName = "kagami_token"

    static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "::1", "localhost"].contains(host.lowercased()) || host.hasPrefix("127.")
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

/// A JSON error body `{"error": "..."}` with the status.
func apiError(_ status: HTTPResponse.Status, _ message: String) -> Response {
    jsonResponse(["error": .string(message)], status: status)
}

func jsonResponse(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    Response(
        status: status,
        headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
        body: .init(byteBuffer: ByteBuffer(string: value.serialized()))
    )
}
