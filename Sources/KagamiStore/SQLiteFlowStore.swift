import DequeModule
import Foundation
import GRDB
import KagamiFlow
import KagamiOutput
import Synchronization

#if canImport(Glibc)
import Glibc
private let closeDescriptor = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let closeDescriptor = Darwin.close
#endif

/// The default store: one SQLite file per session, in WAL mode. Flows are written through the
/// session's writer (`SessionWriter`: group commit, backpressure, redaction) by a driver that
/// commits each batch in one transaction (`SQLiteSessionDriver`). A flow whose client waits for
/// it to be kept (the proxy's finished exchanges) is appended to the session's journal first
/// (`SessionJournal`, `<session>-flows`), which a killed process leaves for the next opening to
/// replay; the client goes on without waiting for SQLite.
///
/// A journal or body log damaged since it was written costs only what the damage falls on: the
/// opening replays the journal's whole records, sets its damaged bytes aside and warns where
/// they were (`journalDamage`), and a body whose bytes in the body log are damaged or missing
/// is read as not available, the warning saying why.
public final class SQLiteFlowStore: FlowStore {
    /// Removes a session file and the files beside it (SQLite's WAL and shared memory, the
    /// journal, the body log), for a session made and left empty.
    public static func removeFiles(of path: String) {
        for suffix in ["", "-wal", "-shm", "-flows", "-bodies"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    public let path: String
    /// What is replaced by a marker before a flow reaches any of the session's files (the
    /// journal, the body log, SQLite's WAL and database): nothing unless asked for, since a
    /// session file stays on its owner's machine.
    public let redaction: FlowRedaction
    /// What the opening found damaged in the session's journal, when it did.
    public let journalDamage: JournalDamage?
    /// Where the store says what it found damaged; each body found not available is said once.
    private let warn: @Sendable (String) -> Void
    private let unavailableBodiesSaid = Mutex(Set<String>())
    let database: DatabasePool
    /// The session's one write path: the journal and body log (when this process owns the
    /// session), the queue, the batches this store's driver commits.
    let writer: SessionWriter
    /// Where large bodies are (nil for an in-memory session).
    private let bodyLog: SessionBodyLog?
    /// Whether this store said a proxy records into the session (`markRecording()`).
    private let marked = Mutex(false)

    /// Body bytes that may wait for the writer. When the disk falls behind the traffic, flows
    /// past this are stored without body bytes (sizes kept, marked truncated) rather than
    /// letting memory grow without bound.
    public let maximumPendingBodyBytes: Int

    /// Flows that may wait for the writer before `isBehind` asks the proxy to slow down. The
    /// journal keeps them already, so few need wait, and each holds its whole flow (~1.5 KB for a
    /// small exchange): 8,000 took ~20 MB less memory than 20,000 at the same pace. 2,000 would
    /// take ~10 MB less again, but at saturation the proxy then waits for the writer often
    /// enough to double its p99 (7 → 9–17 ms, same req/s: `bench/results/memory-2026-11-29-static.md`,
    /// `bench/results/proxy-2026-11-29-record.md`).
    public let maximumPendingFlows: Int
    /// WebSocket messages that may wait for the writer before `isBehind` asks the proxy's
    /// relays to stop reading for a moment: memory stays flat over a socket of any length.
    public let maximumPendingMessages: Int

    /// Filtered pages look at this many positions of the table next to their cursor first
    /// (see `flows(_:)`).
    public let filterWindow: Int
    /// Whether the session has its text index (`flow_text`; not with a SQLite without FTS5's
    /// trigram tokenizer).
    public let hasTextIndex: Bool

    /// Warnings go to standard error unless `warn` takes them. Without `keepsJournal` the
    /// session has no journal and no body log beside it: a flow is kept once SQLite has it (a
    /// scratch copy nobody waits on).
    public init(
        path: String, maximumPendingBodyBytes: Int = 64 << 20, maximumPendingFlows: Int = 8_000, maximumPendingMessages: Int = 50_000,
        filterWindow: Int = 50_000, redaction: FlowRedaction = .none, keepsJournal: Bool = true,
        warn: @escaping @Sendable (String) -> Void = { Console.error("kagami: warning: \($0)\n") }
    ) throws {
        self.path = path
        // A proxy recording into the session keeps its journal beside it until it closes the
        // session (a killed one leaves it, to be replayed): a copy of the file alone has none.
        let companions = FileManager.default.fileExists(atPath: path + "-flows")
        self.redaction = redaction
        self.warn = warn
        self.filterWindow = max(1, filterWindow)
        self.maximumPendingBodyBytes = maximumPendingBodyBytes
        self.maximumPendingFlows = maximumPendingFlows
        self.maximumPendingMessages = maximumPendingMessages
        var configuration = Configuration()
        configuration.label = "kagami.session"
        // Another writer of the file (a store being let go still committing, a second process
        // opening a session a proxy records into) holds the lock for a transaction's time: wait
        // for it rather than fail with "database is locked".
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // NORMAL in WAL mode: a committed transaction survives the process being killed;
            // only power loss can take the last ones.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Each small transaction rewrites the last pages of the table and its indexes; a
            // checkpoint every 10,000 pages (40 MB of WAL) instead of 1,000 copies each of them
            // to the file once for ten times as many transactions, and syncs a tenth as often.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 10000")
        }
        do {
            try Self.createPrivately(path)
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
            hasTextIndex = try database.read { db in try db.tableExists("flow_text") }
        } catch {
            throw FlowStoreError("cannot open session file \(path): \(error)")
        }
        // A session another live process records into is read as it is: its journal is that
        // process's to replay, and flows recorded here wait for their commit instead.
        let journal: SessionJournal?
        let bodyLog: SessionBodyLog?
        if path.isEmpty || path == ":memory:" || !keepsJournal {
            journal = nil
            bodyLog = nil
            journalDamage = nil
        } else {
            do {
                journal = try SessionJournal(path: path + "-flows")
            } catch is SessionJournal.InUse {
                journal = nil
            }
            bodyLog = SessionBodyLog(path: path + "-bodies")
            let earlierAside = SessionJournal.asideFiles(of: path + "-flows")
            if let journal {
                journalDamage = try Self.replay(journal, into: database, of: path)
            } else {
                journalDamage = nil
            }
            if let journalDamage { warn(journalDamage.description) }
            for aside in earlierAside {
                warn("\(aside) holds damaged records an earlier opening set aside from this session's journal; the exchanges in them are not in the session")
            }
        }
        self.bodyLog = bodyLog
        if journal != nil {
            // This process owns the session: a proxy that was recording into it is gone.
            let recording = try? database.read { try String.fetchOne($0, sql: "SELECT value FROM sessionState WHERE key = 'recording'") }
            if let recording {
                if companions {
                    // Stopped without closing it (killed): what it left beside is replayed.
                    try? database.write { try $0.execute(sql: "DELETE FROM sessionState WHERE key = 'recording'") }
                } else {
                    warn("\(path) was copied while a proxy was recording into it (\(recording)): the exchanges that proxy had not yet written into the file itself are not in this copy (they were in the -wal and -flows files beside the session it recorded into). Copy a session once its proxy has stopped, or take a copy with `kagami export --format session -o FILE`.")
                }
            }
        }
        writer = SessionWriter(
            name: path, driver: SQLiteSessionDriver(database: database, path: path, indexesText: hasTextIndex),
            limits: SessionWriter.Limits(
                pendingBodyBytes: maximumPendingBodyBytes, pendingEntries: maximumPendingFlows, pendingMessages: maximumPendingMessages,
                batch: Self.maximumBatch, gathering: Self.gatheringTime),
            redaction: redaction, journal: journal, bodyLog: bodyLog)
    }

    /// Flows a killed process had journaled but not committed go into the session (again, for
    /// those that were: a flow recorded again replaces itself), then the journal is emptied.
    /// Its damaged parts are set aside first; when they can't be, the journal is left as it is
    /// (and replayed again at the next opening), so nothing in it is lost.
    private static func replay(_ journal: SessionJournal, into database: DatabasePool, of path: String) throws -> JournalDamage? {
        let contents = SessionJournal.contents(at: journal.path)
        let damage = journal.setAsideDamage(of: contents, name: "the session journal")
        if !contents.records.isEmpty {
            let flows = contents.records.compactMap { record -> (Flow, Data, LoggedBodies)? in
                guard var flow = record.flow else { return nil }
                var logged = LoggedBodies()
                switch record.request {
                case .inline(let data): flow.request.body.data = data
                case .logged(let place): logged.request = place
                }
                switch record.response {
                case .inline(let data): flow.response?.body.data = data
                case .logged(let place): logged.response = place
                }
                return (flow, record.metadata, logged)
            }
            do {
                try database.write { db in
                    for (flow, metadata, logged) in flows { try Self.insert(flow, metadata: metadata, logged: logged, db) }
                }
            } catch {
                throw FlowStoreError("cannot replay the session journal \(journal.path) into \(path): \(error)")
            }
        }
        // A header, records it started over from, or nothing: all of it committed.
        if damage?.notSetAside == nil { journal.empty() }
        return damage
    }

    /// Whether the file at `path` is a session file: an SQLite database with the tables a store
    /// makes. Found without writing anything, where opening it as a store would add those
    /// tables to any SQLite database (an app's own, beside the sessions in a folder).
    public static func holdsSession(at path: String) -> Bool {
        guard !path.isEmpty, path != ":memory:", FileManager.default.fileExists(atPath: path) else { return false }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration)
            return try database.read { db in try db.tableExists("flow") && db.tableExists("body") }
        } catch {
            return false
        }
    }

    /// Why the file at `path` is not a session file (there is none, or it is another program's
    /// SQLite database, an empty or any other file), in words saying which, found before
    /// opening it as a session would add tables to it; nil when it is one.
    public static func notASession(at path: String) -> FlowStoreError? {
        guard !holdsSession(at: path) else { return nil }
        guard FileManager.default.fileExists(atPath: path) else { return FlowStoreError("no session file at \(path)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { return FlowStoreError("cannot read \(path)") }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        if header.isEmpty {
            return FlowStoreError("\(path) is empty: it is not a session file")
        }
        if header == Data("SQLite format 3\0".utf8) {
            return FlowStoreError("\(path) is an SQLite database but not a Kagami session (it has no flow and body tables); it was left as it is")
        }
        return FlowStoreError("\(path) is not a session file (not an SQLite database)")
    }

    /// A new session file is readable by its owner only (captures hold credentials); SQLite
    /// gives its -wal and -shm files the same mode. An existing file is left as it is.
    static func createPrivately(_ path: String) throws {
        guard !path.isEmpty, path != ":memory:" else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            // (The descriptor's close, not the store's.)
            _ = closeDescriptor(descriptor)
        } else if errno != EEXIST {
            throw FlowStoreError("cannot create session file \(path): \(String(cString: strerror(errno)))")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: flows and bodies") { db in
            try db.create(table: "flow") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("id", .text).notNull().unique()
                t.column("mode", .text).notNull()
                t.column("startedAt", .double).notNull()
                t.column("method", .text).notNull()
                t.column("url", .text).notNull()
                t.column("host", .text).notNull()
                t.column("status", .integer)
                t.column("requestSize", .integer).notNull()
                t.column("responseSize", .integer)
                t.column("duration", .double)
                t.column("error", .text)
                // Everything else about the flow (headers, timings, TLS...) without body bytes.
                t.column("metadata", .blob).notNull()
            }
            try db.create(table: "body") { t in
                t.column("flowId", .text).notNull().references("flow", column: "id", onDelete: .cascade)
                t.column("part", .text).notNull()
                t.column("data", .blob).notNull()
                t.primaryKey(["flowId", "part"])
            }
        }
        // Repeats are looked up by the exchange they repeat; the flag is in the metadata too.
        migrator.registerMigration("v2: repeatOf") { db in
            try db.alter(table: "flow") { t in t.add(column: "repeatOf", .text) }
            try db.create(index: "flow_repeatOf", on: "flow", columns: ["repeatOf"])
        }
        // WebSocket messages, appended as they pass; a flow's are read in order. No foreign key:
        // they are written while their flow is recorded again at its end.
        migrator.registerMigration("v3: websocketMessage") { db in
            try db.create(table: "websocketMessage") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("flowId", .text).notNull()
                t.column("direction", .text).notNull()
                t.column("time", .double).notNull()
                t.column("opcode", .integer).notNull()
                t.column("size", .integer).notNull()
                t.column("truncated", .boolean).notNull()
                t.column("compressed", .boolean).notNull()
                t.column("data", .blob).notNull()
            }
            try db.create(index: "websocketMessage_flowId", on: "websocketMessage", columns: ["flowId", "seq"])
        }
        // What the proxy did to a message on its way (edited, dropped, injected, rewritten).
        migrator.registerMigration("v4: websocketMessage.note") { db in
            try db.alter(table: "websocketMessage") { t in t.add(column: "note", .text) }
        }
        // Large bodies in the session's body log (`SessionBodyLog`): their place, no bytes.
        migrator.registerMigration("v5: body.logOffset") { db in
            try db.alter(table: "body") { t in
                t.add(column: "logOffset", .integer)
                t.add(column: "logLength", .integer)
            }
        }
        // The filter box's columns in an index of their own: a search reads it (about a tenth of
        // the table, which holds each flow's metadata) instead of the table.
        migrator.registerMigration("v6: flow_search") { db in
            try db.create(index: "flow_search", on: "flow", columns: ["url", "host", "method", "status", "error"])
        }
        // Only repeats are looked up by what they repeat: the index leaves out every other flow
        // (most of a session), which it used to take in, at one more insert each.
        migrator.registerMigration("v7: flow_repeatOf of repeats only") { db in
            try db.drop(index: "flow_repeatOf")
            try db.create(index: "flow_repeatOf", on: "flow", columns: ["repeatOf"], condition: Column("repeatOf") != nil)
        }
        // The checksum of a body in the body log (`XXH64`, its 64 bits as SQLite's integer), so
        // bytes damaged since are read as not available; null for bodies logged before.
        migrator.registerMigration("v8: body.logChecksum") { db in
            try db.alter(table: "body") { t in t.add(column: "logChecksum", .integer) }
        }
        // Facts about the session as a whole: `recording` while a proxy records into it, so a
        // copy of the file alone taken meanwhile says what it lacks (`markRecording()`).
        migrator.registerMigration("v9: sessionState") { db in
            try db.create(table: "sessionState") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        // Changes made to the proxy while it recorded (`SessionNote`), in the order they came.
        migrator.registerMigration("v10: note") { db in
            try db.create(table: "note") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("id", .text).notNull().unique()
                t.column("time", .double).notNull()
                t.column("author", .text).notNull()
                t.column("text", .text).notNull()
                t.column("flowId", .text)
            }
        }
        // Bodies of up to `SmallBodies.limit` bytes in their flow's row: a row of the body table
        // and its index entry cost more than a small body itself.
        migrator.registerMigration("v11: flow.smallBodies") { db in
            try db.alter(table: "flow") { t in t.add(column: "smallBodies", .blob) }
        }
        // The filter box's words found through an index of the three-character runs (FTS5's
        // trigram tokenizer) of each flow's method, host and URL, kept by triggers: a word that
        // few of millions of flows hold is found without reading the others. A SQLite without
        // the trigram tokenizer (before 3.34) goes without; the filter then scans `flow_search`.
        migrator.registerMigration("v12: flow_text") { db in
            do {
                try db.execute(sql: """
                    CREATE VIRTUAL TABLE flow_text USING fts5(
                        words, content = 'flow_words', content_rowid = 'seq', tokenize = 'trigram', detail = 'none', columnsize = 0)
                    """)
            } catch {
                return
            }
            try db.execute(sql: """
                CREATE VIEW flow_words AS SELECT seq, \(SQLDialect.textIndexWords()) AS words FROM flow;
                CREATE TRIGGER flow_text_insert AFTER INSERT ON flow BEGIN
                    INSERT INTO flow_text (rowid, words) VALUES (new.seq, \(SQLDialect.textIndexWords(of: "new.")));
                END;
                CREATE TRIGGER flow_text_delete AFTER DELETE ON flow BEGIN
                    INSERT INTO flow_text (flow_text, rowid, words) VALUES ('delete', old.seq, \(SQLDialect.textIndexWords(of: "old.")));
                END;
                CREATE TRIGGER flow_text_update AFTER UPDATE OF method, host, url ON flow BEGIN
                    INSERT INTO flow_text (flow_text, rowid, words) VALUES ('delete', old.seq, \(SQLDialect.textIndexWords(of: "old.")));
                    INSERT INTO flow_text (rowid, words) VALUES (new.seq, \(SQLDialect.textIndexWords(of: "new.")));
                END;
                INSERT INTO flow_text (flow_text) VALUES ('rebuild');
                """)
        }
        // The number of flows, kept by triggers: counting ten million rows took longer than
        // reading a page of them, and every page the web UI asks for says the session's total.
        migrator.registerMigration("v13: flowCount") { db in
            try db.execute(sql: """
                CREATE TABLE flowCount (n INTEGER NOT NULL);
                INSERT INTO flowCount (n) SELECT count(*) FROM flow;
                CREATE TRIGGER flowCount_insert AFTER INSERT ON flow BEGIN UPDATE flowCount SET n = n + 1; END;
                CREATE TRIGGER flowCount_delete AFTER DELETE ON flow BEGIN UPDATE flowCount SET n = n - 1; END;
                """)
        }
        // The text index takes the newest flows in chunks (`indexText`) rather than by a
        // trigger per flow: FTS5 writes a segment per transaction and merges them, which cost a
        // small transaction of flows 17 µs a flow against 2 µs a flow in chunks of thousands.
        // `flowTextProgress` says how far it goes; flows past it are read by a scan.
        migrator.registerMigration("v14: flow_text in chunks") { db in
            guard try db.tableExists("flow_text") else { return }
            let words = { (row: String) in SQLDialect.textIndexWords(of: row) }
            try db.execute(sql: """
                CREATE TABLE flowTextProgress (upTo INTEGER NOT NULL);
                INSERT INTO flowTextProgress (upTo) SELECT coalesce(max(seq), 0) FROM flow;
                DROP TRIGGER flow_text_insert;
                DROP TRIGGER flow_text_delete;
                DROP TRIGGER flow_text_update;
                CREATE TRIGGER flow_text_delete AFTER DELETE ON flow WHEN old.seq <= (SELECT upTo FROM flowTextProgress) BEGIN
                    INSERT INTO flow_text (flow_text, rowid, words) VALUES ('delete', old.seq, \(words("old.")));
                END;
                CREATE TRIGGER flow_text_update AFTER UPDATE OF method, host, url ON flow WHEN old.seq <= (SELECT upTo FROM flowTextProgress) BEGIN
                    INSERT INTO flow_text (flow_text, rowid, words) VALUES ('delete', old.seq, \(words("old.")));
                    INSERT INTO flow_text (rowid, words) VALUES (new.seq, \(words("new.")));
                END;
                """)
        }
        return migrator
    }

    /// Flows past the text index's end that wait for the next chunk; a filter reads them by a
    /// scan, which for this many takes a few milliseconds.
    package static let textIndexChunk = 10_000

    /// Adds every flow past the text index's end to it, once `atLeast` of them wait; returns how
    /// many it added (0 for a session without the index).
    @discardableResult
    static func indexText(atLeast: Int = 1, _ db: Database) throws -> Int {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT upTo, (SELECT max(seq) FROM flow) AS newest FROM flowTextProgress")
        else { return 0 }
        let upTo: Int64 = row["upTo"]
        let newest: Int64 = row["newest"] ?? upTo
        guard newest - upTo >= atLeast, newest > upTo else { return 0 }
        try db.cachedStatement(sql: "INSERT INTO flow_text (rowid, words) SELECT seq, words FROM flow_words WHERE seq > ? AND seq <= ?")
            .execute(arguments: [upTo, newest])
        try db.cachedStatement(sql: "UPDATE flowTextProgress SET upTo = ?").execute(arguments: [newest])
        return Int(newest - upTo)
    }

    /// Brings the text index up to the newest flow (the writer does it every
    /// `textIndexChunk` flows; the filter reads the flows past it by a scan meanwhile).
    package func indexText() async throws {
        try await flush()
        guard hasTextIndex else { return }
        try await database.write { db in try Self.indexText(db) }
    }

    /// Where the text index ends: the position of the last flow in it (0 without the index).
    package func textIndexEnd() async throws -> Int64 {
        guard hasTextIndex else { return 0 }
        return try await read { db in try Int64.fetchOne(db, sql: "SELECT upTo FROM flowTextProgress") ?? 0 }
    }

    // MARK: Recording into it

    /// A proxy records into the session: said in the file itself (checkpointed into it), so a
    /// copy of the file alone taken while it records says what it lacks when opened; `close()`
    /// takes it back. Nothing is said when another process owns the session.
    public func markRecording() {
        guard writer.journal != nil else { return }
        let since = ISO8601DateFormatter().string(from: Date())
        do {
            try database.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sessionState (key, value) VALUES ('recording', ?)",
                    arguments: ["process \(getpid()) since \(since), into \(path)"])
            }
            try database.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
            marked.withLock { $0 = true }
        } catch {
            warn("could not mark \(path) as being recorded into: \(error)")
        }
    }

    /// Writes what is queued, takes back the recording mark and leaves the file whole (its WAL
    /// copied into it), so the file alone is the session once its proxy has stopped.
    public func close() async {
        try? await flush()
        bodyLog?.giveBackSpaceSetAside()
        guard writer.journal != nil else { return }
        do {
            if marked.withLock({ $0 }) {
                try await database.write { db in try db.execute(sql: "DELETE FROM sessionState WHERE key = 'recording'") }
            }
            try await database.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        } catch {
            warn("could not close \(path): \(error)")
        }
    }

    // MARK: Writing

    static let maximumBatch = 5_000
    /// How long flows already in the journal gather before a transaction writes them together.
    static let gatheringTime = Duration.milliseconds(5)

    public func record(_ record: FlowRecord) {
        writer.record(record)
    }

    public var isBehind: Bool { writer.isBehind }

    /// Runs after every flow recorded before the call, a no-op when no flow has that id.
    public func updateViolations(_ violations: [ContractViolation], ofFlow id: UUID) {
        writer.updateViolations(violations, ofFlow: id)
    }

    public func flush() async throws {
        try await writer.flush()
    }

    public func removeAll() async throws {
        try await flush()
        do {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM body")
                try db.execute(sql: "DELETE FROM websocketMessage")
                try db.execute(sql: "DELETE FROM flow")
                try db.execute(sql: "DELETE FROM note")
            }
        } catch {
            throw FlowStoreError("could not clear \(path): \(error)")
        }
        // Its large bodies go too, unless one recorded since is on its way in.
        if writer.journal != nil { bodyLog?.emptyIfUnreferenced() }
    }

    static func insert(_ flow: Flow, metadata: Data?, logged: LoggedBodies = LoggedBodies(), _ db: Database) throws {
        let id = flow.id.canonicalText
        let metadata = metadata ?? flow.storedRecord()
        let small = SmallBodies(flow, logged: logged)
        do {
            try insertRow(flow, id: id, metadata: metadata, small: small, logged: logged, db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // A flow recorded again (an import, an update, a WebSocket at its end) replaces the
            // earlier row and its bodies, keeping its place in the session and its messages.
            try db.cachedStatement(sql: "DELETE FROM body WHERE flowId = ?").execute(arguments: [id])
            try db.cachedStatement(sql: """
                UPDATE flow SET mode = ?, startedAt = ?, method = ?, url = ?, host = ?, status = ?, requestSize = ?,
                responseSize = ?, duration = ?, error = ?, metadata = ?, repeatOf = ?, smallBodies = ? WHERE id = ?
                """).execute(arguments: [
                    flow.mode.rawValue, flow.timings.start.timeIntervalSince1970, flow.request.method,
                    flow.request.url, flow.request.host, flow.response?.status, flow.request.body.size,
                    flow.response?.body.size, flow.duration, flow.error?.message, metadata,
                    flow.repeatOf?.canonicalText, small.data, id,
                ])
            try insertBodies(flow, id: id, small: small, logged: logged, db)
        }
    }

    static func insert(_ messages: [WebSocketMessage], of flowID: UUID, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO websocketMessage (flowId, direction, time, opcode, size, truncated, compressed, data, note)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let id = flowID.canonicalText
        for message in messages {
            try statement.run([
                .text(id), .text(message.direction.rawValue), .double(message.time.timeIntervalSince1970), .integer(Int(message.opcode.rawValue)),
                .integer(message.size), .integer(message.isTruncated ? 1 : 0), .integer(message.isCompressed ? 1 : 0), .blob(message.data),
                SQLiteValue(message.note),
            ], in: db)
        }
    }

    /// A note written again (a replay) is kept once.
    static func insert(_ note: SessionNote, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO note (id, time, author, text, flowId) VALUES (?, ?, ?, ?, ?)").run([
            .text(note.id.canonicalText), .double(note.time.timeIntervalSince1970), .text(note.author), .text(note.text),
            SQLiteValue(note.flowID?.canonicalText),
        ], in: db)
    }

    private static func insertRow(_ flow: Flow, id: String, metadata: Data, small: SmallBodies, logged: LoggedBodies, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO flow (id, mode, startedAt, method, url, host, status, requestSize, responseSize, duration, error, metadata, repeatOf, smallBodies)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .text(id), .text(flow.mode.rawValue), .double(flow.timings.start.timeIntervalSince1970), .text(flow.request.method),
                .text(flow.request.url), .text(flow.request.host), SQLiteValue(flow.response?.status), .integer(flow.request.body.size),
                SQLiteValue(flow.response?.body.size), SQLiteValue(flow.duration), SQLiteValue(flow.error?.message), .blob(metadata),
                SQLiteValue(flow.repeatOf?.canonicalText), small.column,
            ], in: db)
        try insertBodies(flow, id: id, small: small, logged: logged, db)
    }

    /// A body in the body log is a row with its place and checksum and no bytes; a small body
    /// is in its flow's row (`small`), any other in a row of its own.
    private static func insertBodies(_ flow: Flow, id: String, small: SmallBodies, logged: LoggedBodies, _ db: Database) throws {
        let insertBody = try db.cachedStatement(sql: "INSERT INTO body (flowId, part, data, logOffset, logLength, logChecksum) VALUES (?, ?, ?, ?, ?, ?)")
        func insertLogged(_ part: String, _ place: SessionBodyLog.Place) throws {
            try insertBody.run([
                .text(id), .text(part), .blob(Data()), .integer(Int(place.offset)), .integer(place.length),
                SQLiteValue(place.checksum.map { Int(Int64(bitPattern: $0)) }),
            ], in: db)
        }
        if let place = logged.request {
            try insertLogged("request", place)
        } else if small.request == nil, flow.request.body.keptCount > 0 {
            try insertBody.run([.text(id), .text("request"), .blob(flow.request.body.data), .null, .null, .null], in: db)
        }
        if let place = logged.response {
            try insertLogged("response", place)
        } else if small.response == nil, let response = flow.response, response.body.keptCount > 0 {
            try insertBody.run([.text(id), .text("response"), .blob(response.body.data), .null, .null, .null], in: db)
        }
    }

    // MARK: Reading

    /// A flow still waiting for the writer (journaled flows gather a moment) is read once it is committed.
    public func flow(id: UUID) async throws -> Flow? {
        let read = { @Sendable in
            try await self.read { db -> Flow? in
                guard let row = try FlowRow.filter(FlowRow.Columns.id == id.uuidString).fetchOne(db) else { return nil }
                return try self.flow(from: row, bodies: true, db)
            }
        }
        if let flow = try await read() { return flow }
        // (Whatever error an earlier write left is `flush()`'s to report, not this read's.)
        try? await flush()
        return try await read()
    }

    public func flows(offset: Int = 0, limit: Int? = nil, includeBodies: Bool = false) async throws -> [Flow] {
        try await read { db in
            let rows = try FlowRow.order(FlowRow.Columns.seq).limit(limit ?? -1, offset: offset).fetchAll(db)
            return try self.flows(from: rows, bodies: includeBodies, db)
        }
    }

    /// Unfiltered, the table is read in capture order from the position. Filtered, the
    /// positions of the page's flows come first from the `filterWindow` positions next to the
    /// cursor (the newest, when a page of the newest is asked), read in order straight from the
    /// table: words many flows match fill the page there, or in one more window as large as
    /// their share in the first says is needed. What the windows do not fill comes
    /// from a scan of the `flow_search` index beyond them (its columns are all the filter reads,
    /// and a bounded sort keeps the page's worth), however rare the words. Then those rows are
    /// read.
    public func flows(_ query: FlowQuery) async throws -> FlowPage {
        let (condition, filterArguments) = query.filter.sql(.sqlite, placeholder: { _ in "?" })
        let filtered = !query.filter.isEmpty
        let newestFirst = query.order == .newestFirst
        let order = newestFirst ? "DESC" : "ASC"
        // One row past the page says whether there is a next one.
        let limit = max(1, query.limit)
        @Sendable func values(_ arguments: [SQLArgument]) -> StatementArguments {
            StatementArguments(arguments.map { argument -> any DatabaseValueConvertible in
                switch argument {
                case .text(let text): text
                case .integer(let integer): integer
                }
            })
        }
        return try await read { db in
            var rows: [FlowRow]
            if filtered {
                let newest = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM flow") ?? 0
                var cursor = query.after ?? (newestFirst ? newest + 1 : 0)
                let window = newestFirst ? "seq < ? AND seq >= ?" : "seq > ? AND seq <= ?"
                var positions: [Int64] = []
                var span = Int64(self.filterWindow)
                // The first window, then at most one more, as long as the first one's share of
                // matches says would fill the page within 8 windows; past that, the index.
                for _ in 0..<2 {
                    let edge = newestFirst ? cursor - span : cursor + span
                    let found = try Int64.fetchAll(
                        db, sql: "SELECT seq FROM flow NOT INDEXED WHERE \(window) AND \(condition) ORDER BY seq \(order) LIMIT ?",
                        arguments: values([.integer(Int(cursor)), .integer(Int(edge))] + filterArguments + [.integer(limit + 1 - positions.count)]))
                    positions += found
                    cursor = edge
                    let wanted = Int64(limit + 1 - positions.count)
                    guard wanted > 0, newestFirst ? cursor > 1 : cursor < newest, !found.isEmpty else { break }
                    let estimate = wanted * span * 3 / (2 * Int64(found.count))
                    guard estimate <= 8 * Int64(self.filterWindow) else { break }
                    span = max(estimate, Int64(self.filterWindow))
                }
                let windowsCoverTheRest = newestFirst ? cursor <= 1 : cursor >= newest
                if positions.count <= limit, !windowsCoverTheRest, self.hasTextIndex, let text = query.filter.indexedText {
                    // Only flows whose method, host or URL hold the text can match (`%` and `_`
                    // of the text make the index's answer larger, never smaller). Flows past the
                    // index's end (fewer than `textIndexChunk`) are read by a scan, in the
                    // page's order before or after the others.
                    let upTo = try Int64.fetchOne(db, sql: "SELECT upTo FROM flowTextProgress") ?? 0
                    let beyond = newestFirst ? "<" : ">"
                    let indexed = {
                        try Int64.fetchAll(
                            db, sql: """
                                SELECT seq FROM flow WHERE seq IN (SELECT rowid FROM flow_text WHERE words LIKE ?) AND \(condition)
                                AND seq \(beyond) ? AND seq <= ? ORDER BY seq \(order) LIMIT ?
                                """,
                            arguments: values([.text("%\(text)%")] + filterArguments + [.integer(Int(cursor)), .integer(Int(upTo)), .integer(limit + 1 - positions.count)]))
                    }
                    let unindexed = {
                        try Int64.fetchAll(
                            db, sql: "SELECT seq FROM flow WHERE seq > ? AND \(condition) AND seq \(beyond) ? ORDER BY seq \(order) LIMIT ?",
                            arguments: values([.integer(Int(upTo))] + filterArguments + [.integer(Int(cursor)), .integer(limit + 1 - positions.count)]))
                    }
                    for part in newestFirst ? [unindexed, indexed] : [indexed, unindexed] where positions.count <= limit {
                        positions += try part()
                    }
                } else if positions.count <= limit, !windowsCoverTheRest {
                    positions += try Int64.fetchAll(
                        db, sql: "SELECT seq FROM flow INDEXED BY flow_search WHERE \(condition) AND seq \(newestFirst ? "<" : ">") ? ORDER BY seq \(order) LIMIT ?",
                        arguments: values(filterArguments + [.integer(Int(cursor)), .integer(limit + 1 - positions.count)]))
                }
                rows = try FlowRow.filter(positions.contains(FlowRow.Columns.seq)).order(newestFirst ? FlowRow.Columns.seq.desc : FlowRow.Columns.seq.asc).fetchAll(db)
            } else {
                var sql = "SELECT * FROM flow"
                var arguments: [SQLArgument] = []
                if let after = query.after {
                    sql += newestFirst ? " WHERE seq < ?" : " WHERE seq > ?"
                    arguments.append(.integer(Int(after)))
                }
                sql += " ORDER BY seq \(order) LIMIT ?"
                arguments.append(.integer(limit + 1))
                rows = try FlowRow.fetchAll(db, sql: sql, arguments: values(arguments))
            }
            let page = rows.prefix(limit)
            let flows = try self.flows(from: page, bodies: query.includeBodies, db)
            return FlowPage(flows: flows, next: rows.count > limit ? page.last?.seq : nil)
        }
    }

    /// The exchanges recorded as repeats of `id`, in the order they were stored, without bodies.
    public func repeats(of id: UUID) async throws -> [Flow] {
        try await read { db in
            let rows = try FlowRow.filter(FlowRow.Columns.repeatOf == id.uuidString).order(FlowRow.Columns.seq).fetchAll(db)
            return try self.flows(from: rows, bodies: false, db)
        }
    }

    /// The messages of a WebSocket flow in the order they passed, from `offset`.
    public func messages(of flowID: UUID, offset: Int = 0, limit: Int? = nil) async throws -> [WebSocketMessage] {
        try await read { db in
            let rows = try WebSocketMessageRow.filter(WebSocketMessageRow.Columns.flowId == flowID.uuidString)
                .order(WebSocketMessageRow.Columns.seq).limit(limit ?? -1, offset: offset).fetchAll(db)
            return try rows.map { row in
                guard let direction = WebSocketMessage.Direction(rawValue: row.direction),
                      let opcode = WebSocketMessage.Opcode(rawValue: UInt8(clamping: row.opcode)) else {
                    throw FlowStoreError("message \(row.seq ?? 0) of flow \(row.flowId) in \(self.path) is unreadable")
                }
                return WebSocketMessage(
                    direction: direction, time: Date(timeIntervalSince1970: row.time), opcode: opcode, data: row.data,
                    size: row.size, isTruncated: row.truncated, isCompressed: row.compressed, note: row.note)
            }
        }
    }

    /// The session's notes in the order they were made (none in a session written before
    /// Kagami kept them).
    public func notes() async throws -> [SessionNote] {
        try await read { db in
            guard try db.tableExists("note") else { return [] }
            return try Row.fetchAll(db, sql: "SELECT id, time, author, text, flowId FROM note ORDER BY seq").map { row in
                guard let id = UUID(uuidString: row["id"]) else {
                    throw FlowStoreError("note \(String(describing: row["id"] as String?)) in \(self.path) has no readable id")
                }
                let flowID: String? = row["flowId"]
                return SessionNote(
                    id: id, time: Date(timeIntervalSince1970: row["time"]), author: row["author"], text: row["text"],
                    flowID: flowID.flatMap(UUID.init(uuidString:)))
            }
        }
    }

    public func count() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT n FROM flowCount") ?? 0 }
    }

    /// What SQLite says when it can't read the session (a damaged file...) names the file.
    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch let error as FlowStoreError {
            throw error
        } catch {
            throw FlowStoreError("cannot read session file \(path): \(error)")
        }
    }

    private func flow(from row: FlowRow, bodies: Bool, _ db: Database) throws -> Flow {
        try flows(from: CollectionOfOne(row), bodies: bodies, db)[0]
    }

    /// The flows of `rows`, in their order, with their bodies read in one query for each 500
    /// of them when `bodies` (a query per flow cost more than reading the bodies).
    private func flows(from rows: some Collection<FlowRow>, bodies: Bool, _ db: Database) throws -> [Flow] {
        var bodyRows: [String: [BodyRow]] = [:]
        if bodies {
            let ids = rows.map(\.id)
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let places = repeatElement("?", count: chunk.count).joined(separator: ",")
                let statement = try db.cachedStatement(sql: "SELECT * FROM body WHERE flowId IN (\(places))")
                for body in try BodyRow.fetchAll(statement, arguments: StatementArguments(Array(chunk))) {
                    bodyRows[body.flowId, default: []].append(body)
                }
            }
        }
        return try rows.map { row in
            var flow: Flow
            do {
                flow = try Flow(stored: row.metadata)
            } catch {
                throw FlowStoreError("flow \(row.id) in \(path) has unreadable metadata: \(error)")
            }
            if bodies, let small = row.smallBodies {
                let inRow = SmallBodies(column: small)
                if let data = inRow.request { flow.request.body.keep(data) }
                if let data = inRow.response { flow.response?.body.keep(data) }
            }
            for body in bodyRows[row.id] ?? [] {
                var data: Data? = body.data
                if let offset = body.logOffset, let length = body.logLength {
                    let place = SessionBodyLog.Place(offset: offset, length: length, checksum: body.logChecksum.map { UInt64(bitPattern: $0) })
                    do throws(SessionBodyLog.Unavailable) {
                        guard let bodyLog else { throw SessionBodyLog.Unavailable(reason: "an in-memory session has no body log") }
                        data = try bodyLog.read(place)
                    } catch {
                        data = nil
                        bodyNotAvailable(body.part, of: row.id, because: error.reason)
                    }
                }
                switch body.part {
                case "request": flow.request.body.keep(data)
                case "response": flow.response?.body.keep(data)
                default: break
                }
            }
            return flow
        }
    }

    /// Says once per body that it is not available, and why.
    private func bodyNotAvailable(_ part: String, of id: String, because reason: String) {
        let first = unavailableBodiesSaid.withLock { $0.insert(part + " " + id).inserted }
        if first { warn("the \(part) body of exchange \(id) in \(path) is not available: \(reason)") }
    }
}

