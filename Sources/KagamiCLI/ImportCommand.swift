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
        discussion: "The whole archive is checked first; a file with any problem imports nothing and the problem is printed with its line and column or JSON path. Exits 2 then."
    )

    @Argument(help: "The .har file.")
    var file: String

    @Option(help: "Session file (created when missing).")
    var session: String

    func run() async throws {
        let path = SessionFile.expand(file)
        let contents: HARImport.Contents
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            contents = try HARImport.contents(from: data, file: file)
        } catch let error as HARImportError {
            FileHandle.standardError.write(Data("kagami import: \(error)\n".utf8))
            throw ExitCode(2)
        } catch {
            throw ValidationError("cannot read \(path): \(error.localizedDescription)")
        }
        let store = try SQLiteFlowStore(path: SessionFile.expand(session))
        let flows = contents.flows
        for flow in flows {
            store.record(flow)
            if let messages = contents.webSocketMessages[flow.id] { store.record(messages: messages, of: flow.id) }
        }
        try await store.flush()
        print("Imported \(flows.count) exchange\(flows.count == 1 ? "" : "s") into \(session)")
    }
}
