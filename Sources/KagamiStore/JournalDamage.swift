/// What opening a session found damaged in the journal a killed process left (`SessionJournal`),
/// or a shared store found in a spool it replayed: where, how much, and where those bytes were
/// set aside. Its description is the warning the store gives.
public struct JournalDamage: Sendable, Hashable, CustomStringConvertible {
    /// Damaged bytes between whole records.
    public struct Part: Sendable, Hashable {
        /// Byte offsets in the journal.
        public var bytes: Range<Int>
        /// Records that began there, at least (damage may fall on where one begins); 0 when none
        /// can be said to have (the journal's header alone, a journal none of which is read).
        public var records: Int
        /// A whole record of a kind this version doesn't read (one part each): its number.
        public var unreadKind: UInt8?

        public init(bytes: Range<Int>, records: Int, unreadKind: UInt8? = nil) {
            self.bytes = bytes
            self.records = records
            self.unreadKind = unreadKind
        }
    }

    public var journal: String
    public var parts: [Part]
    /// The file now holding the damaged bytes, one part after another.
    public var asideFile: String?
    /// Why they could not be set aside: the journal is then left as it is, to be replayed
    /// again by the next opening.
    public var notSetAside: String?
    /// Whole records replayed into the session.
    public var replayed: Int
    /// What the journal is, for the description: "the session journal", "the spool".
    public var name: String

    public init(journal: String, parts: [Part], asideFile: String? = nil, notSetAside: String? = nil, replayed: Int,
                name: String = "the session journal") {
        self.journal = journal
        self.parts = parts
        self.asideFile = asideFile
        self.notSetAside = notSetAside
        self.replayed = replayed
        self.name = name
    }

    public var damagedBytes: Int { parts.reduce(0) { $0 + $1.bytes.count } }
    /// At least this many records were lost to the damage.
    public var damagedRecords: Int { parts.reduce(0) { $0 + $1.records } }

    /// "the session journal s.sqlite-flows is damaged: at least 1 record in 1032 bytes (bytes
    /// 20480-21511) set aside in s.sqlite-flows-damaged; its 38 whole records are replayed"
    public var description: String {
        let places = parts.map { "\($0.bytes.lowerBound)-\($0.bytes.upperBound - 1)" }.joined(separator: ", ")
        let records = damagedRecords == 0 ? "" : "at least \(damagedRecords) record\(damagedRecords == 1 ? "" : "s") in "
        var text = "\(name) \(journal) is damaged: \(records)\(damagedBytes) byte\(damagedBytes == 1 ? "" : "s") (bytes \(places))"
        let kinds = parts.compactMap(\.unreadKind).map(String.init)
        if !kinds.isEmpty {
            text += ", of which \(kinds.count == 1 ? "a record" : "records") of kind \(kinds.joined(separator: ", ")) that this version of Kagami does not read,"
        }
        if let asideFile {
            text += " set aside in \(asideFile)"
        } else if let notSetAside {
            text += " that could not be set aside (\(notSetAside)), so the journal is left as it is and replayed again when the session is next opened"
        }
        text += "; its \(replayed) whole record\(replayed == 1 ? " is" : "s are") replayed, the exchanges of the damaged ones are not in the session"
        return text
    }
}
