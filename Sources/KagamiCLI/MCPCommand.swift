import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiMCP
import KagamiOutput
import KagamiControl
import KagamiProxy
import KagamiPostgresStore
import KagamiStore
import KagamiUI

/// `kagami mcp`: a session's exchanges, the contract check, infer and diff as Model Context
/// Protocol tools for a coding agent, over standard input and output (or Streamable HTTP with
/// `--http`); with `--allow-write`, a running proxy's rules, repeat and breakpoints too
/// (docs/MCP.md).
struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve a session to a coding agent as Model Context Protocol tools and resources, over standard input and output or Streamable HTTP.",
        discussion: """
            An agent's configuration starts it (command "kagami", args ["mcp", "--session", FILE]). With --proxy URL and no \
            --session or --store, the running proxy's session is read through its admin API (with --token on another machine). \
            Without any of them, the newest session file in $KAGAMI_HOME/sessions is served. The tools search and read exchanges (credentials redacted), list contract \
            violations, the operations seen, draft a description, compare two captures and copy requests as curl. With --allow-write, \
            tools that change a running kagami proxy through its admin API (--proxy, with the installation's admin token or --token) are served \
            too: add, enable and remove rules, repeat an exchange, release a held breakpoint. --http serves Streamable HTTP at \
            http://HOST:PORT/mcp instead. See docs/MCP.md.
            """
    )

    @OptionGroup var source: SessionOptions

    @Flag(name: .customLong("allow-write"), help: "Serve the tools that change a running proxy (rules, repeat, breakpoints).")
    var allowWrite = false

    @Option(name: .customLong("proxy"), help: ArgumentHelp(
        "The running proxy's web UI and admin API (default http://127.0.0.1:8889), for the write tools; without --session or --store, its session is the one served, read through that API.",
        valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp(
        "The admin token to use instead of this installation's ($KAGAMI_HOME/admin-token): sent to the proxy's admin API, and with --http asked of every client, on loopback too.",
        valueName: "token"))
    var token: String?

    @Flag(help: "Serve Streamable HTTP on --host and --port instead of standard input and output.")
    var http = false

    @Option(help: "The address of --http. Anything but loopback wants the admin token ($KAGAMI_HOME/admin-token) from every client.")
    var host = "127.0.0.1"

    @Option(help: "The port of --http (0 picks a free one).")
    var port = 8890

    func validate() throws {
        if let proxy, !(proxy.hasPrefix("http://") || proxy.hasPrefix("https://")) {
            throw ValidationError("--proxy takes the admin API's address, http://HOST:PORT")
        }
    }

    func run() async throws {
        let (sessionSource, close) = try await open()
        var admin: AdminAPI?
        if allowWrite {
            admin = try self.admin(option: "--allow-write")
        }
        let version = Kagami.configuration.version
        do {
            if http {
                try await serveHTTP(sessionSource, admin: admin)
            } else {
                try await KagamiMCPServer(source: sessionSource, admin: admin, version: version).serveStandardIO()
            }
        } catch {
            await close()
            throw error
        }
        await close()
    }

    /// Streamable HTTP at `/mcp` until interrupted; beyond loopback every client must present
    /// the installation's admin token.
    private func serveHTTP(_ sessionSource: SessionSource, admin: AdminAPI?) async throws {
        let token = try self.token ?? (UpstreamAllowList.isLoopback(host: host) ? nil : AdminToken.installation())
        let version = Kagami.configuration.version
        let endpoint = StreamableHTTPEndpoint(host: host, port: port, token: token) {
            try KagamiMCPServer(source: sessionSource, admin: admin, version: version)
        }
        let host = host
        let given = self.token != nil
        // Until SIGINT or SIGTERM (the application's service group handles both).
        try await endpoint.run { port in
            Console.output("kagami mcp: Streamable HTTP at http://\(Authority(host: host, port: port))/mcp\(token == nil ? "" : " (Authorization: Bearer, \(given ? "the token given" : "the token in \(AdminToken.path)"))")\n")
        }
    }

    /// The session served, the others beside it, and how to let go of them.
    private func open() async throws -> (SessionSource, @Sendable () async -> Void) {
        if let url = source.storeURL {
            let name = try source.requiredSession()
            let reading = try await RecordingStore.openForReading(store: url, session: name)
            let catalog: PostgresSessionCatalog
            do {
                catalog = try await PostgresSessionCatalog.open(try RecordingStore.location(url))
            } catch let error as ValidationError {
                throw error
            } catch {
                throw ValidationError("\(error)")
            }
            return (
                SessionSource(store: reading.store, name: reading.description, others: .catalog(catalog, except: name)),
                { try? await reading.close() }
            )
        }
        if source.session == nil, let proxy {
            let admin = try admin(option: "--proxy")
            let exchanges = AdminExchanges(admin)
            // Fails now, naming the address, rather than at the agent's first call.
            _ = try await exchanges.count()
            return (SessionSource(exchanges: exchanges, name: "the session of the proxy at \(proxy)", others: nil), {})
        }
        let path = try source.session ?? Self.newestSessionFile()
        let reading = try await RecordingStore.openForReading(store: nil, session: path)
        return (
            SessionSource(store: reading.store, name: reading.description, others: .folder(of: reading.description)),
            { try? await reading.close() }
        )
    }

    /// The running proxy's admin API, with the token given or this installation's.
    private func admin(option: String) throws -> AdminAPI {
        let baseURL = proxy ?? "http://127.0.0.1:8889"
        if let token { return AdminAPI(baseURL: baseURL, token: token) }
        return try AdminAPI.installation(at: baseURL, option: option)
    }

    /// The session file most recently changed in `$KAGAMI_HOME/sessions`.
    static func newestSessionFile() throws -> String {
        let folder = KagamiHome.sessions
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var newest: (path: String, date: Date)?
        for name in names where name.hasSuffix(".sqlite") {
            let path = (folder as NSString).appendingPathComponent(name)
            guard let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date else { continue }
            if newest.map({ date > $0.date }) ?? true { newest = (path, date) }
        }
        guard let newest else { throw ValidationError("no session file in \(folder): give --session FILE") }
        return newest.path
    }
}