extension FlowBody {
    /// `data` as the bytes kept, or for nil bytes that are not available: none kept, the size
    /// staying, and the body saying it holds less than that, as one a store had to leave out.
    fileprivate mutating func keep(_ data: Data?) {
        if let data {
            self.data = data
        } else {
            self = FlowBody(size: size, isTruncated: true)
        }
    }
}

struct FlowRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "flow"
    var seq: Int64?
    var id: String
    var mode: String
    var startedAt: Double
    var method: String
    var url: String
    var host: String
    var status: Int?
    var requestSize: Int
    var responseSize: Int?
    var duration: Double?
    var error: String?
    var metadata: Data
    var repeatOf: String?
    var smallBodies: Data?

    init(id: String, mode: String, startedAt: Double, method: String, url: String, host: String, status: Int?,
         requestSize: Int, responseSize: Int?, duration: Double?, error: String?, metadata: Data, repeatOf: String? = nil) {
        self.id = id
        self.mode = mode
        self.startedAt = startedAt
        self.method = method
        self.url = url
        self.host = host
        self.status = status
        self.requestSize = requestSize
        self.responseSize = responseSize
        self.duration = duration
        self.error = error
        self.metadata = metadata
        self.repeatOf = repeatOf
    }

    enum Columns {
        static let seq = Column(CodingKeys.seq)
        static let id = Column(CodingKeys.id)
        static let repeatOf = Column(CodingKeys.repeatOf)
    }
}

