import Foundation
import KagamiCertificates
import NIOSSL
import X509
import Crypto

/// A throwaway CA for test servers, and server certificates signed by it: valid, expired, or
/// for the wrong name.
public struct TestCertificates: Sendable {
    public let authority: CertificateAuthority
    public let directory: String

    /// A new CA in a fresh temporary folder (`caPath` is its PEM file, to trust it).
    public static func make() throws -> TestCertificates {
        let directory = NSTemporaryDirectory() + "kagami-test-ca-" + UUID().uuidString
        return TestCertificates(authority: try CertificateAuthority.create(directory: directory), directory: directory)
    }

    public var caPath: String { authority.certificatePath }

    public enum Kind: Sendable {
        case valid
        case expired
        case wrongName
        /// Only the address 127.0.0.1 as its name, whatever host is asked for.
        case loopbackAddressOnly
    }

    /// A TLS server identity for `host` (a name or an IP address).
    public func serverIdentity(for host: String, kind: Kind = .valid) throws -> ServerIdentity {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let certificate: Certificate
        switch kind {
        case .valid:
            certificate = try authority.issueLeaf(for: host, publicKey: key.publicKey)
        case .expired:
            certificate = try authority.issueLeaf(for: host, publicKey: key.publicKey, now: Date().addingTimeInterval(-400 * 86_400))
        case .wrongName:
            certificate = try authority.issueLeaf(for: "wrong.invalid", publicKey: key.publicKey)
        case .loopbackAddressOnly:
            certificate = try authority.issueLeaf(for: "127.0.0.1", publicKey: key.publicKey)
        }
        let certificatePEM = try certificate.serializeAsPEM().pemString
        let keyPEM = try key.serializeAsPEM().pemString
        return ServerIdentity(
            certificate: try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem),
            privateKey: try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem),
            certificatePEM: certificatePEM, privateKeyPEM: keyPEM
        )
    }
}

/// A certificate and key a test server presents.
public struct ServerIdentity: Sendable {
    public let certificate: NIOSSLCertificate
    public let privateKey: NIOSSLPrivateKey
    /// The same in PEM, for servers in other languages.
    public let certificatePEM: String
    public let privateKeyPEM: String

    /// Writes the certificate and key as PEM files in `directory`; returns their paths.
    public func writePEM(to directory: String) throws -> (certificate: String, key: String) {
        let certificate = directory + "/server-cert.pem"
        let key = directory + "/server-key.pem"
        try certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return (certificate, key)
    }

    public func serverContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(privateKey))
        configuration.applicationProtocols = ["http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }
}
