import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiOutput
import KagamiControl
import KagamiProxy
import KagamiRecording
import KagamiRecordingProxy
import KagamiRepeat
import KagamiRules
import KagamiScenarios
import KagamiStore
import KagamiUI

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run the debugging proxy and record every exchange into a session file or a shared store.",
        discussion: """
            --session FILE is created when missing (default: a new file under ~/.kagami/sessions). With --store, \
            --session NAME is appended to when it exists (default: a session named after the date and time).
            """
    )

    @Option(help: "Address to listen on. Anything but loopback exposes the proxy to other hosts.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8888

    @OptionGroup var destination: SessionOptions

    @OptionGroup var redactionOptions: RedactionOptions

    @Option(help: "Act as a reverse proxy for this server (e.g. http://127.0.0.1:3000) instead of a forward proxy.")
    var reverse: String?

    @Option(help: "Bytes of each request and response body kept in the session (the rest is counted).")
    var bodyLimit = 10 * 1024 * 1024

    @Option(help: "Seconds a server may stay silent after the request before the client gets 504.")
    var responseTimeout = 60

    @OptionGroup var https: HTTPSOptions

    @Option(name: .customLong("upstream-allow"), help: ArgumentHelp(
        "Connect only to these servers: a network (10.0.0.0/8), an address, a host name (api.internal, *.internal) or loopback; repeatable. Names not listed are refused without a DNS lookup. Default: any server, or the list in KAGAMI_UPSTREAM_ALLOW.",
        valueName: "network|host"))
    var upstreamAllow: [String] = []

    @Option(name: .customLong("allow-client"), help: ArgumentHelp(
        "With --host beyond loopback: let the devices of this network (192.168.1.0/24) or address use the proxy; repeatable. This machine always may; any other device is held, and shown in the web UI to allow or deny.",
        valueName: "network"))
    var allowClients: [String] = []

    @Option(help: "Rules file (YAML or JSON): Map Remote, Map Local, Rewrite, Block/Allow, No Caching, Throttling, and what is redacted. See docs/RULES.md.")
    var rules: String?

    @Option(name: .customLong("map-local-root"), help: ArgumentHelp(
        "A folder Map Local may answer from and the web UI may save responses into; repeatable. Map Local reads only there and in the --rules file's folder (without either: ~/.kagami/map-local), never elsewhere in Kagami's own folder.",
        valueName: "folder"))
    var mapLocalRoots: [String] = []

    @Flag(help: "Keep the --rules file as it is when rules are replaced through the admin API (PUT /api/rules); by default it is rewritten.")
    var keepRulesFile = false

    @Option(help: "Breakpoints file (YAML or JSON): locations that pause exchanges at the request and/or response until decided through the admin API. See docs/TOOLS.md.")
    var breakpoints: String?

    @Option(name: .customLong("contract"), help: "Check every exchange against this API description (API Blueprint or OpenAPI; or gRPC methods from a folder of .proto files, a .proto file or a descriptor set; or grpc-reflection=URL, the methods the gRPC server at URL lists through its server reflection), as FILE or FILE=BASEURL when the file doesn't say where the API is served; repeatable. See docs/CONTRACT-CHECK.md.")
    var contracts: [String] = []

    @Flag(help: "With --contract: accept any value for a format (date-time, date, time, email, uuid, uri, ipv4, ipv6, hostname, int32, int64…); by default a value must be valid for its format.")
    var noAssertFormat = false
    @OptionGroup var scenarioOptions: ScenarioOptions

    @OptionGroup var ui: UIOptions

    @OptionGroup var grpc: GRPCSchemaOptions

    @Flag(name: .customLong("no-grpc-reflection"), help: "Don't ask gRPC servers for their schema by server reflection when the given schema lacks a call's service.")
    var noGrpcReflection = false

    /// The options these flags say.
    func options(interception: InterceptionConfiguration?) -> ProxyOptions {
        var options = ProxyOptions(
            host: host, port: port, reverse: reverse, upstreamAllow: upstreamAllow, allowClients: allowClients,
            contracts: contracts, bodyLimit: bodyLimit, responseTimeout: .seconds(responseTimeout),
            interception: interception, notice: { message in Console.error(message + "\n") })
        options.assertsFormat = !noAssertFormat
        return options
    }

    func run() async throws {
        let interception = try https.interception()
        let setup: ProxySetup
        do {
            setup = try ProxySetup(options(interception: interception))
        } catch .contracts(let error) {
            Console.error("kagami proxy: cannot check traffic against the description:\n\(error.description)\n")
            throw ExitCode(2)
        } catch {
            throw ValidationError(error.description)
        }
        let mode = setup.resolved.mode
        let liveContracts = setup.contracts
        let grpcSchema = try grpc.schema()
        let mapLocalFolders = try RulesFile.mapLocalFolders(rulesFile: rules, roots: mapLocalRoots)
        let activeRules = ActiveRules(try rules.map { try RulesFile.load($0, mapLocalFolders: mapLocalFolders) })
        let breakpointSet = Breakpoints(try breakpoints.map(BreakpointsFile.load) ?? BreakpointSettings())
        let scenarios = try await scenarioOptions.active()
        // Each client may need a descriptor for its server connection too: take what the system allows.
        ProxyServer.raiseDescriptorLimit()
        let redaction = try redactionOptions.asked(rules: activeRules.current?.rules.redaction)
        let opened = try await RecordingStore.open(store: destination.storeURL, session: destination.session, redaction: redaction)
        let store = opened.store
        // A copy of the session file alone taken while this records says what it lacks.
        (store as? SQLiteFlowStore)?.markRecording()
        let sessionPath = opened.description
        // The store keeps each flow, the web UI's live views show it, the contract check looks
        // at it beside the traffic (what it finds is added to the stored flow and announced).
        let hub = FlowHub()
        let proxy: RecordingProxy
        do {
            proxy = try setup.build(store: store, hub: hub, rules: activeRules, breakpoints: breakpointSet, scenarios: scenarios)
        } catch {
            await opened.abandon()
            throw ValidationError("\(error)")
        }
        let server = proxy.server
        // The session's gRPC schemas ask reflection through the proxy's own connections, so
        // they exist once it does; Map Local shares them (and what reflection answered) with
        // the web UI.
        let grpcSchemas = grpc.schemas(given: grpcSchema, proxy: server, reflection: !noGrpcReflection)
        activeRules.replace(with: try activeRules.current.map { try RulePipeline($0.rules, mapLocalFolders: mapLocalFolders, grpcSchemas: grpcSchemas) })
        let boundPort: Int
        do {
            boundPort = try await proxy.start()
        } catch let error as ListenError {
            await opened.abandon()
            Console.error("kagami proxy: \(error)\n")
            throw ExitCode(1)
        }
        let listening = "http://\(Authority(host: host, port: boundPort))"
        var banner: String
        switch mode {
        case .forward:
            banner = "Kagami proxy listening on \(listening) (set it as the HTTP proxy of your app or device)\n"
        case .reverse(let upstream):
            banner = "Kagami reverse proxy listening on \(listening) → \(upstream)\n"
        }
        banner += "Session: \(sessionPath)\n"
        if let interception {
            banner += "HTTPS: intercepting \(https.describe(interception.sslProxying)) with the CA \(interception.authority.certificatePath) (get it from http://kagami.ssl/ through the proxy)\n"
            if interception.insecureUpstream {
                banner += "Warning: servers' certificates are not checked (--insecure-upstream).\n"
            }
        } else {
            banner += "HTTPS: not intercepted (CONNECT tunnels are relayed untouched)\n"
        }
        if let allowed = server.upstreamAllowList {
            banner += "Upstream: only \(allowed)\n"
        }
        if !["127.0.0.1", "::1", "localhost"].contains(host) {
            let allowedClients = setup.resolved.allowedClients
            let networks = allowedClients.isEmpty ? "" : " and \(allowedClients.map(\.description).joined(separator: ", "))"
            banner += "Clients: this machine\(networks); any other device is held until you allow it in the web UI.\n"
        }
        let repeatRoute: RequestRepeater.Route
        switch mode {
        case .forward:
            repeatRoute = .forwardProxy(host: RepeatCommand.connectableHost(host), port: boundPort)
        case .reverse(let upstream):
            repeatRoute = .reverseProxy(host: RepeatCommand.connectableHost(host), port: boundPort, upstreamBasePath: upstream.path)
        }
        if let breakpoints {
            let count = breakpointSet.settings.breakpoints.count
            banner += "Breakpoints: \(count) location\(count == 1 ? "" : "s") from \(breakpoints)\(breakpointSet.settings.isEnabled ? "" : " (disabled)"); held exchanges wait for the admin API\n"
        }
        if let liveContracts {
            // `grpc-reflection=URL` descriptions, asked through the proxy's own connections (its
            // allow list); the banner says which wait for a server that didn't answer.
            _ = await liveContracts.askReflection { host, port, tls in server.grpcReflectionSend(host: host, port: port, tls: tls) }
            banner += liveContracts.banner
            liveContracts.watch(every: .milliseconds(300)) { note in
                Console.error(note + "\n")
            }
        }
        let rulesControl = RulesFile.control(
            activeRules, file: rules.map(SessionFile.expand), saving: !keepRulesFile, mapLocalFolders: mapLocalFolders, grpcSchemas: grpcSchemas)
        let uiServer = try await ui.start(
            store: store, hub: hub, recorder: proxy.recording.chain, proxyAddress: listening, sessionPath: sessionPath,
            liveProxy: LiveProxy(
                proxy: server, repeatRoute: repeatRoute, sslProxyingFile: https.sslProxyingFile.map(SessionFile.expand),
                certificatePath: interception?.authority.certificatePath),
            rules: rulesControl, contracts: liveContracts, grpcSchemas: grpcSchemas)
        banner += grpc.describe(grpcSchema) ?? ""
        banner += scenarioOptions.describe(scenarios) ?? ""
        if let uiServer {
            server.protectListener(port: uiServer.port)
            banner += ui.describe(uiServer)
        }
        // Unbuffered, so a script or test reading the pipe sees the port at once.
        Console.output(banner)

        await SignalWaiter.waitForTermination()
        try await proxy.stop()
        await uiServer?.server.stop()
        let count = try await store.count()
        try await opened.close()
        Console.output("Stopped. \(count) exchange\(count == 1 ? "" : "s") in \(sessionPath)\n")
        if let liveContracts {
            let (checked, skipped) = liveContracts.counts
            let behind = skipped == 0 ? "" : ", \(skipped) not checked (the check fell behind the traffic)"
            Console.output("Contract: \(checked) exchange\(checked == 1 ? "" : "s") checked\(behind)\n")
        }
    }
}