// Rows read by column rather than through `Decodable`: reading a session's pages, GRDB's
// record decoder cost more than SQLite's reading of the rows.
extension FlowRow {
    init(row: Row) throws {
        seq = try row.decode(forColumn: "seq")
        id = try row.decode(forColumn: "id")
        mode = try row.decode(forColumn: "mode")
        startedAt = try row.decode(forColumn: "startedAt")
        method = try row.decode(forColumn: "method")
        url = try row.decode(forColumn: "url")
        host = try row.decode(forColumn: "host")
        status = try row.decode(forColumn: "status")
        requestSize = try row.decode(forColumn: "requestSize")
        responseSize = try row.decode(forColumn: "responseSize")
        duration = try row.decode(forColumn: "duration")
        error = try row.decode(forColumn: "error")
        metadata = try row.decode(forColumn: "metadata")
        repeatOf = try row.decode(forColumn: "repeatOf")
        smallBodies = try row.decode(forColumn: "smallBodies")
    }
}

/// The bodies of up to `limit` bytes kept in their flow's row (column `smallBodies`): for each
/// of request and response, a `Varint` of its length plus one (0: not in the row), then its
/// bytes. Null when neither is.
struct SmallBodies {
    static let limit = 512
    var request: Data?
    var response: Data?

    init(_ flow: Flow, logged: LoggedBodies) {
        func small(_ body: FlowBody) -> Data? {
            (1...Self.limit).contains(body.keptCount) ? body.data : nil
        }
        request = logged.request == nil ? small(flow.request.body) : nil
        response = logged.response == nil ? flow.response.flatMap { small($0.body) } : nil
    }

