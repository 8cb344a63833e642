import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiMCP
import KagamiPostgresStore
import KagamiStore
import KagamiUI

/// `kagami mcp`: a session's exchanges, the contract check, infer and diff as Model Context
/// Protocol tools for a coding agent, over standard input and output; with `--allow-write`,
/// a running proxy's rules, repeat and breakpoints too (docs/MCP.md).
struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve a session to a coding agent as Model Context Protocol tools and resources, over standard input and output.",
        discussion: """
            An agent's configuration starts it (command "kagami", args ["mcp", "--session", FILE]). Without --session, the newest \
            session file in $KAGAMI_HOME/sessions is served. The tools search and read exchanges (credentials redacted), list contract \
            violations, the operations seen, draft a description, compare two captures and copy requests as curl. With --allow-write, \
            tools that change a running kagami proxy through its admin API (--proxy, with the installation's admin token) are served \
            too: add, enable and remove rules, repeat an exchange, release a held breakpoint. See docs/MCP.md.
            """
    )

    @OptionGroup var source: SessionOptions

    @Flag(name: .customLong("allow-write"), help: "Serve the tools that change a running proxy (rules, repeat, breakpoints).")
    var allowWrite = false

    @Option(name: .customLong("proxy"), help: ArgumentHelp("The running proxy's web UI and admin API, for the write tools.", valueName: "url"))
    var proxy = "http://127.0.0.1:8889"

    func validate() throws {
        guard proxy.hasPrefix("http://") || proxy.hasPrefix("https://") else {
            throw ValidationError("--proxy takes the admin API's address, http://HOST:PORT")
        }
    }

    func run() async throws {
        let (sessionSource, close) = try await open()
        var admin: AdminAPI?
        if allowWrite {
            let token: String?
            do {
                token = try AdminToken.read()
            } catch {
                throw ValidationError("\(error)")
            }
            guard let token else {
                throw ValidationError("--allow-write: no admin token at \(AdminToken.path) yet; start kagami proxy once (it makes one)")
            }
            admin = AdminAPI(baseURL: proxy, token: token)
        }
        let server = try KagamiMCPServer(source: sessionSource, admin: admin, version: Kagami.configuration.version)
        do {
            try await server.serveStandardIO()
        } catch {
            await close()
            throw error
        }
        await close()
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
        let path = try source.session ?? Self.newestSessionFile()
        let reading = try await RecordingStore.openForReading(store: nil, session: path)
        return (
            SessionSource(store: reading.store, name: reading.description, others: .folder(of: reading.description)),
            { try? await reading.close() }
        )
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
