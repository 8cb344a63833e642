import Crypto
import Foundation
import KagamiTesting
import SwiftASN1
import Testing
import X509
@testable import KagamiCertificates

/// Kagami's CA: its files, and the leaves it signs, checked by OpenSSL as a client would.
@Suite struct CertificateAuthorityTests {
    static func folder() -> String { NSTemporaryDirectory() + "kagami-ca-" + UUID().uuidString }

    @Test func caKeyIsReadableByItsOwnerOnly() throws {
        let directory = Self.folder()
        let created = try CertificateAuthority.loadOrCreate(directory: directory)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: created.privateKeyPath)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let loaded = try CertificateAuthority.loadOrCreate(directory: directory)
        #expect(loaded.fingerprintSHA256 == created.fingerprintSHA256)
        #expect(try created.certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
    }

    @Test func fingerprintsAreColonSeparatedUppercaseSHA256() {
        // SHA-256 of nothing, the standard test vector.
        #expect(CertificateAuthority.fingerprint(der: []) == "E3:B0:C4:42:98:FC:1C:14:9A:FB:F4:C8:99:6F:B9:24:27:AE:41:E4:64:9B:93:4C:A4:95:99:1B:78:52:B8:55")
    }

    /// A leaf for a name and for each kind of address: OpenSSL verifies it against the CA for
    /// server use and for that host, as a TLS client would.
    @Test(arguments: ["api.example.test", "127.0.0.1", "::1"])
    func leavesVerifyForTheirHost(_ host: String) async throws {
        let directory = Self.folder()
        let authority = try CertificateAuthority.create(directory: directory)
        let key = P256.Signing.PrivateKey()
        let leaf = try authority.issueLeaf(for: host, publicKey: Certificate.PublicKey(key.publicKey))
        #expect(leaf.issuer == authority.certificate.subject)
        #expect(authority.certificate.publicKey.isValidSignature(leaf.signature, for: leaf))
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        let names = try #require(try leaf.extensions.subjectAlternativeNames)
        #expect(names.count == 1)

        let leafPath = directory + "/leaf.pem"
        try leaf.serializeAsPEM().pemString.write(toFile: leafPath, atomically: true, encoding: .utf8)
        let check = host.contains(where: \.isLetter) && !host.contains(":") ? ["-verify_hostname", host] : ["-verify_ip", host]
        let verified = try await CommandLineClient("/usr/bin/openssl").run(
            ["verify", "-CAfile", authority.certificatePath, "-purpose", "sslserver"] + check + [leafPath])
        #expect(verified.status == 0, "\(verified.stdoutText)\(verified.stderr)")
        let otherHost = try await CommandLineClient("/usr/bin/openssl").run(
            ["verify", "-CAfile", authority.certificatePath, "-verify_hostname", "other.example.test", leafPath])
        #expect(otherHost.status != 0)
    }

    @Test func aLeafIsValidFromADayBeforeForAYear() throws {
        let authority = try CertificateAuthority.create(directory: Self.folder())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let leaf = try authority.issueLeaf(for: "example.test", publicKey: Certificate.PublicKey(P256.Signing.PrivateKey().publicKey), now: now)
        #expect(leaf.notValidBefore == now.addingTimeInterval(-86_400))
        #expect(leaf.notValidAfter == now.addingTimeInterval(365 * 86_400))
    }

    @Test func aKeyFromAnotherCAIsRefusedWithBothPaths() throws {
        let first = try CertificateAuthority.create(directory: Self.folder())
        let second = try CertificateAuthority.create(directory: Self.folder())
        #expect {
            _ = try CertificateAuthority.load(certificatePath: first.certificatePath, privateKeyPath: second.privateKeyPath)
        } throws: { error in
            let text = "\(error)"
            return text.contains(first.certificatePath) && text.contains(second.privateKeyPath)
        }
    }

    @Test func aMissingFileIsNamed() throws {
        let missing = Self.folder() + "/kagami-ca.pem"
        #expect {
            _ = try CertificateAuthority.load(certificatePath: missing, privateKeyPath: missing)
        } throws: { error in
            "\(error)".hasPrefix("cannot read \(missing)")
        }
    }

    @Test func homeExpandsATildeAndMakesPrivateFolders() throws {
        #expect(KagamiHome.expand("~") == KagamiHome.userHome)
        #expect(KagamiHome.expand("~/sessions/a.sqlite") == KagamiHome.userHome + "/sessions/a.sqlite")
        #expect(KagamiHome.expand("/tmp/~x") == "/tmp/~x")
        let directory = Self.folder() + "/a/b"
        try KagamiHome.createPrivateDirectory(directory)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
    }
}
