import KagamiControl
import Crypto
import Foundation
import KagamiCertificates
import KagamiRules
import NIOConcurrencyHelpers
import NIOSSL
import X509

/// What HTTPS interception needs: Kagami's CA, which hosts to intercept, and how to check the
/// servers' certificates.
public struct InterceptionConfiguration: Sendable {
    public var authority: CertificateAuthority
    public var sslProxying: SSLProxyingList
    /// Extra trust anchors (PEM files) for servers' certificates, besides the system's.
    public var additionalTrustRootFiles: [String]
    /// Turns off checks of servers' certificates; recorded on every exchange it affects.
    public var insecureUpstream: Bool

    public init(authority: CertificateAuthority, sslProxying: SSLProxyingList = SSLProxyingList(), additionalTrustRootFiles: [String] = [], insecureUpstream: Bool = false) {
        self.authority = authority
        self.sslProxying = sslProxying
        self.additionalTrustRootFiles = additionalTrustRootFiles
        self.insecureUpstream = insecureUpstream
    }
}

/// The certificates Kagami shows clients: one leaf per host name, all sharing one P-256 key
/// (signing a leaf costs one signature, no key generation), and one TLS server context per name,
/// cached. Keeping the context is what lets a client resume its TLS session on a later
/// connection: BoringSSL's session cache and ticket keys belong to the context, so a context made
/// per connection would refuse every ticket it did not issue itself.
final class InterceptionIdentities: Sendable {
    /// What a client is shown for one host name.
    struct HostIdentity: Sendable {
        let leaf: Certificate
        let context: NIOSSLContext
    }

    let authority: CertificateAuthority
    private let leafKey: Certificate.PrivateKey
    private let leafKeyForTLS: NIOSSLPrivateKey
    /// Sent after each leaf: clients that pin the CA's key, or build the chain only from what
    /// the server sends, need it.
    private let authorityForTLS: NIOSSLCertificate
    private let identities = NIOLockedValueBox<[String: HostIdentity]>([:])
    static let maximumCachedIdentities = 4096

    init(authority: CertificateAuthority) throws {
        self.authority = authority
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        self.leafKey = key
        self.leafKeyForTLS = try NIOSSLPrivateKey(bytes: Array(key.serializeAsPEM().pemString.utf8), format: .pem)
        self.authorityForTLS = try NIOSSLCertificate(bytes: Array(authority.certificatePEM.utf8), format: .pem)
    }

    /// The TLS server context presenting a certificate for `host`.
    func serverContext(for host: String) throws -> NIOSSLContext {
        try identity(for: host).context
    }

    /// The leaf and context for `host` (names compare case-insensitively), made on first use.
    func identity(for host: String) throws -> HostIdentity {
        let name = host.lowercased()
        if let cached = identities.withLockedValue({ $0[name] }) { return cached }
        let leaf = try authority.issueLeaf(for: name, publicKey: leafKey.publicKey)
        let certificate = try NIOSSLCertificate(bytes: Array(leaf.serializeAsPEM().pemString.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate), .certificate(authorityForTLS)], privateKey: .privateKey(leafKeyForTLS))
        // A client offering h2 gets HTTP/2 (HTTP2ClientSide), any other HTTP/1.1.
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let made = HostIdentity(leaf: leaf, context: try NIOSSLContext(configuration: configuration))
        // Two connections for a new name may race here: the first one stored wins, so every
        // later connection resumes against the same context.
        return identities.withLockedValue { cache in
            if let stored = cache[name] { return stored }
            if cache.count >= Self.maximumCachedIdentities { cache.removeAll() }
            cache[name] = made
            return made
        }
    }
}

/// How Kagami talks TLS to servers: one client context per ALPN offer, shared by every server
/// connection of the proxy whatever the host.
struct UpstreamTLS: Sendable {
    /// Offers HTTP/1.1 only: for clients speaking HTTP/1.1.
    let context: NIOSSLContext
    /// Offers h2 and HTTP/1.1: for clients speaking HTTP/2.
    let http2Context: NIOSSLContext
    let verificationDisabled: Bool

    /// What decides how servers' certificates are checked. An anchor file counts by its
    /// contents too, so a file rewritten between two proxies gives other settings.
    struct Trust: Hashable, Sendable {
        struct Anchor: Hashable, Sendable {
            var path: String
            var contents: Data
        }
        var anchors: [Anchor]
        var insecure: Bool

        init(additionalTrustRootFiles: [String], insecure: Bool) throws {
            self.insecure = insecure
            // Unchecked certificates need no anchors.
            self.anchors = insecure ? [] : try additionalTrustRootFiles.map { path in
                guard let contents = FileManager.default.contents(atPath: path) else {
                    throw InterceptionError("cannot read the trust anchor file \(path)")
                }
                return Anchor(path: path, contents: contents)
            }
        }
    }

    /// Contexts already built in this process, by trust settings: loading the system trust store
    /// into a context takes tens of milliseconds, so proxies started in one process (KagamiKit,
    /// tests) with the same settings share them.
    private static let built = NIOLockedValueBox<(contexts: [Trust: UpstreamTLS], order: [Trust])>(([:], []))
    /// Past this many settings the oldest are dropped (proxies using them keep theirs).
    static let maximumCachedTrusts = 16

    /// The contexts for these settings, built on first use in the process.
    static func shared(additionalTrustRootFiles: [String], insecure: Bool) throws -> UpstreamTLS {
        let trust = try Trust(additionalTrustRootFiles: additionalTrustRootFiles, insecure: insecure)
        if let cached = built.withLockedValue({ $0.contexts[trust] }) { return cached }
        let made = try UpstreamTLS(trust: trust)
        return built.withLockedValue { cache in
            if let stored = cache.contexts[trust] { return stored }
            if cache.order.count >= maximumCachedTrusts {
                cache.contexts[cache.order.removeFirst()] = nil
            }
            cache.contexts[trust] = made
            cache.order.append(trust)
            return made
        }
    }

    private init(trust: Trust) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        if trust.insecure {
            configuration.certificateVerification = .none
        } else {
            // The chain is verified here; the name by `UpstreamTLSHandshake`, against the host the
            // client asked for rather than the address connected to.
            configuration.certificateVerification = .noHostnameVerification
            // Built from the bytes the settings were keyed by, not read again from the path.
            configuration.additionalTrustRoots = try trust.anchors.map { anchor in
                let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(anchor.contents))
                guard let certificates, !certificates.isEmpty else {
                    throw InterceptionError("the trust anchor file \(anchor.path) holds no PEM certificate")
                }
                return .certificates(certificates)
            }
        }
        self.context = try NIOSSLContext(configuration: configuration)
        configuration.applicationProtocols = ["h2", "http/1.1"]
        self.http2Context = try NIOSSLContext(configuration: configuration)
        self.verificationDisabled = trust.insecure
    }
}

struct InterceptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

