import Foundation
import KagamiFlow
import KagamiStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local file holding what could not be written to the server while it was away, so an
/// exchange is durable (on this machine) before its client sees it complete, and is written
/// to the shared store, in order, once the server is back.
///
/// It is a session journal holding every kind of entry (`SessionJournal`, its records checked
/// by their checksums), each batch followed by `fsync`. A record torn by a crash is the last
/// one, and its client never saw its exchange complete; damaged bytes elsewhere cost only the
/// records they fall on, set aside beside the file (`<spool>-damaged`) when it is replayed. The
/// file is locked (`flock`) by the store that writes or replays it, so a store opening the same
/// session later takes over only what no running store holds. Spool files of earlier releases
/// (each record a 4-byte big-endian length and a JSON document) are still read.
final class SessionSpool: Sendable {
    let path: String
    private let journal: SessionJournal
    /// What the file held when it was found (a spool a store before left), nil for one this
    /// store made.
    private let foundBytes: Int?
    /// When it was last written, for replaying spools found in the order they were written.
    private let modified: timespec

    /// A spool file past this size takes no more entries: the next batch begins a new one, so a
    /// replay reads a file at a time without holding a whole outage in memory.
    static let fileBytes = 64 << 20

    private init(path: String, journal: SessionJournal, foundBytes: Int?, modified: timespec) {
        self.path = path
        self.journal = journal
        self.foundBytes = foundBytes
        self.modified = modified
    }

    /// Bytes in the file.
    var bytes: Int { (foundBytes ?? 0) + journal.size }

    /// Whether new entries go here: a file this store made, not yet past `fileBytes`. A file
    /// found is only replayed (its journal was written by a process before).
    var takesEntries: Bool { foundBytes == nil && bytes < Self.fileBytes }

    /// The prefix of every spool file of one session in one database.
    static func prefix(session: String, location: PostgresLocation) -> String {
        let safe = session.unicodeScalars.map { scalar -> String in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII ? String(scalar) : "_"
        }.joined()
        // FNV-1a: stable across runs, unlike `hashValue`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(location.host):\(location.port)/\(location.database)/\(session)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "\(safe.prefix(64))-\(String(hash, radix: 16))-"
    }

    /// A new spool file in `directory` (created, owner-only, when missing). Its name begins, after
    /// `prefix`, with the time it was made, so files found with the same modification time are
    /// replayed in the order they were made.
    static func create(in directory: String, prefix: String) throws -> SessionSpool {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let made = String(format: "%016llx", UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))
        let path = (directory as NSString).appendingPathComponent("\(prefix)\(made)-\(getpid())-\(UUID().uuidString.prefix(8)).spool")
        do {
            return SessionSpool(path: path, journal: try SessionJournal(path: path), foundBytes: nil, modified: now)
        } catch is SessionJournal.InUse {
            throw FlowStoreError("cannot lock spool file \(path): another process holds it")
        }
    }

    /// Spool files of this session left by stores that are gone (killed, or stopped while the
    /// server was away), locked for this one, oldest first.
    static func leftovers(in directory: String, prefix: String) -> [SessionSpool] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var found: [SessionSpool] = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".spool") {
            let path = (directory as NSString).appendingPathComponent(name)
            var status = stat()
            // A file gone since the listing stays gone (opening the journal would make it).
            guard stat(path, &status) == 0, let journal = try? SessionJournal(path: path) else { continue }
            found.append(SessionSpool(path: path, journal: journal, foundBytes: Int(status.st_size), modified: status.st_mtim))
        }
        return found.sorted { left, right in
            if left.modified.tv_sec != right.modified.tv_sec { return left.modified.tv_sec < right.modified.tv_sec }
            if left.modified.tv_nsec != right.modified.tv_nsec { return left.modified.tv_nsec < right.modified.tv_nsec }
            return left.path < right.path
        }
    }

    /// Appends `entries` and waits for them to reach the disk.
    func append(_ entries: [SessionEntry]) throws {
        for entry in entries { try journal.append(entry) }
        try journal.synchronize()
    }

    /// The entries in the file, in order, and what is damaged in it, set aside beside it
    /// (`<spool>-damaged`) by the first replay that finds it: nil once a file is there.
    func entries() -> (entries: [SessionEntry], damage: JournalDamage?) {
        if let entries = Self.earlierFormat(at: path) { return (entries, nil) }
        let contents = SessionJournal.contents(at: path, kinds: Set(SessionJournal.Kind.allCases))
        let setAside = !SessionJournal.asideFiles(of: path).isEmpty
        return (contents.records.map(\.entry), setAside ? nil : journal.setAsideDamage(of: contents, name: "the spool"))
    }

    /// Deletes the file: everything in it is in the database. Its lock goes with the last
    /// reference.
    func remove() {
        unlink(path)
    }

    // MARK: Earlier format

    /// A record of the spool format before the journal's.
    private struct EarlierRecord: Decodable {
        var key: UUID
        var flow: Flow?
        var messages: [WebSocketMessage]?
        var violations: [ContractViolation]?
        var flowID: UUID?
        var note: SessionNote?

        var entry: SessionEntry? {
            if let flow {
                SessionEntry(.flow(flow), key: key)
            } else if let messages, let flowID {
                SessionEntry(.messages(messages, flowID: flowID), key: key)
            } else if let violations, let flowID {
                SessionEntry(.violations(violations, flowID: flowID), key: key)
            } else if let note {
                SessionEntry(.note(note), key: key)
            } else {
                nil
            }
        }
    }

    /// The entries of a spool file of the format before the journal's, which reading stops at
    /// the first record that isn't whole; nil when the file doesn't begin with one.
    static func earlierFormat(at path: String) -> [SessionEntry]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 4), !head.elementsEqual(SessionJournal.magic) else { return nil }
        let data = head + ((try? handle.readToEnd()) ?? Data())
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        var entries: [SessionEntry] = []
        var offset = data.startIndex
        while data.endIndex - offset >= 4 {
            let length = data[offset..<offset + 4].reduce(0) { ($0 << 8) | Int($1) }
            guard data.endIndex - offset - 4 >= length,
                  let record = try? decoder.decode(EarlierRecord.self, from: data[offset + 4..<offset + 4 + length]),
                  let entry = record.entry else { break }
            entries.append(entry)
            offset += 4 + length
        }
        return entries.isEmpty ? nil : entries
    }
}
