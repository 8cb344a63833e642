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

/// The certificates Kagami shows clients: one leaf per host name, all sharing one key (signing
/// a leaf costs one signature, no key generation), and one TLS context per name, cached.
final class InterceptionIdentities: Sendable {
    let authority: CertificateAuthority
    private let leafKey: Certificate.PrivateKey
    private let leafKeyForTLS: NIOSSLPrivateKey
    /// Sent after each leaf: clients that pin the CA's key, or build the chain only from what
    /// the server sends, need it.
    private let authorityForTLS: NIOSSLCertificate
    private let contexts = NIOLockedValueBox<[String: NIOSSLContext]>([:])
    static let maximumCachedContexts = 4096

    init(authority: CertificateAuthority) throws {
        self.authority = authority
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        self.leafKey = key
        self.leafKeyForTLS = try NIOSSLPrivateKey(bytes: Array(key.serializeAsPEM().pemString.utf8), format: .pem)
        self.authorityForTLS = try NIOSSLCertificate(bytes: Array(authority.certificatePEM.utf8), format: .pem)
    }

    /// The TLS server context presenting a certificate for `host`.
    func serverContext(for host: String) throws -> NIOSSLContext {
        let name = host.lowercased()
        if let cached = contexts.withLockedValue({ $0[name] }) { return cached }
        let leaf = try authority.issueLeaf(for: name, publicKey: leafKey.publicKey)
        let certificate = try NIOSSLCertificate(bytes: Array(leaf.serializeAsPEM().pemString.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate), .certificate(authorityForTLS)], privateKey: .privateKey(leafKeyForTLS))
        // A client offering h2 gets HTTP/2 (HTTP2ClientSide), any other HTTP/1.1.
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        contexts.withLockedValue { cache in
            if cache.count >= Self.maximumCachedContexts { cache.removeAll() }
            cache[name] = context
        }
        return context
    }
}

/// How Kagami talks TLS to servers.
struct UpstreamTLS: Sendable {
    /// Offers HTTP/1.1 only: for clients speaking HTTP/1.1.
    let context: NIOSSLContext
    /// Offers h2 and HTTP/1.1: for clients speaking HTTP/2.
    let http2Context: NIOSSLContext
    let verificationDisabled: Bool

    init(additionalTrustRootFiles: [String], insecure: Bool) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        if insecure {
            configuration.certificateVerification = .none
        } else {
            // The chain is verified here; the name by `ServerNameCheck`, against the host the
            // client asked for rather than the address connected to.
            configuration.certificateVerification = .noHostnameVerification
            configuration.additionalTrustRoots = try additionalTrustRootFiles.map { path in
                guard FileManager.default.isReadableFile(atPath: path) else {
                    throw InterceptionError("cannot read the trust anchor file \(path)")
                }
                return .file(path)
            }
        }
        self.context = try NIOSSLContext(configuration: configuration)
        configuration.applicationProtocols = ["h2", "http/1.1"]
        self.http2Context = try NIOSSLContext(configuration: configuration)
        self.verificationDisabled = insecure
    }
}

struct InterceptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

