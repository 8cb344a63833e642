import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiOutput

struct CACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Show, export or regenerate Kagami's root certificate (used to intercept HTTPS)."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case pem, der
    }

    @Option(help: "Folder holding Kagami's CA (created on first run).")
    var caDir: String = CertificateAuthority.defaultDirectory

    @Option(help: "Write the certificate to standard output: pem or der.")
    var export: Format?

    @Flag(help: "Make a new CA, replacing the old one. Devices that trusted the old one must trust the new one again.")
    var regenerate = false

    func run() async throws {
        let directory = SessionFile.expand(caDir)
        let authority: CertificateAuthority
        do {
            if regenerate {
                Console.error("Warning: replacing the CA in \(directory); every device and simulator that trusted the old one must install the new one.\n")
                authority = try CertificateAuthority.create(directory: directory)
            } else {
                authority = try CertificateAuthority.loadOrCreate(directory: directory)
            }
        } catch {
            throw ValidationError("\(error)")
        }
        switch export {
        case .pem:
            try Console.answer(authority.certificatePEM)
        case .der:
            try Console.answer(Data(authority.certificateDER))
        case nil:
            let text = """
            Certificate: \(authority.certificatePath)
            Private key: \(authority.privateKeyPath) (readable by its owner only)
            Subject: \(authority.certificate.subject)
            Valid until: \(ISO8601DateFormatter().string(from: authority.certificate.notValidAfter))
            SHA-256 fingerprint: \(authority.fingerprintSHA256)

            """
            try Console.answer(text)
        }
    }
}
