import ArgumentParser
import Foundation
import KagamiFlow
import KagamiHAR
import KagamiStore

/// `kagami import FILE.har --session FILE`: adds an archive's exchanges to a session.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read an HTTP Archive (HAR 1.2) into a session, creating the session file when missing.",
        discussion: "Entries Kagami can't read are skipped, each named on standard error with its JSON path and the reason; the rest are imported. A file that is not an archive (broken JSON, no log.entries), or whose entries are all unreadable, imports nothing and exits 2."
    )

    @Argument(help: "The .har file.")
    var file: String

    @Option(help: "Session file (created when missing).")
    var session: String

    func run() async throws {
        let result: HARImport.Result
        do {
            result = try HARFile.read(file, command: "import")
        } catch {
            FileHandle.standardError.write(Data("kagami import: \(error); nothing imported\n".utf8))
            throw ExitCode(2)
        }
        let flows = result.flows
        let store = try SQLiteFlowStore(path: SessionFile.expand(session))
        for flow in flows {
            store.record(flow)
            if let messages = result.webSocketMessages[flow.id] { store.record(messages: messages, of: flow.id) }
        }
        try await store.flush()
        let skippedNote = result.skipped.isEmpty ? "" : " (\(result.skipped.count) entr\(result.skipped.count == 1 ? "y" : "ies") skipped)"
        print("Imported \(flows.count) exchange\(flows.count == 1 ? "" : "s") into \(session)\(skippedNote)")
    }
}
