import Foundation
import Hummingbird
import NIOCore
import KagamiStore
import Synchronization

/// Who may use `kagami serve`: whoever presents a token, on loopback too — as `?token=` once
/// (answered with a cookie), then the cookie, or `Authorization: Bearer` — either the server's
/// own (`--token`, else the installation's `AdminToken`: every right) or a user's, kept in the
/// store (`kagami serve token add`): a read token browses and exports sessions, a write token
/// also imports into them and deletes from them. On loopback it answers only to loopback Host
/// names (DNS rebinding); requests that change something must come from the UI's own pages or a
/// program, never from another site (`UIAccess.crossSiteRefusal`); wrong tokens are counted per
/// client address (`TokenGuesses`).
final class SessionsAccess: Sendable {
    let token: String
    let loopbackOnly: Bool
    let catalog: any SessionCatalog
    private let guesses = TokenGuesses()
    /// What a secret was found to be, for a while, so a page's requests don't each query the
    /// store; a removed token stops working within this time.
    private let known = Mutex<[String: (found: (name: String, right: AccessRight)?, until: ContinuousClock.Instant)]>([:])
    static let remembered: Duration = .seconds(10)

    init(token: String, loopbackOnly: Bool, catalog: any SessionCatalog) {
        self.token = token
        self.loopbackOnly = loopbackOnly
        self.catalog = catalog
    }

    struct Grant: Sendable {
        var right: AccessRight
        /// Set as the cookie when the token came in the query.
        var cookie: String?
    }

    enum Outcome: Sendable {
        case granted(Grant)
        case refused(APIError)
    }

    /// `path` is the request's path within a session (`/api/export.har`) or on the listing.
    func check(_ request: Request, path: String, from peer: SocketAddress?) async -> Outcome {
        if let refusal = UIAccess.crossSiteRefusal(request) {
            return .refused(APIError(.forbidden, refusal))
        }
        if loopbackOnly, let authority = request.head.authority, !UIAccess.isLoopbackAuthority(authority) {
            return .refused(APIError(.forbidden, "kagami serve answers only to loopback names (127.0.0.1, localhost, [::1]), not \(authority)"))
        }
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let query = request.uri.queryParameters.get("token")
        let presented = [bearer, request.cookies[UIAccess.cookieName]?.value, query].compactMap { $0 }.filter { !$0.isEmpty }
        guard !presented.isEmpty else {
            if let limit = guesses.limit(for: peer) { return .refused(limit) }
            return .refused(APIError(.unauthorized, "kagami serve needs a token: open the address it printed (with ?token=), or send Authorization: Bearer TOKEN (a user's token from `kagami serve token add`)"))
        }
        var holder: (name: String, right: AccessRight)?
        var accepted = presented.first { AdminToken.matches($0, token) }
        if accepted != nil {
            holder = ("the server's token", .write)
        } else {
            // An address that has guessed too often is not looked up in the store at all.
            if let limit = guesses.limit(for: peer) { return .refused(limit) }
            for secret in presented {
                do {
                    holder = try await lookUp(secret)
                } catch {
                    return .refused(APIError(.serviceUnavailable, "could not check the token against \(catalog.description): \(error)"))
                }
                if holder != nil {
                    accepted = secret
                    break
                }
            }
        }
        guard let holder, let accepted else {
            if let limit = guesses.wrong(from: peer) { return .refused(limit) }
            return .refused(APIError(.unauthorized, "kagami serve does not know this token: ask for one (kagami serve token add NAME --read|--write)"))
        }
        if Self.needsWrite(request, path: path), holder.right < .write {
            return .refused(APIError(.forbidden, "the token of \(holder.name) may only read: importing and deleting need a write token"))
        }
        return .granted(Grant(right: holder.right, cookie: accepted == query ? accepted : nil))
    }

    private func lookUp(_ secret: String) async throws -> (name: String, right: AccessRight)? {
        let now = ContinuousClock.now
        if let entry = known.withLock({ $0[secret] }), entry.until > now { return entry.found }
        let found = try await catalog.token(presenting: secret)
        known.withLock { known in
            if known.count > 1_000 { known.removeAll() }
            known[secret] = (found, now + Self.remembered)
        }
        return found
    }

    /// Anything but reading: every method beyond GET, HEAD and OPTIONS, except the POSTs that
    /// only compute from a session (an export of chosen exchanges, a drafted description).
    static func needsWrite(_ request: Request, path: String) -> Bool {
        switch request.method {
        case .get, .head, .options: return false
        case .post: return !["/api/export.har", "/api/draft"].contains(path)
        default: return true
        }
    }
}
