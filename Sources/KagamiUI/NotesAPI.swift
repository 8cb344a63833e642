// `/api/notes`: the session's notes — changes made to the proxy while it recorded, and who
// made them (`SessionNote`) — read, and added by whoever made a change (`kagami mcp` adds
// one for each change it makes).
import Foundation
import Hummingbird
import KagamiFlow
import KagamiJSON
import KagamiStore

struct NotesAPI: Sendable {
    let store: any FlowStore
    /// Where a new note goes: the recording chain, so the session keeps it and live views see it.
    let recorder: any FlowSink

    func register(on router: Router<some RequestContext>) {
        router.get("/api/notes") { _, _ in
            try await store.flush()
            let notes = try await store.notes()
            return jsonResponse(["notes": .array(notes.map(\.json))])
        }
        // `{"text": "added a Map Local rule 'feed'", "author": "kagami mcp", "flow": ID}`;
        // author and flow may be left out.
        router.post("/api/notes") { request, _ in
            let note = try Self.note(from: try await BreakpointAPI.text(of: request))
            recorder.record(.note(note))
            try await store.flush()
            return jsonResponse(note.json, status: .created)
        }
    }

    /// The note a request body asks for, or an error naming the field that is wrong.
    static func note(from body: String) throws(APIError) -> SessionNote {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            throw APIError(.badRequest, "the request body is not JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw APIError(.badRequest, "give a JSON object: {\"text\": \"…\", \"author\": \"…\"}")
        }
        for key in object.keys where !["text", "author", "flow"].contains(key) {
            throw APIError(.badRequest, "a note has no field \"\(key)\" (it has text, author and flow)", details: ["field": .string(key)])
        }
        guard let text = object["text"]?.stringValue, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw APIError(.badRequest, "text: give the note's text, a string that is not empty", details: ["field": "text"])
        }
        guard text.utf8.count <= SessionNote.maximumTextLength else {
            throw APIError(.contentTooLarge, "text: a note is at most \(SessionNote.maximumTextLength) bytes (this one has \(text.utf8.count))", details: ["field": "text"])
        }
        var author = "admin API"
        switch object["author"] {
        case nil, .null?: break
        case .string(let given)? where !given.isEmpty && given.utf8.count <= SessionNote.maximumAuthorLength: author = given
        default:
            throw APIError(.badRequest, "author: give who made the change, a string of 1 to \(SessionNote.maximumAuthorLength) bytes", details: ["field": "author"])
        }
        var flowID: UUID?
        switch object["flow"] {
        case nil, .null?: break
        case .string(let text)?:
            guard let id = UUID(uuidString: text) else {
                throw APIError(.badRequest, "flow: \(text) is not an exchange id", details: ["field": "flow"])
            }
            flowID = id
        default:
            throw APIError(.badRequest, "flow: give the id of the exchange the note concerns, as a string", details: ["field": "flow"])
        }
        // To the millisecond, as the admin API gives times: the note read back is the one kept.
        let now = (Date().timeIntervalSince1970 * 1000).rounded() / 1000
        return SessionNote(time: Date(timeIntervalSince1970: now), author: author, text: text, flowID: flowID)
    }
}

extension SessionNote {
    /// A note as the admin API, its event stream and `kagami mcp` give it.
    public var json: JSONValue {
        var object: JSONObject = [:]
        object["id"] = .string(id.uuidString)
        object["time"] = .number(Flow.milliseconds(time))
        object["author"] = .string(author)
        object["text"] = .string(text)
        object["flow"] = flowID.map { .string($0.uuidString) } ?? .null
        return .object(object)
    }

    /// A note from its `json`; nil when that is not one.
    public init?(json: JSONValue) {
        guard let idText = json["id"]?.stringValue, let id = UUID(uuidString: idText),
              let milliseconds = json["time"]?.doubleValue,
              let author = json["author"]?.stringValue, let text = json["text"]?.stringValue else { return nil }
        self.init(
            id: id, time: Date(timeIntervalSince1970: milliseconds / 1000), author: author, text: text,
            flowID: json["flow"]?.stringValue.flatMap(UUID.init(uuidString:)))
    }
}
