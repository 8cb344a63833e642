import Foundation
import KagamiStore
import NIOSSL
import PostgresNIO

/// Where a shared store lives: a `postgres://user[:password]@host[:port]/database` URL, with
/// libpq's `sslmode` (disable, allow, prefer, require, verify-ca, verify-full) and `sslrootcert`.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tlsMode: TLSMode
    /// CA certificates (PEM) that a server's certificate must chain to under verify-ca and
    /// verify-full; the system's trust store when nil.
    public var rootCertificatePath: String?

    /// True for the URLs this driver takes, so a command can tell them from a file path.
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// `environment` supplies `PGPASSWORD` when the URL has no password, as libpq does.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isPostgresURL(text), let components = URLComponents(string: text) else {
            throw FlowStoreError("\(text) is not a postgres://user@host/database URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw FlowStoreError("\(Self.redacting(text)) names no host")
        }
        // URLComponents keeps the brackets of an IPv6 literal.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? 5432
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw FlowStoreError("\(Self.redacting(text)) names no user (postgres://USER@host/database)")
        }
        self.user = user
        password = components.percentEncodedPassword?.removingPercentEncoding ?? environment["PGPASSWORD"]
        let path = components.percentEncodedPath.removingPercentEncoding ?? ""
        let database = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !database.isEmpty, !database.contains("/") else {
            throw FlowStoreError("\(Self.redacting(text)) names no database (postgres://user@host/DATABASE)")
        }
        self.database = database
        tlsMode = .prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    let known = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw FlowStoreError("sslmode=\(item.value ?? "") in \(Self.redacting(text)): expected one of \(known)")
                }
                tlsMode = mode
            case "sslrootcert":
                rootCertificatePath = item.value
            default:
                throw FlowStoreError("\(Self.redacting(text)): unknown parameter \(item.name) (sslmode and sslrootcert are read)")
            }
        }
    }

    /// The URL without its password: what messages and banners show.
    public var description: String {
        let authority = host.contains(":") ? "[\(host)]" : host
        var text = "postgres://\(user)@\(authority):\(port)/\(database)"
        if tlsMode != .prefer { text += "?sslmode=\(tlsMode.rawValue)" }
        return text
    }

    static func redacting(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "…"
        return components.string ?? text
    }

    /// What libpq's mode asks of the server: nil for no TLS, else TLS with this configuration,
    /// either required or taken when the server offers it.
    func tlsRequest() -> (configuration: TLSConfiguration, required: Bool)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable:
            return nil
        case .allow, .prefer:
            // As libpq: encryption when the server offers it, no certificate check.
            configuration.certificateVerification = .none
            return (configuration, false)
        case .require:
            configuration.certificateVerification = .none
            return (configuration, true)
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        if let rootCertificatePath {
            configuration.trustRoots = .file(rootCertificatePath)
        }
        return (configuration, true)
    }

    /// The name the server's certificate must carry under verify-full, sent as SNI. An address
    /// can't be sent as SNI: for `127.0.0.1` or `[::1]` none is, and NIOSSL checks the
    /// certificate's IP address entries against the address connected to instead.
    var tlsServerName: String? {
        guard tlsMode == .verifyFull, !Self.isAddress(host) else { return nil }
        return host
    }

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Kagami's connections set these whatever the server's defaults are: a flow is durable
    /// when its transaction commits.
    static let startupParameters = [("application_name", "kagami"), ("synchronous_commit", "on")]

    /// One connection, for opening the store: its errors (refused, no such database, wrong
    /// password) come back at once, where the pool would keep trying.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let rootCertificatePath, tlsMode == .verifyCA || tlsMode == .verifyFull,
           !FileManager.default.isReadableFile(atPath: rootCertificatePath) {
            throw FlowStoreError("sslrootcert=\(rootCertificatePath): no readable file of CA certificates (PEM) there")
        }
        let tls: PostgresConnection.Configuration.TLS
        switch tlsRequest() {
        case nil: tls = .disable
        case let (configuration, required)?:
            let context = try NIOSSLContext(configuration: configuration)
            tls = required ? .require(context) : .prefer(context)
        }
        var connection = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        connection.options.connectTimeout = .seconds(10)
        connection.options.additionalStartupParameters = Self.startupParameters
        connection.options.tlsServerName = tlsServerName
        return connection
    }

    func clientConfiguration(maximumConnections: Int) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch tlsRequest() {
        case nil: tls = .disable
        case let (configuration, required)?: tls = required ? .require(configuration) : .prefer(configuration)
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.additionalStartupParameters = Self.startupParameters
        configuration.options.tlsServerName = tlsServerName
        return configuration
    }
}
