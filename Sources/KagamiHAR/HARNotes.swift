// A session's notes in an archive: `log._notes`, each `{id, time, author, text, flow}` with the
// time in ISO 8601 as HAR writes dates, so a shared capture says why traffic changed.
import Foundation
import KagamiFlow
import KagamiJSON

enum HARNotes {
    static let key = "_notes"

    static func json(_ notes: [SessionNote]) -> JSONValue {
        .array(notes.map { note in
            [
                "id": .string(note.id.canonicalText),
                "time": .string(HARDate.format(note.time)),
                "author": .string(note.author),
                "text": .string(note.text),
                "flow": note.flowID.map { .string($0.canonicalText) } ?? .null,
            ]
        })
    }

    /// The notes of `log`; a note that can't be read (or a `_notes` that is not a list) is
    /// handed to `skipped` with its path, and the exchanges are imported all the same.
    static func read(_ log: HARNode, skipped: (HARImportError) -> Void) throws(HARImportError) -> [SessionNote] {
        guard let list = try log.optional(key) else { return [] }
        let nodes: [HARNode]
        do throws(HARImportError) {
            nodes = try list.array()
        } catch {
            skipped(error)
            return []
        }
        var notes: [SessionNote] = []
        for node in nodes {
            do throws(HARImportError) {
                notes.append(try note(node))
            } catch {
                skipped(error)
            }
        }
        return notes
    }

    private static func note(_ node: HARNode) throws(HARImportError) -> SessionNote {
        let text = try node.member("text").string()
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw node.error("text: expected the note's text, found an empty string") }
        var id = UUID()
        if let idNode = try node.optional("id") {
            guard let given = UUID(uuidString: try idNode.string()) else { throw idNode.error("expected the note's id (a UUID)") }
            id = given
        }
        var flowID: UUID?
        if let flowNode = try node.optional("flow") {
            guard let given = UUID(uuidString: try flowNode.string()) else { throw flowNode.error("expected the id (a UUID) of the exchange the note concerns") }
            flowID = given
        }
        let author = try node.optional("author")?.string().nonEmpty ?? "HAR import"
        return SessionNote(id: id, time: try HARImport.date(node.member("time")), author: author, text: text, flowID: flowID).bounded
    }
}
