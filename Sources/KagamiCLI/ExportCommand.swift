import ArgumentParser
import Foundation
import KagamiHAR

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a session's exchanges to standard output in an exchange format."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case har
    }

    @Option(help: "Session file.")
    var session: String

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format = .har

    func run() async throws {
        let store = try SessionFile.open(session)
        let flows = try await store.allFlows(includeBodies: true)
        switch format {
        case .har:
            let archive = HARExport.archive(flows, creatorVersion: Kagami.configuration.version)
            FileHandle.standardOutput.write(Data((archive.serialized(.prettyPrinted) + "\n").utf8))
        }
    }
}
