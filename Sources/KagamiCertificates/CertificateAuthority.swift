import Crypto
import Foundation
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kagami's root certificate authority: made on first run, kept in a folder (`~/.kagami` by
/// default) as `kagami-ca.pem` and `kagami-ca-key.pem` (the key readable by its owner only),
/// and used to sign a leaf certificate for every intercepted host.
public struct CertificateAuthority: Sendable {
    public let certificate: Certificate
    public let privateKey: Certificate.PrivateKey
    public let certificatePath: String
    public let privateKeyPath: String

    public static let certificateFileName = "kagami-ca.pem"
    public static let privateKeyFileName = "kagami-ca-key.pem"

    public enum Failure: Error, CustomStringConvertible, Sendable {
        case unreadable(path: String, reason: String)
        case unwritable(path: String, reason: String)
        case mismatchedKey(certificatePath: String, keyPath: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
            case .unwritable(let path, let reason): "cannot write \(path): \(reason)"
            case .mismatchedKey(let c, let k): "the private key \(k) does not belong to the certificate \(c); run `kagami ca --regenerate`"
            }
        }
    }

    /// `~/.kagami`
    public static var defaultDirectory: String { KagamiHome.path }

    /// Loads the CA from `directory`, creating it there when it does not exist yet.
    public static func loadOrCreate(directory: String = defaultDirectory, now: Date = Date()) throws -> CertificateAuthority {
        let certificatePath = (directory as NSString).appendingPathComponent(certificateFileName)
        let keyPath = (directory as NSString).appendingPathComponent(privateKeyFileName)
        if FileManager.default.fileExists(atPath: certificatePath) || FileManager.default.fileExists(atPath: keyPath) {
            return try load(certificatePath: certificatePath, privateKeyPath: keyPath)
        }
        return try create(directory: directory, now: now)
    }

    public static func load(certificatePath: String, privateKeyPath: String) throws -> CertificateAuthority {
        func read(_ path: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw Failure.unreadable(path: path, reason: "\(error.localizedDescription)")
            }
        }
        let certificate: Certificate
        let key: Certificate.PrivateKey
        do {
            certificate = try Certificate(pemEncoded: try read(certificatePath))
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure.unreadable(path: certificatePath, reason: "not a PEM certificate (\(error))")
        }
        do {
            key = try Certificate.PrivateKey(pemEncoded: try read(privateKeyPath))
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure.unreadable(path: privateKeyPath, reason: "not a PEM private key (\(error))")
        }
        guard key.publicKey == certificate.publicKey else {
            throw Failure.mismatchedKey(certificatePath: certificatePath, keyPath: privateKeyPath)
        }
        return CertificateAuthority(certificate: certificate, privateKey: key, certificatePath: certificatePath, privateKeyPath: privateKeyPath)
    }

    /// Makes a new CA in `directory`, replacing any there.
    public static func create(directory: String, now: Date = Date()) throws -> CertificateAuthority {
        do {
            try KagamiHome.createPrivateDirectory(directory)
        } catch {
            throw Failure.unwritable(path: directory, reason: error.localizedDescription)
        }
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName {
            CommonName("Kagami CA (\(ProcessInfo.processInfo.hostName))")
            OrganizationName("Kagami")
            OrganizationalUnitName("Generated \(ISO8601DateFormatter().string(from: now))")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            // Ten years, like other debugging proxies' roots; leaves are short-lived.
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: key.publicKey)
            },
            issuerPrivateKey: key
        )
        let certificatePath = (directory as NSString).appendingPathComponent(certificateFileName)
        let keyPath = (directory as NSString).appendingPathComponent(privateKeyFileName)
        try writeFile(keyPath, contents: try key.serializeAsPEM().pemString + "\n", mode: 0o600)
        try writeFile(certificatePath, contents: try certificate.serializeAsPEM().pemString + "\n", mode: 0o644)
        return CertificateAuthority(certificate: certificate, privateKey: key, certificatePath: certificatePath, privateKeyPath: keyPath)
    }

    /// Writes through a file created with `mode` from the start, so the key is never readable by others.
    private static func writeFile(_ path: String, contents: String, mode: mode_t) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, mode)
        guard fd >= 0 else {
            throw Failure.unwritable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        fchmod(fd, mode)
        let bytes = Array(contents.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure.unwritable(path: path, reason: String(cString: strerror(errno))) }
            written += n
        }
    }

    public var certificatePEM: String {
        (try? certificate.serializeAsPEM().pemString).map { $0 + "\n" } ?? ""
    }

    public var certificateDER: [UInt8] {
        var serializer = DER.Serializer()
        return (try? serializer.serialize(certificate)).map { serializer.serializedBytes } ?? []
    }

    /// SHA-256 of the DER certificate, as `AB:CD:...`.
    public var fingerprintSHA256: String {
        Self.fingerprint(der: certificateDER)
    }

    public static func fingerprint(der: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(SHA256.byteCount * 3)
        for byte in SHA256.hash(data: der) {
            if !text.isEmpty { text.append(UInt8(ascii: ":")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Signs a server certificate for `host` (a DNS name or an IP address) with `publicKey`.
    public func issueLeaf(for host: String, publicKey: Certificate.PublicKey, now: Date = Date()) throws -> Certificate {
        let subjectName = try DistinguishedName {
            CommonName(String(host.prefix(64)))
            OrganizationName("Kagami")
        }
        let alternativeName: GeneralName
        if let ip = IPAddressBytes(host) {
            alternativeName = .ipAddress(ASN1OctetString(contentBytes: ArraySlice(ip.bytes)))
        } else {
            alternativeName = .dnsName(host)
        }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            // Apple platforms refuse server certificates valid for more than 825 days.
            notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: certificate.subject,
            subject: subjectName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([alternativeName])
                AuthorityKeyIdentifier(keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
            },
            issuerPrivateKey: privateKey
        )
    }
}

/// An IPv4 or IPv6 address in network byte order.
struct IPAddressBytes {
    var bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }
}
