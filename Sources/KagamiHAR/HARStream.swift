import Foundation
import KagamiFlow
import KagamiJSON

/// The log's fields besides its entries: the version, the creator, and the pages and log fields
/// an imported archive had, which travel on its flows (`Flow.archiveFields`).
struct HARLogFields {
    private var pages: [JSONValue] = []
    private var pageIDs: Set<String> = []
    private var fields: JSONObject = [:]

    mutating func add(_ flow: Flow) {
        for field in flow.archiveFields ?? [] where field.path.first == "log" && field.path.count == 2 {
            guard let json = field.json, let value = try? JSONValue(parsing: json) else { continue }
            if field.path[1] == "pages" {
                for page in value.arrayValue ?? [] {
                    let id = page["id"]?.stringValue ?? ""
                    if pageIDs.insert(id).inserted { pages.append(page) }
                }
            } else if fields[field.path[1]] == nil {
                fields[field.path[1]] = value
            }
        }
    }

    func object(creatorVersion: String, notes: [SessionNote]) -> JSONObject {
        var log: JSONObject = ["version": "1.2", "creator": ["name": "Kagami", "version": .string(creatorVersion)]]
        for (name, value) in fields where log[name] == nil { log[name] = value }
        log["pages"] = .array(pages)
        if !notes.isEmpty { log[HARNotes.key] = HARNotes.json(notes) }
        return log
    }
}

/// Writes an HTTP Archive an entry at a time, for sessions too big to hold: the entries first,
/// then the rest of the log (pages and fields gathered from the flows on the way; a JSON
/// object's members have no order). The archive is the one `HARExport.archive` makes; the
/// caller writes `opening`, each `entry`, then `closing()`.
public struct HARStreamWriter {
    private let creatorVersion: String
    private var log = HARLogFields()
    private var entries = 0

    public init(creatorVersion: String) {
        self.creatorVersion = creatorVersion
    }

    /// The archive's text before its first entry.
    public let opening = Data("{\n  \"log\": {\n    \"entries\": [".utf8)

    /// The text of the next entry; `grpc`: the call's messages read with its schema (`_grpc`).
    public mutating func entry(_ flow: Flow, webSocketMessages: [WebSocketMessage]? = nil, grpc: JSONValue? = nil) -> Data {
        var text: [UInt8] = []
        entry(flow, webSocketMessages: webSocketMessages, grpc: grpc, to: &text)
        return Data(text)
    }

    /// Appends the text of the next entry to `text`.
    public mutating func entry(_ flow: Flow, webSocketMessages: [WebSocketMessage]? = nil, grpc: JSONValue? = nil, to text: inout [UInt8]) {
        log.add(flow)
        text += (entries == 0 ? "\n      " : ",\n      ").utf8
        // Entries sit three levels down: the archive, its log, the log's entries.
        HARExport.append(flow, webSocketMessages: webSocketMessages, grpc: grpc, to: &text, depth: 3)
        entries += 1
    }

    /// The end of the entries and the rest of the log, with the session's `notes` (`_notes`).
    public func closing(notes: [SessionNote] = []) -> Data {
        var text = Array((entries == 0 ? "],\n" : "\n    ],\n").utf8)
        let rest = Array(log.object(creatorVersion: creatorVersion, notes: notes))
        for (index, member) in rest.enumerated() {
            text += "    ".utf8
            JSONValue.string(member.key).write(to: &text)
            text += ": ".utf8
            member.value.write(to: &text, options: [.prettyPrinted], depth: 2)
            text += (index < rest.count - 1 ? ",\n" : "\n").utf8
        }
        text += "  }\n}\n".utf8
        return Data(text)
    }
}
