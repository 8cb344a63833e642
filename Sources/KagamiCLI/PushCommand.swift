import ArgumentParser
import Foundation
import KagamiFlow
import KagamiOutput
import KagamiPostgresStore
import KagamiStore

/// `kagami push FILE.sqlite --store URL [--session NAME]`: a session recorded on one machine
/// uploaded into a new session of the store a team shares, redacted on the way.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Upload a session file into a new session of a shared store: every exchange, its bodies and WebSocket messages, redacted before it is written.",
        discussion: """
            The session is named after the file (checkout-bug.sqlite becomes checkout-bug) unless --session NAME is given; \
            a session that already exists in the store is left alone and the push refused. Credentials are redacted \
            as `kagami proxy --store` redacts them, with the same options and the redaction section of --rules. See docs/TEAM.md.
            """
    )

    @Argument(help: ArgumentHelp("The session file (SQLite) to upload.", valueName: "file"))
    var file: String

    @OptionGroup var destination: SessionOptions

    @OptionGroup var redactionOptions: RedactionOptions

    @Option(help: "A rules document (YAML or JSON) whose redaction section applies. See docs/RULES.md.")
    var rules: String?

    /// Exchanges read from the file at a time; the store is flushed after each page and whenever
    /// this many bytes of bodies and messages wait, so a large session is never held in memory
    /// whole.
    static let page = 50
    static let flushBytes = 32 << 20

    func validate() throws {
        guard let url = destination.storeURL else {
            throw ValidationError("give --store postgres://user@host/database: the shared store to push into")
        }
        _ = try RecordingStore.location(url)
        if let session = destination.session, session.isEmpty { throw ValidationError("--session: a session needs a name") }
    }

    func run() async throws {
        let location = try RecordingStore.location(destination.storeURL ?? "")
        let name = destination.session ?? Self.sessionName(forFile: file)
        let redaction = try redactionOptions.redaction(rules: try rules.map { try RulesFile.load($0) }?.rules.redaction)
        let local = try SessionFile.open(file)
        let existing: PostgresFlowStore?
        do {
            existing = try await PostgresFlowStore.openExisting(location, session: name)
        } catch {
            throw ValidationError("\(error)")
        }
        if let existing {
            await existing.close()
            throw ValidationError("\(location) already has a session named \(name): choose another name with --session NAME")
        }
        let remote: PostgresFlowStore
        do {
            remote = try await PostgresFlowStore.open(
                location, session: name, recordedBy: RecordingStore.recorder(),
                maximumPendingBodyBytes: Int.max / 2, spoolDirectory: RecordingStore.spoolDirectory,
                redaction: redaction)
        } catch {
            throw ValidationError("\(error)")
        }
        var flows = 0
        var messages = 0
        do {
            var waiting = 0
            var offset = 0
            while true {
                let batch = try await local.flows(offset: offset, limit: Self.page, includeBodies: true)
                for flow in batch {
                    remote.record(flow)
                    flows += 1
                    waiting += flow.pendingBodyBytes
                    if flow.isWebSocket {
                        var from = 0
                        while true {
                            let some = try await local.messages(of: flow.id, offset: from, limit: 1000)
                            if some.isEmpty { break }
                            remote.record(messages: some, of: flow.id)
                            messages += some.count
                            waiting += some.pendingBodyBytes
                            from += some.count
                            if waiting >= Self.flushBytes {
                                try await remote.flush()
                                waiting = 0
                            }
                        }
                    }
                    if waiting >= Self.flushBytes {
                        try await remote.flush()
                        waiting = 0
                    }
                }
                try await remote.flush()
                waiting = 0
                offset += batch.count
                if batch.count < Self.page { break }
            }
            try await remote.flush()
        } catch {
            await remote.close()
            throw ValidationError("pushing \(local.path) into \(name) in \(location) stopped after \(flows) exchange\(flows == 1 ? "" : "s"): \(error)")
        }
        let status = remote.status
        await remote.close()
        let what = "\(flows) exchange\(flows == 1 ? "" : "s")" + (messages > 0 ? " and \(messages) WebSocket message\(messages == 1 ? "" : "s")" : "")
        if !status.spoolFiles.isEmpty {
            Console.error("kagami push: the server went away; \(what) wait in \(status.spoolFiles.joined(separator: ", ")) and are written when session \(name) is next opened on this machine\n")
            throw ExitCode(1)
        }
        Console.output("Pushed \(what) from \(local.path) to \(name) in \(location)\n")
    }

    /// `~/captures/checkout-bug.sqlite` → `checkout-bug`
    static func sessionName(forFile file: String) -> String {
        let base = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        return base.isEmpty ? (file as NSString).lastPathComponent : base
    }
}
