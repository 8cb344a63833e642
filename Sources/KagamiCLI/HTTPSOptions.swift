// The HTTPS interception options of `kagami proxy`.
import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiControl
import KagamiProxy
import KagamiRules

/// The HTTPS interception options `proxy` takes.
struct HTTPSOptions: ParsableArguments {
    @Option(help: "Folder holding Kagami's CA (created on first run).")
    var caDir: String = CertificateAuthority.defaultDirectory

    @Flag(help: "Relay every CONNECT untouched instead of decrypting HTTPS.")
    var noSslProxying = false

    @Option(name: .customLong("ssl-include"), help: "Intercept only these hosts (host or host:port; *, ? and [a-z] wildcards); repeatable. Default: all.")
    var sslInclude: [String] = []

    @Option(name: .customLong("ssl-exclude"), help: "Never intercept these hosts (tunnel them untouched); repeatable.")
    var sslExclude: [String] = []

    @Option(name: .customLong("ssl-proxying-file"), help: ArgumentHelp(
        "Keep the SSL Proxying list (include and exclude hosts) in this JSON file: read at start when it exists (instead of --ssl-include/--ssl-exclude) and rewritten when the list is changed in the web UI.",
        valueName: "file"))
    var sslProxyingFile: String?

    @OptionGroup var upstreamTrust: UpstreamTrustOptions

    func interception() throws -> InterceptionConfiguration? {
        guard !noSslProxying else { return nil }
        func patterns(_ texts: [String], _ option: String) throws -> [Location] {
            try texts.map { text in
                guard let pattern = Location(hostAndPort: text) else { throw ValidationError("\(option) \(text): expected host or host:port") }
                return pattern
            }
        }
        let authority: CertificateAuthority
        do {
            authority = try CertificateAuthority.loadOrCreate(directory: SessionFile.expand(caDir))
        } catch {
            throw ValidationError("\(error)")
        }
        var list = SSLProxyingList(include: try patterns(sslInclude, "--ssl-include"), exclude: try patterns(sslExclude, "--ssl-exclude"))
        if let file = sslProxyingFile.map(SessionFile.expand), FileManager.default.fileExists(atPath: file) {
            list = try SSLProxyingFile.load(file)
        }
        return InterceptionConfiguration(
            authority: authority,
            sslProxying: list,
            additionalTrustRootFiles: upstreamTrust.trustRootFiles,
            insecureUpstream: upstreamTrust.insecureUpstream
        )
    }

    /// What the list in force decrypts, and where it is kept: `all hosts except *.apple.com
    /// (list kept in FILE)`.
    func describe(_ list: SSLProxyingList) -> String {
        var text = list.include.isEmpty ? "all hosts" : list.include.map(\.hostAndPort).joined(separator: ", ")
        if !list.exclude.isEmpty { text += " except \(list.exclude.map(\.hostAndPort).joined(separator: ", "))" }
        if let file = sslProxyingFile.map(SessionFile.expand) {
            let kept = FileManager.default.fileExists(atPath: file) ? "read from" : "written to"
            text += " (list \(kept) \(file)\(kept == "written to" ? " when changed in the web UI" : ""))"
        }
        return text
    }
}
