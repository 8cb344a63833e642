// Which servers' certificates Kagami accepts when it makes TLS connections itself: the options
// `kagami proxy` and `kagami repeat` share.
import ArgumentParser

struct UpstreamTrustOptions: ParsableArguments {
    @Option(name: .customLong("upstream-ca"), help: "Also trust this CA (PEM) for servers' certificates; repeatable.")
    var upstreamCA: [String] = []

    @Flag(help: "Do not check servers' certificates (recorded on every exchange it affects).")
    var insecureUpstream = false

    /// The CA files with `~` expanded.
    var trustRootFiles: [String] { upstreamCA.map(SessionFile.expand) }
}
