import ArgumentParser
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiStore
import KagamiUI

/// The web UI options `proxy` takes.
struct UIOptions: ParsableArguments {
    @Option(help: "Address of the web UI and admin API. Every request needs the token printed in its address (kept in $KAGAMI_HOME/admin-token); anything but loopback lets other hosts use it with that token.")
    var uiHost = "127.0.0.1"

    @Option(help: "Port of the web UI and admin API (0 picks a free one).")
    var uiPort = 8889

    @Flag(help: "Run without the web UI and admin API.")
    var noUi = false

    struct Running {
        var server: UIServer
        var port: Int
    }

    func start(
        store: any FlowStore, hub: FlowHub, recorder: any FlowSink, proxyAddress: String, sessionPath: String, liveProxy: LiveProxy? = nil,
        rules: RulesControl? = nil, contracts: LiveContracts? = nil, grpcSchemas: GRPCSchemas? = nil
    ) async throws -> Running? {
        guard !noUi else { return nil }
        var configuration = UIServer.Configuration(
            host: uiHost, port: uiPort, proxyAddress: proxyAddress, sessionPath: sessionPath,
            version: Kagami.configuration.version, token: try AdminToken.installation()
        )
        configuration.grpcSchemas = grpcSchemas
        let server = try UIServer(
            configuration: configuration,
            store: store, hub: hub, recorder: recorder, liveProxy: liveProxy, rules: rules, contracts: contracts
        )
        do {
            return Running(server: server, port: try await server.start())
        } catch {
            throw ValidationError("web UI on \(Authority(host: uiHost, port: uiPort)): \(error) (choose another --ui-port, or --no-ui)")
        }
    }

    func describe(_ running: Running) -> String {
        "Web UI: http://\(Authority(host: uiHost, port: running.port))/?token=\(running.server.token)\n"
    }
}
