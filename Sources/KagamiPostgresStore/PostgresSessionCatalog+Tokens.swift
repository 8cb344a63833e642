import Crypto
import Foundation
import KagamiStore
import PostgresNIO

// The tokens of the users of `kagami serve`, one per name, kept in the database as the SHA-256
// of the secret: a copy of the database gives no one access.
extension PostgresSessionCatalog {
    /// Makes a token for `name` and returns its secret, which nothing shows again.
    public func addToken(name: String, right: AccessRight, createdBy: String) async throws -> String {
        guard !name.isEmpty else { throw FlowStoreError("a token needs a name: the user it is for") }
        let secret = Self.newSecret()
        let digest = Self.digest(secret)
        var added = false
        do {
            let rows = try await client.query("""
                INSERT INTO access_token (name, access, secret_sha256, created_by)
                VALUES (\(name), \(right.rawValue), \(digest), \(createdBy))
                ON CONFLICT (name) DO NOTHING RETURNING id
                """, logger: logger)
            for try await _ in rows.decode(Int64.self) { added = true }
        } catch {
            throw FlowStoreError("could not add a token at \(location): \(PostgresFlowStore.describe(error))")
        }
        guard added else {
            throw FlowStoreError("\(location) already has a token named \(name): remove it first (kagami serve token remove \(name))")
        }
        return secret
    }

    /// Every token, by name; never their secrets.
    public func tokens() async throws -> [AccessToken] {
        do {
            let rows = try await client.query(
                "SELECT name, access, created_by, created_at FROM access_token ORDER BY name", logger: logger)
            var tokens: [AccessToken] = []
            for try await (name, access, createdBy, createdAt) in rows.decode((String, String, String, Date).self) {
                tokens.append(AccessToken(name: name, right: AccessRight(rawValue: access) ?? .read, createdBy: createdBy, createdAt: createdAt))
            }
            return tokens
        } catch {
            throw FlowStoreError("could not list the tokens at \(location): \(PostgresFlowStore.describe(error))")
        }
    }

    /// Removes the token of `name`; false when there was none.
    public func removeToken(name: String) async throws -> Bool {
        do {
            let rows = try await client.query("DELETE FROM access_token WHERE name = \(name) RETURNING id", logger: logger)
            var removed = false
            for try await _ in rows.decode(Int64.self) { removed = true }
            return removed
        } catch {
            throw FlowStoreError("could not remove the token at \(location): \(PostgresFlowStore.describe(error))")
        }
    }

    public func token(presenting secret: String) async throws -> (name: String, right: AccessRight)? {
        guard secret.hasPrefix(Self.secretPrefix) else { return nil }
        let rows = try await client.query(
            "SELECT name, access FROM access_token WHERE secret_sha256 = \(Self.digest(secret))", logger: logger)
        var found: (String, AccessRight)?
        for try await (name, access) in rows.decode((String, String).self) {
            found = AccessRight(rawValue: access).map { (name, $0) }
        }
        return found
    }

    /// `kagami_` and 256 random bits in hex: the prefix makes a leaked one easy to search for.
    static let secretPrefix = "kagami_"

    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return secretPrefix + (0..<4).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    static func digest(_ secret: String) -> Data {
        Data(SHA256.hash(data: Data(secret.utf8)))
    }
}
