import Foundation

/// A line of a session that is not an exchange: a change made to the running proxy while it
/// recorded (a rule added or removed, a scenario put in force, a held exchange released), who
/// made it, and the exchange it concerns when it concerns one. Kept in the session beside its
/// exchanges, so whoever reads the session later sees why traffic changed from one exchange to
/// the next.
public struct SessionNote: Sendable, Equatable, Codable {
    public var id: UUID
    public var time: Date
    /// Who made the change, as it named itself: `kagami mcp`, `web UI`, `kagami scenario`.
    public var author: String
    public var text: String
    public var flowID: UUID?

    public init(id: UUID = UUID(), time: Date = Date(), author: String, text: String, flowID: UUID? = nil) {
        self.id = id
        self.time = time
        self.author = author
        self.text = text
        self.flowID = flowID
    }

    /// The longest text and author kept; longer ones are cut (a note is a line, not a document).
    public static let maximumTextLength = 4_096
    public static let maximumAuthorLength = 128

    /// The note with its author and text cut to their limits, at a character boundary.
    public var bounded: SessionNote {
        var note = self
        if note.text.utf8.count > Self.maximumTextLength { note.text = Self.prefix(note.text, bytes: Self.maximumTextLength) }
        if note.author.utf8.count > Self.maximumAuthorLength { note.author = Self.prefix(note.author, bytes: Self.maximumAuthorLength) }
        return note
    }

    private static func prefix(_ text: String, bytes: Int) -> String {
        var kept = Substring()
        var count = 0
        for character in text {
            count += character.utf8.count
            if count > bytes { break }
            kept.append(character)
        }
        return String(kept)
    }
}
