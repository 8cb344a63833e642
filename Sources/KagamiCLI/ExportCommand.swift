import ArgumentParser
import Foundation
import KagamiFlow
import KagamiHAR

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a session's exchanges (or some of them) in an exchange format."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case har
    }

    @OptionGroup var source: SessionOptions

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format = .har

    @Option(name: .customLong("id"), help: "Export only this exchange (repeatable; ids from `kagami flows --ids`).")
    var ids: [String] = []

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    func validate() throws {
        _ = try source.requiredSession()
    }

    func run() async throws {
        let reading = try await source.openForReading()
        let store = reading.store
        var flows: [Flow] = []
        if ids.isEmpty {
            flows = try await store.allFlows(includeBodies: true)
        } else {
            for text in ids {
                guard let id = UUID(uuidString: text) else {
                    throw ValidationError("\(text) is not an exchange id (expected a UUID, as `kagami flows --ids` prints)")
                }
                guard let flow = try await store.flow(id: id) else {
                    throw ValidationError("no exchange \(text) in \(reading.description)")
                }
                flows.append(flow)
            }
        }
        switch format {
        case .har:
            let archive = HARExport.archive(flows, webSocketMessages: try await store.webSocketMessages(of: flows), creatorVersion: Kagami.configuration.version)
            let data = Data((archive.serialized(.prettyPrinted) + "\n").utf8)
            if let output {
                try data.write(to: URL(fileURLWithPath: SessionFile.expand(output)))
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
        try await reading.close()
    }
}
