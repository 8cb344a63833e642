import ArgumentParser
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiStore

struct FlowsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flows",
        abstract: "List the exchanges of a session, one per line: time, method, status, URL, size, duration.",
        discussion: """
            The session's notes (changes made to the proxy while it recorded) come between the \
            exchanges at their time, each on a line of its own that starts with `#`: \
            `# TIME AUTHOR: TEXT`, then `[exchange ID]` when the note is about one.
            """
    )

    @OptionGroup var source: SessionOptions

    @Flag(help: "Show each exchange's id first (for curl, repeat and export).")
    var ids = false

    @Flag(name: .customLong("no-notes"), help: "Leave out the session's notes (the lines that start with #).")
    var noNotes = false

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
        // Oldest first; each goes before the first exchange that started after it.
        var notes = noNotes ? [] : try await store.notes().sorted { $0.time < $1.time }[...]
        try await store.forEachFlow(includeBodies: !schema.isEmpty, pageSize: schema.isEmpty ? 2_000 : 200) { flows in
            var lines = ""
            for flow in flows {
                while let note = notes.first, note.time < flow.timings.start {
                    lines += NoteLine.format(note, dateFormatter: formatter) + "\n"
                    notes.removeFirst()
                }
                lines += FlowLine.format(flow, dateFormatter: formatter, withID: ids) + "\n" + (schema.isEmpty ? "" : GRPCSchemaOptions.messageLines(flow, schema: schema))
            }
            try output.write(Data(lines.utf8))
        }
        try output.write(Data(notes.map { NoteLine.format($0, dateFormatter: formatter) + "\n" }.joined().utf8))
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

/// A note's line in `kagami flows`: `# TIME AUTHOR: TEXT [exchange ID]`, on one line whatever
/// the text holds, so that a script tells notes from exchanges by the leading `#`.
enum NoteLine {
    static func format(_ note: SessionNote, dateFormatter: DateFormatter) -> String {
        let text = note.text.split(whereSeparator: \.isNewline).joined(separator: " ")
        var line = "# \(dateFormatter.string(from: note.time)) \(note.author): \(text)"
        if let flowID = note.flowID { line += " [exchange \(flowID.uuidString)]" }
        return line
    }
}
