// The HTTPS interception options of `kagami proxy`.
import ArgumentParser
import Foundation
import KagamiCertificates
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

    @Option(name: .customLong("upstream-ca"), help: "Also trust this CA (PEM) for servers' certificates; repeatable.")
    var upstreamCA: [String] = []

    @Flag(help: "Do not check servers' certificates (recorded on every exchange it affects).")
    var insecureUpstream = false

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
            additionalTrustRootFiles: upstreamCA.map(SessionFile.expand),
            insecureUpstream: insecureUpstream
        )
    }

    func describeList() -> String {
        if let file = sslProxyingFile { return "the hosts listed in \(file)" }
        var text = sslInclude.isEmpty ? "all hosts" : sslInclude.joined(separator: ", ")
        if !sslExclude.isEmpty { text += " except \(sslExclude.joined(separator: ", "))" }
        return text
    }
}
