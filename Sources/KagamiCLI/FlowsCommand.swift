import ArgumentParser
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiStore

struct FlowsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flows",
        abstract: "List the exchanges of a session, one per line: time, method, status, URL, size, duration."
    )

    @OptionGroup var source: SessionOptions

    @Flag(help: "Show each exchange's id first (for curl, repeat and export).")
    var ids = false

    /// With a schema, each gRPC call's messages follow its line, with their names and types.
    @OptionGroup var grpc: GRPCSchemaOptions

    func validate() throws {
        _ = try source.requiredSession()
    }

    func run() async throws {
        let reading = try await source.openForReading()
        let store = reading.store
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let schema = try grpc.schema()
        let output = try ExportDestination(path: nil)
        try await store.forEachFlow(includeBodies: !schema.isEmpty, pageSize: schema.isEmpty ? 2_000 : 200) { flows in
            let lines = flows.map { flow in
                FlowLine.format(flow, dateFormatter: formatter, withID: ids) + "\n" + (schema.isEmpty ? "" : GRPCSchemaOptions.messageLines(flow, schema: schema))
            }.joined()
            try output.write(Data(lines.utf8))
        }
        try output.commit()
        try await reading.close()
    }
}

enum FlowLine {
    static func format(_ flow: Flow, dateFormatter: DateFormatter, withID: Bool) -> String {
        let status = flow.response.map { String($0.status) } ?? "-"
        let size = flow.response.map { byteCount($0.body.size) } ?? "-"
        let duration = flow.duration.map { String(format: "%.0fms", $0 * 1000) } ?? "-"
        var line = withID ? "\(flow.id.uuidString) " : ""
        line += "\(dateFormatter.string(from: flow.timings.start)) \(flow.request.method) \(status) \(flow.request.url) \(size) \(duration)"
        if let error = flow.error { line += " ! \(error.message)" }
        return line
    }

    static func byteCount(_ n: Int) -> String {
        switch n {
        case ..<1024: "\(n)B"
        case ..<(1024 * 1024): String(format: "%.1fKB", Double(n) / 1024)
        default: String(format: "%.1fMB", Double(n) / 1024 / 1024)
        }
    }
}
