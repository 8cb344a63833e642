import ArgumentParser
import Foundation
import KagamiFlow
import KagamiOutput
import KagamiPostgresStore
import KagamiUI

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the web UI and admin API over the sessions of a shared store, without a proxy: each session live while it records, a link per exchange.",
        discussion: """
            Every request needs a token, on loopback too: the server's own (--token, else this installation's admin token, \
            printed in the address at start) or a user's, made with `kagami serve token add NAME --read|--write --store URL`. \
            See docs/TEAM.md.
            """,
        subcommands: [ServeTokenCommand.self]
    )

    /// (One group with `serve token`'s, so the subcommands see the same --store.)
    @OptionGroup var store: ServeStoreOption

    @Option(help: "Address to listen on. Anything but loopback lets other hosts use the server with a token.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8890

    @Option(help: "The server's own token, with every right (default: this installation's admin token, in $KAGAMI_HOME/admin-token, printed in the address); users' tokens from the store work beside it.")
    var token: String?

    func run() async throws {
        let location: PostgresLocation
        do {
            location = try PostgresLocation(url: store.storeURL)
        } catch {
            throw ValidationError("--store: \(error)")
        }
        let catalog: PostgresSessionCatalog
        do {
            catalog = try await PostgresSessionCatalog.open(location)
        } catch {
            throw ValidationError("\(error)")
        }
        let server = try SessionsServer(
            configuration: .init(
                host: host, port: port, version: Kagami.configuration.version, token: token ?? AdminToken.installation(),
                notice: { Console.error($0 + "\n") }),
            catalog: catalog)
        let bound: Int
        do {
            bound = try await server.start()
        } catch {
            throw ValidationError("kagami serve on \(Authority(host: host, port: port)): \(error) (choose another --port)")
        }
        let address = "http://\(Authority(host: host, port: bound))/?token=\(server.token)"
        var banner = "Kagami serving the sessions in \(location) at \(address)\n"
        banner += "A link per exchange: http://\(Authority(host: host, port: bound))/sessions/NAME/flows/ID\n"
        if !["127.0.0.1", "::1", "localhost"].contains(host) {
            banner += "Warning: listening on \(host) lets other hosts read these sessions with the token.\n"
        }
        Console.output(banner)
        await SignalWaiter.waitForTermination()
        await server.stop()
        await catalog.close()
    }
}
