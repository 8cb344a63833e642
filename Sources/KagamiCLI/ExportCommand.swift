import ArgumentParser
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiHAR
import KagamiStore

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

    /// With a schema, gRPC calls carry their messages with names and types (`_grpc`).
    @OptionGroup var grpc: GRPCSchemaOptions

    @Option(help: "Export at most this many exchanges, the oldest first.")
    var limit: Int?

    func validate() throws {
        _ = try source.requiredSession()
        if let limit, limit < 1 { throw ValidationError("--limit \(limit): expected 1 or more") }
    }

    func run() async throws {
        var selected: [UUID] = []
        for text in ids {
            guard let id = UUID(uuidString: text) else {
                throw ValidationError("\(text) is not an exchange id (expected a UUID, as `kagami flows --ids` prints)")
            }
            selected.append(id)
        }
        let schema = try grpc.schema()
        let schemas = schema.isEmpty ? nil : GRPCSchemas(given: schema)
        let reading = try await source.openForReading()
        let store = reading.store
        let destination = try ExportDestination(path: output.map(SessionFile.expand))
        switch format {
        case .har:
            // An entry at a time: a session of any size is written in the memory of one page.
            var writer = HARStreamWriter(creatorVersion: Kagami.configuration.version)
            try destination.write(writer.opening)
            if selected.isEmpty {
                try await store.forEachFlow(includeBodies: true, limit: limit) { flows in
                    let messages = try await store.webSocketMessages(of: flows)
                    for flow in flows { try destination.write(writer.entry(flow, webSocketMessages: messages[flow.id], grpc: await schemas?.archiveFields(of: flow))) }
                }
            } else {
                for id in selected.prefix(limit ?? selected.count) {
                    guard let flow = try await store.flow(id: id) else {
                        throw ValidationError("no exchange \(id.uuidString) in \(reading.description)")
                    }
                    try destination.write(writer.entry(
                        flow, webSocketMessages: try await store.webSocketMessages(of: [flow])[flow.id], grpc: await schemas?.archiveFields(of: flow)))
                }
            }
            try destination.write(writer.closing())
        }
        try destination.close()
        try await reading.close()
    }
}

/// Standard output, or a file readable by its owner only (an export holds captured traffic),
/// written through a buffer.
final class ExportDestination {
    private let handle: FileHandle
    private let closes: Bool
    private var buffer = Data()

    init(path: String?) throws {
        guard let path else {
            handle = FileHandle.standardOutput
            closes = false
            return
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        self.handle = handle
        closes = true
    }

    func write(_ data: Data) throws {
        buffer.append(data)
        if buffer.count >= 1 << 20 { try drain() }
    }

    func close() throws {
        try drain()
        if closes { try handle.close() }
    }

    private func drain() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
