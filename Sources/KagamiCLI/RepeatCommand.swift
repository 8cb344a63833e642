import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiRepeat
import KagamiRules
import KagamiRecording
import KagamiRecordingProxy
import KagamiStore

/// `kagami repeat --session FILE ID` (or `--store URL --session NAME ID`): Repeat and Repeat Advanced.
struct RepeatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repeat",
        abstract: "Send a recorded request again, through the rule pipeline, and record each repeat as a new exchange.",
        discussion: """
            Without --proxy, the repeats go through a proxy started for the run (with --rules, if \
            given) that records into the same session. With --proxy, they go through that running \
            Kagami proxy, which records them in its own session. Each repeat is stored as a repeat of ID. \
            An exchange recorded in HTTP/2 is repeated in HTTP/2. Exits non-zero when any send failed \
            (no answer, or the proxy could not reach the server).
            """
    )

    @OptionGroup var source: SessionOptions

    @Argument(help: "The exchange's id (from `kagami flows --ids`).")
    var id: String

    @Option(help: "How many times to send it (1-10000).")
    var count = 1

    @Option(help: "How many to have in flight at once (1-64).")
    var concurrency = 1

    @Option(help: "Milliseconds each sender waits between its requests (0-60000).")
    var delay = 0

    @Option(help: "Send through this running Kagami proxy (e.g. http://127.0.0.1:8888) instead of one started for the run.")
    var proxy: String?

    @Option(help: "Rules file for the proxy started for the run (ignored with --proxy).")
    var rules: String?

    @Option(help: "Folder holding Kagami's CA, for the proxy started for the run (https needs it to talk TLS to servers).")
    var caDir: String = CertificateAuthority.defaultDirectory

    /// For the proxy started for the run; a running proxy (--proxy) has its own.
    @OptionGroup var upstreamTrust: UpstreamTrustOptions

    func validate() throws {
        _ = try source.requiredSession()
        if proxy != nil, !upstreamTrust.upstreamCA.isEmpty || upstreamTrust.insecureUpstream {
            throw ValidationError("--upstream-ca and --insecure-upstream are for the proxy started for the run; the proxy given with --proxy checks servers by its own options")
        }
    }

    func run() async throws {
        let plan: RequestRepeater.Plan
        do {
            plan = try RequestRepeater.Plan(count: count, concurrency: concurrency, delayMilliseconds: delay)
        } catch {
            guard case .outOfRange(let field, let value, let range) = error else { throw ValidationError(error.description) }
            let option = ["count": "--count", "concurrency": "--concurrency", "delayMs": "--delay"][field] ?? field
            throw ValidationError("\(option) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        let session = try await source.openForReading()
        let flow = try await session.flow(id)
        if flow.request.body.isTruncated || flow.request.body.keptCount < flow.request.body.size {
            throw ValidationError("exchange \(id) kept only \(flow.request.body.keptCount) of its \(flow.request.body.size) request body bytes: it can't be sent again as it was")
        }
        let https = flow.request.scheme == "https"
        let summary: RepeatSummary
        if let proxy {
            let target: ProxyTarget
            do {
                target = try ProxyTarget(absoluteURL: proxy)
            } catch {
                throw ValidationError("--proxy \(proxy): \(error)")
            }
            summary = try await Self.run(RequestRepeater(route: .forwardProxy(host: target.host, port: target.port)), flow, plan)
        } else {
            summary = try await repeatThroughOwnProxy(flow, plan: plan, store: session.store, https: https)
        }
        try await session.close()
        print(summary.text)
        if summary.failures > 0 { throw ExitCode.failure }
    }

    /// Runs a proxy on a free loopback port that records into the session, for this run only.
    private func repeatThroughOwnProxy(_ flow: Flow, plan: RequestRepeater.Plan, store: any FlowStore, https: Bool) async throws -> RepeatSummary {
        var interception: InterceptionConfiguration?
        if https {
            do {
                interception = InterceptionConfiguration(
                    authority: try CertificateAuthority.loadOrCreate(directory: SessionFile.expand(caDir)),
                    additionalTrustRootFiles: upstreamTrust.trustRootFiles, insecureUpstream: upstreamTrust.insecureUpstream)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        let proxy = try ProxySetup(ProxyOptions(host: "127.0.0.1", port: 0, interception: interception))
            .build(store: store, rules: ActiveRules(try rules.map { try RulesFile.load($0) }))
        let port = try await proxy.start()
        do {
            let summary = try await Self.run(RequestRepeater(route: .forwardProxy(host: "127.0.0.1", port: port)), flow, plan)
            try await proxy.stop()
            return summary
        } catch {
            try? await proxy.stop()
            throw error
        }
    }

    private static func run(_ repeater: RequestRepeater, _ flow: Flow, _ plan: RequestRepeater.Plan) async throws -> RepeatSummary {
        do {
            return try await repeater.run(flow.request, of: flow.id, plan: plan)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// A wildcard listening address can't be connected to; its loopback can.
    static func connectableHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::", "[::]": "::1"
        default: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        }
    }
}