    /// Read back; what doesn't parse is left out (the flow's body then reads as not kept).
    init(column: Data) {
        let bytes = [UInt8](column)
        var index = 0
        func part() -> Data? {
            guard let length = try? Varint.read(bytes, at: &index, limit: bytes.count), length > 0,
                  length - 1 <= UInt64(bytes.count - index) else { return nil }
            defer { index += Int(length - 1) }
            return Data(bytes[index..<index + Int(length - 1)])
        }
        request = part()
        response = part()
    }

    var data: Data? {
        guard request != nil || response != nil else { return nil }
        var bytes: [UInt8] = []
        for part in [request, response] {
            Varint.append(part.map { UInt64($0.count) + 1 } ?? 0, to: &bytes)
            if let part { bytes.append(contentsOf: part) }
        }
        return Data(bytes)
    }

    var column: SQLiteValue { data.map(SQLiteValue.blob) ?? .null }
}

struct BodyRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "body"
    var flowId: String
    var part: String
    var data: Data
    /// Where the body log holds the bytes (`data` is then empty), and their checksum.
    var logOffset: Int64?
    var logLength: Int?
    var logChecksum: Int64?

    enum Columns {
        static let flowId = Column(CodingKeys.flowId)
    }
}

extension BodyRow {
    init(row: Row) throws {
        flowId = try row.decode(forColumn: "flowId")
        part = try row.decode(forColumn: "part")
        data = try row.decode(forColumn: "data")
        logOffset = try row.decode(forColumn: "logOffset")
        logLength = try row.decode(forColumn: "logLength")
        logChecksum = try row.decode(forColumn: "logChecksum")
    }
}

struct WebSocketMessageRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "websocketMessage"
    var seq: Int64?
    var flowId: String
    var direction: String
    var time: Double
    var opcode: Int
    var size: Int
    var truncated: Bool
    var compressed: Bool
    var data: Data
    var note: String?

    enum Columns {
        static let seq = Column(CodingKeys.seq)
        static let flowId = Column(CodingKeys.flowId)
    }
}
