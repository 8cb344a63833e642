import ArgumentParser
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiHAR
import KagamiOutput
import KagamiStore

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a session's exchanges (or some of them) in an exchange format."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case har
        /// One session file with every body and message in it, nothing beside it: to mail or
        /// attach; `kagami flows`, `export` and `import` read it.
        case session
    }

    @OptionGroup var source: SessionOptions

    @Option(help: "Output format: har, or session (one session file holding everything, to share; needs --output).")
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
        if format == .session, output == nil { throw ValidationError("--format session writes a file: give --output FILE") }
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
        if format == .session, let output {
            let path = SessionFile.expand(output)
            do {
                let count = try await SessionPack.write(to: path, from: store, ids: selected.isEmpty ? nil : selected, limit: limit)
                Console.error("kagami export: \(count) exchange\(count == 1 ? "" : "s") of \(reading.description) in \(path)\n")
            } catch {
                throw ValidationError("\(error)")
            }
            try await reading.close()
            return
        }
        let destination = try ExportDestination(path: output.map(SessionFile.expand))
        switch format {
        case .session:
            break
        case .har:
            // An entry at a time: a session of any size is written in the memory of one page.
            var writer = HARStreamWriter(creatorVersion: Kagami.configuration.version)
            try destination.write(writer.opening)
            // The whole session carries all its notes; a part of it, the notes about its exchanges.
            var exported = Set<UUID>()
            if selected.isEmpty {
                let total = try await store.count()
                let progress = ExchangeCountDisplay("Exporting \(reading.description)", total: limit.map { min($0, total) } ?? total)
                defer { progress.finish() }
                try await store.forEachFlow(includeBodies: true, limit: limit) { flows in
                    let messages = try await store.webSocketMessages(of: flows)
                    for flow in flows {
                        if limit != nil { exported.insert(flow.id) }
                        let grpc = await schemas?.archiveFields(of: flow)
                        try destination.write { writer.entry(flow, webSocketMessages: messages[flow.id], grpc: grpc, to: &$0) }
                    }
                    progress.add(flows.count)
                }
            } else {
                for id in selected.prefix(limit ?? selected.count) {
                    guard let flow = try await store.flow(id: id) else {
                        throw ValidationError("no exchange \(id.uuidString) in \(reading.description)")
                    }
                    exported.insert(flow.id)
                    try destination.write(writer.entry(
                        flow, webSocketMessages: try await store.webSocketMessages(of: [flow])[flow.id], grpc: await schemas?.archiveFields(of: flow)))
                }
            }
            let whole = selected.isEmpty && limit == nil
            let notes = try await store.notes().filter { note in whole || note.flowID.map(exported.contains) ?? false }
            try destination.write(writer.closing(notes: notes))
        }
        try destination.commit()
        try await reading.close()
    }
}

/// Standard output, or a file readable by its owner only (an export holds captured traffic),
/// written through a buffer, whole or not at all (`OutputFile`): it takes its place once
/// `commit()` is called.
final class ExportDestination {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let file: OutputFile?

    init(path: String?) throws {
        guard let path else {
            handle = FileHandle.standardOutput
            file = nil
            return
        }
        let file = OutputFile(path)
        do {
            handle = try file.openHandle(mode: 0o600)
        } catch {
            throw ValidationError("\(error)")
        }
        self.file = file
    }

    func write(_ data: Data) throws {
        try write { $0 += data }
    }

    /// Lets `text` append to what is written next.
    func write(_ text: (inout [UInt8]) -> Void) throws {
        text(&buffer)
        if buffer.count >= 1 << 20 { try drain() }
    }

    /// Everything is written: the file takes its place (standard output is flushed).
    func commit() throws {
        try drain()
        guard let file else { return }
        try handle.close()
        do {
            try file.commit()
        } catch {
            throw ValidationError("\(error)")
        }
    }

    private func drain() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
