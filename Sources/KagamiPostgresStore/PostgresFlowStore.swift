import DequeModule
import Foundation
import KagamiFlow
import KagamiOutput
import KagamiStore
import Logging
import PostgresNIO
import Synchronization

/// A named session in a PostgreSQL database that several proxies, on several machines, record
/// into at once. Flows go through the session's writer as a session file's do (`SessionWriter`:
/// `record` never blocks, group commit, backpressure, redaction), here over a driver that
/// commits to the server (`PostgresSessionDriver`), and a flow's `stored` callback runs only
/// after the transaction that holds it has committed on the server.
///
/// While the server is away (stopped, restarted, unreachable, or not answering within
/// `writeTimeout`), the writer appends what it cannot commit to a spool file on this machine
/// (`SessionSpool`, a session journal of entries, fsynced) and calls `stored` once it is there, so clients keep being served
/// and every exchange a client saw complete is still kept. It reconnects with backoff; when
/// the server is back it writes the spool, in order, before anything newer, and removes it.
/// A spool left by a store that is gone (killed, or stopped while the server was away) is
/// written by the next store that opens the same session with the same spool directory.
public final class PostgresFlowStore: FlowStore {
    /// A session as the `session` table holds it.
    public struct Session: Sendable, Hashable {
        public var name: String
        public var recordedBy: String
        public var createdAt: Date
    }

    /// What the writer is doing: for the banner, the UI and tests.
    public struct WriteStatus: Sendable, CustomStringConvertible {
        /// When the server went away and why, while it is away.
        public var serverAway: (since: Date, reason: String)?
        /// Entries (flows, message batches, violation updates) queued in memory.
        public var queued: Int
        /// Entries in spool files, waiting for the server.
        public var spooled: Int
        public var spoolFiles: [String]
        /// The last entries the server refused, if any were.
        public var lastFailure: String?

        public var description: String {
            var text: String
            if let away = serverAway {
                text = "the server is away since \(away.since) (\(away.reason))"
            } else {
                text = "writing to the server"
            }
            text += "; \(queued) entr\(queued == 1 ? "y" : "ies") queued"
            if spooled > 0 || !spoolFiles.isEmpty {
                text += ", \(spooled) in \(spoolFiles.joined(separator: ", "))"
            }
            if let lastFailure { text += "; last failure: \(lastFailure)" }
            return text
        }
    }

    public let location: PostgresLocation
    public let session: Session
    private let sessionID: Int64
    private let client: PostgresClient
    private let running: Task<Void, Never>
    /// The session's one write path, committing through `PostgresSessionDriver`.
    private let writer: SessionWriter
    private let driver: PostgresSessionDriver
    private var logger: Logger { Self.logger }
    /// PostgresNIO's own logging stays off; the store reports what matters itself.
    static let logger = Logger(label: "kagami.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    private init(location: PostgresLocation, session: Session, sessionID: Int64, client: PostgresClient, running: Task<Void, Never>,
                 maximumPendingBodyBytes: Int, maximumPendingFlows: Int, maximumPendingMessages: Int,
                 spoolDirectory: String, maximumSpoolBytes: Int, writeTimeout: Duration, redaction: FlowRedaction,
                 leftovers: [SessionSpool] = []) {
        self.location = location
        self.session = session
        self.sessionID = sessionID
        self.client = client
        self.running = running
        let limits = SessionWriter.Limits(
            pendingBodyBytes: maximumPendingBodyBytes, pendingEntries: maximumPendingFlows, pendingMessages: maximumPendingMessages,
            batch: Self.maximumBatch, batchBytes: Self.maximumBatchBytes)
        driver = PostgresSessionDriver(
            location: location, session: session, sessionID: sessionID, spoolDirectory: spoolDirectory,
            maximumSpoolBytes: maximumSpoolBytes, writeTimeout: writeTimeout, limits: limits, leftovers: leftovers)
        writer = SessionWriter(name: "session \(session.name) at \(location)", driver: driver, limits: limits, redaction: redaction)
    }

    /// Entries one transaction writes at most, and body bytes it carries at most (past one entry).
    static let maximumBatch = 2_000
    static let maximumBatchBytes = 32 << 20

    deinit {
        running.cancel()
    }

    /// The spool directory when none is given: a folder in the system's temporary directory.
    public static var defaultSpoolDirectory: String {
        (NSTemporaryDirectory() as NSString).appendingPathComponent("kagami-spool-\(getuid())")
    }

    /// Connects, brings the tables up to date and opens the session `name`, creating it (as
    /// recorded by `recordedBy`) when it is new; an existing session is appended to. Spool
    /// files this session left in `spoolDirectory` are written first.
    public static func open(
        _ location: PostgresLocation, session name: String, recordedBy: String,
        maximumConnections: Int = 4, maximumPendingBodyBytes: Int = 256 << 20,
        maximumPendingFlows: Int = 50_000, maximumPendingMessages: Int = 50_000,
        spoolDirectory: String = defaultSpoolDirectory, maximumSpoolBytes: Int = 4 << 30,
        writeTimeout: Duration = .seconds(15), redaction: FlowRedaction = FlowRedaction()
    ) async throws -> PostgresFlowStore {
        guard !name.isEmpty else { throw FlowStoreError("a session needs a name") }
        let opened = try await onSetupConnection(location, session: name) { connection in
            try await openSession(name, recordedBy: recordedBy, on: connection, logger: logger)
        }
        let client = PostgresClient(configuration: location.clientConfiguration(maximumConnections: maximumConnections))
        let leftovers = SessionSpool.leftovers(in: spoolDirectory, prefix: SessionSpool.prefix(session: opened.session.name, location: location))
        let store = PostgresFlowStore(
            location: location, session: opened.session, sessionID: opened.id, client: client,
            running: Task { await client.run() }, maximumPendingBodyBytes: maximumPendingBodyBytes,
            maximumPendingFlows: maximumPendingFlows, maximumPendingMessages: maximumPendingMessages,
            spoolDirectory: spoolDirectory, maximumSpoolBytes: maximumSpoolBytes, writeTimeout: writeTimeout, redaction: redaction,
            leftovers: leftovers)
        if !leftovers.isEmpty {
            Console.error("kagami: writing what session \(name) left in \(leftovers.map(\.path).joined(separator: ", ")) to \(location)\n")
            store.writer.catchUp()
        }
        return store
    }

    /// Runs `body` on a connection of its own, opened for it and closed after, as a session is
    /// found or made; a failure names the session and the server.
    private static func onSetupConnection<T>(
        _ location: PostgresLocation, session name: String, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: logger)
            do {
                let result = try await body(connection)
                try await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw FlowStoreError("cannot open session \(name) at \(location): \(describe(error))")
        }
    }

    /// The session `name` for reading (`kagami serve`, `flows`, `export`), or nil when the
    /// database has none by that name. It writes only what is recorded into it (HAR imports).
    public static func openExisting(
        _ location: PostgresLocation, session name: String, redaction: FlowRedaction = FlowRedaction(),
        spoolDirectory: String = defaultSpoolDirectory
    ) async throws -> PostgresFlowStore? {
        let opened = try await onSetupConnection(location, session: name) { connection in
            try await PostgresSchema.migrate(connection, logger: logger)
            return try await findSession(name, on: connection, logger: logger)
        }
        guard let opened else { return nil }
        let client = PostgresClient(configuration: location.clientConfiguration(maximumConnections: 2))
        return PostgresFlowStore(
            location: location, session: opened.session, sessionID: opened.id, client: client,
            running: Task { await client.run() }, maximumPendingBodyBytes: 256 << 20,
            maximumPendingFlows: 50_000, maximumPendingMessages: 50_000,
            spoolDirectory: spoolDirectory, maximumSpoolBytes: 4 << 30, writeTimeout: .seconds(15), redaction: redaction)
    }

    /// Brings the tables up to date and finds or creates the session.
    private static func openSession(
        _ name: String, recordedBy: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (id: Int64, session: Session) {
        try await PostgresSchema.migrate(connection, logger: logger)
        try await connection.query(
            "INSERT INTO session (name, recorded_by) VALUES (\(name), \(recordedBy)) ON CONFLICT (name) DO NOTHING", logger: logger)
        guard let found = try await findSession(name, on: connection, logger: logger) else {
            throw FlowStoreError("session \(name) vanished while it was being opened")
        }
        return found
    }

    private static func findSession(
        _ name: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (id: Int64, session: Session)? {
        let rows = try await connection.query(
            "SELECT id, recorded_by, created_at FROM session WHERE name = \(name)", logger: logger)
        var found: (Int64, String, Date)?
        for try await row in rows.decode((Int64, String, Date).self) { found = row }
        guard let (id, recorder, created) = found else { return nil }
        return (id, Session(name: name, recordedBy: recorder, createdAt: created))
    }

    /// Writes what is queued (to the server, or to the spool while the server is away), then
    /// closes the store's connections. A spool that is still waiting is kept for the next
    /// store that opens this session.
    public func close() async {
        await writer.close()
        await driver.close()
        running.cancel()
        await running.value
    }

    public var status: WriteStatus {
        let spooled = driver.spooled
        return WriteStatus(serverAway: driver.away, queued: writer.queuedCount, spooled: spooled.count,
                           spoolFiles: spooled.files, lastFailure: writer.lastError ?? driver.lastFailure)
    }

    // MARK: Writing

    public func record(_ record: FlowRecord) {
        writer.record(record)
    }

    /// Queued like a flow, so it lands after every `record(_:)` made before the call.
    public func updateViolations(_ violations: [ContractViolation], ofFlow id: UUID) {
        writer.updateViolations(violations, ofFlow: id)
    }

    /// Also behind with half the pending body bytes waiting, as a session file is: clients (and
    /// `kagami import`) slow down before any body has to be dropped.
    public var isBehind: Bool { writer.isBehind }

    /// Returns once every write queued before the call has ended — committed, or in the spool
    /// while the server is away; throws the last write the server refused, if any was.
    public func flush() async throws {
        try await writer.flush()
        if let failure = driver.lastFailure { throw FlowStoreError(failure) }
    }

    /// Deletes this session's flows, bodies and messages; other sessions keep theirs.
    public func removeAll() async throws {
        try await flush()
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("DELETE FROM websocket_message WHERE session_id = \(sessionID)", logger: logger)
                try await connection.query("DELETE FROM flow WHERE session_id = \(sessionID)", logger: logger)
                try await connection.query("DELETE FROM note WHERE session_id = \(sessionID)", logger: logger)
            }
        } catch {
            throw FlowStoreError("could not clear session \(session.name) at \(location): \(Self.describe(error))")
        }
    }

    // MARK: Reading

    public func flow(id: UUID) async throws -> Flow? {
        try await reading("flow \(id)") {
            let rows = try await client.query("SELECT metadata FROM flow WHERE session_id = \(sessionID) AND id = \(id)", logger: logger)
            var metadata: Data?
            for try await stored in rows.decode(Data.self) { metadata = stored }
            guard let metadata else { return nil }
            var flow = try decodeFlow(metadata, id: id)
            try await addBodies(to: &flow)
            return flow
        }
    }

    public func flows(offset: Int = 0, limit: Int? = nil, includeBodies: Bool = false) async throws -> [Flow] {
        try await reading("flows") {
            // LIMIT NULL is no limit.
            let rows = try await client.query("""
                SELECT id, metadata FROM flow WHERE session_id = \(sessionID) ORDER BY seq LIMIT \(limit) OFFSET \(offset)
                """, logger: logger)
            var flows: [Flow] = []
            for try await (id, metadata) in rows.decode((UUID, Data).self) {
                flows.append(try decodeFlow(metadata, id: id))
            }
            if includeBodies, !flows.isEmpty {
                try await addBodies(to: &flows)
            }
            return flows
        }
    }

    public func flows(_ query: FlowQuery) async throws -> FlowPage {
        try await reading("flows") {
            var binds = PostgresBindings()
            binds.append(sessionID)
            let (condition, arguments) = query.filter.sql(.postgres, placeholder: { "$\($0 + 1)" })
            for argument in arguments {
                switch argument {
                case .text(let text): binds.append(text)
                case .integer(let integer): binds.append(integer)
                }
            }
            var sql = "SELECT seq, id, metadata FROM flow WHERE session_id = $1 AND \(condition)"
            if let text = query.filter.indexedText {
                // What the text index can answer (a superset: `%` and `_` of the text match more),
                // for the planner to read the index when the words are rare.
                binds.append("%\(text)%")
                sql += " AND \(SQLDialect.textIndexWords()) ILIKE $\(binds.count)"
            }
            if let after = query.after {
                binds.append(after)
                sql += " AND seq \(query.order == .oldestFirst ? ">" : "<") $\(binds.count)"
            }
            // One row past the page says whether there is a next one.
            let limit = max(1, query.limit)
            binds.append(limit + 1)
            sql += " ORDER BY seq \(query.order == .oldestFirst ? "ASC" : "DESC") LIMIT $\(binds.count)"
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            var flows: [Flow] = []
            var last: Int64?
            var more = false
            for try await (seq, id, metadata) in rows.decode((Int64, UUID, Data).self) {
                guard flows.count < limit else {
                    more = true
                    continue
                }
                flows.append(try decodeFlow(metadata, id: id))
                last = seq
            }
            if query.includeBodies, !flows.isEmpty {
                try await addBodies(to: &flows)
            }
            return FlowPage(flows: flows, next: more ? last : nil)
        }
    }

    /// The exchanges recorded as repeats of `id`, in the order they were stored, without bodies.
    public func repeats(of id: UUID) async throws -> [Flow] {
        try await reading("repeats of \(id)") {
            let rows = try await client.query("""
                SELECT id, metadata FROM flow WHERE session_id = \(sessionID) AND repeat_of = \(id) ORDER BY seq
                """, logger: logger)
            var flows: [Flow] = []
            for try await (flowID, metadata) in rows.decode((UUID, Data).self) {
                flows.append(try decodeFlow(metadata, id: flowID))
            }
            return flows
        }
    }

    public func count() async throws -> Int {
        try await reading("the count") {
            let rows = try await client.query("SELECT count(*) FROM flow WHERE session_id = \(sessionID)", logger: logger)
            var count = 0
            for try await value in rows.decode(Int.self) { count = value }
            return count
        }
    }

    public func messages(of flowID: UUID, offset: Int = 0, limit: Int? = nil) async throws -> [WebSocketMessage] {
        try await reading("the messages of flow \(flowID)") {
            let rows = try await client.query("""
                SELECT seq, direction, time, opcode, size, truncated, compressed, data, note FROM websocket_message
                WHERE session_id = \(sessionID) AND flow_id = \(flowID) ORDER BY seq LIMIT \(limit) OFFSET \(offset)
                """, logger: logger)
            var messages: [WebSocketMessage] = []
            for try await (seq, direction, time, opcode, size, truncated, compressed, data, note)
                in rows.decode((Int64, String, Double, Int, Int, Bool, Bool, Data, String?).self) {
                guard let direction = WebSocketMessage.Direction(rawValue: direction),
                      let opcode = WebSocketMessage.Opcode(rawValue: UInt8(clamping: opcode)) else {
                    throw FlowStoreError("message \(seq) of flow \(flowID) is unreadable")
                }
                messages.append(WebSocketMessage(
                    direction: direction, time: Date(timeIntervalSince1970: time), opcode: opcode, data: data,
                    size: size, isTruncated: truncated, isCompressed: compressed, note: note))
            }
            return messages
        }
    }

    public func notes() async throws -> [SessionNote] {
        try await reading("the notes") {
            let rows = try await client.query(
                "SELECT id, time, author, text, flow_id FROM note WHERE session_id = \(sessionID) ORDER BY seq", logger: logger)
            var notes: [SessionNote] = []
            for try await (id, time, author, text, flowID) in rows.decode((UUID, Date, String, String, UUID?).self) {
                notes.append(SessionNote(id: id, time: time, author: author, text: text, flowID: flowID))
            }
            return notes
        }
    }

    private func addBodies(to flow: inout Flow) async throws {
        var flows = [flow]
        try await addBodies(to: &flows)
        flow = flows[0]
    }

    private func addBodies(to flows: inout [Flow]) async throws {
        var index: [UUID: Int] = [:]
        for (position, flow) in flows.enumerated() { index[flow.id] = position }
        let rows = try await client.query("""
            SELECT flow_id, part, data FROM body WHERE session_id = \(sessionID) AND flow_id = ANY(\(Array(index.keys)))
            """, logger: logger)
        for try await (flowID, part, data) in rows.decode((UUID, String, Data).self) {
            guard let position = index[flowID] else { continue }
            switch part {
            case "request": flows[position].request.body.data = data
            case "response": flows[position].response?.body.data = data
            default: break
            }
        }
    }

    private func decodeFlow(_ metadata: Data, id: UUID) throws -> Flow {
        try Self.decodeFlow(metadata, id: id, session: session.name)
    }

    static func decodeFlow(_ metadata: Data, id: UUID, session: String) throws -> Flow {
        do {
            return try Flow(stored: metadata)
        } catch {
            throw FlowStoreError("flow \(id) in session \(session) has unreadable metadata: \(error)")
        }
    }

    /// Reads fail at once while the writer knows the server is away, where the pool would wait.
    private func reading<Result>(_ what: String, _ body: () async throws -> Result) async throws -> Result {
        if let away = driver.away {
            throw FlowStoreError("could not read \(what) of session \(session.name): the server at \(location) is away since \(away.since) (\(away.reason))")
        }
        do {
            return try await body()
        } catch let error as FlowStoreError {
            throw error
        } catch {
            throw FlowStoreError("could not read \(what) of session \(session.name) at \(location): \(Self.describe(error))")
        }
    }

    /// PostgresNIO keeps the server's words out of an error's description (they may hold data);
    /// they are what a user needs here, so they are taken from the error itself.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresSessionDriver.ServerAway { return error.reason }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + state
            }
            if let underlying = error.underlying {
                if let tls = describeTLS(underlying) { return tls }
                return "\(error.code): \(underlying)"
            }
            return "\(error.code)"
        }
        if let error = error as? PostgresTransactionError {
            let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError
            return cause.map(describe) ?? "the transaction failed"
        }
        return "\(error)"
    }

    /// A certificate the URL's sslmode refused, in words (BoringSSL's own are in parentheses).
    static func describeTLS(_ error: any Error) -> String? {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's TLS certificate could not be verified: it is not signed by a CA of sslrootcert (or of the system's trust store without it), or it has expired (\(text))"
        }
        if text.contains("failedToValidateHostname") {
            return "the server's TLS certificate does not name the host of the URL, as sslmode=verify-full requires (\(text))"
        }
        return nil
    }
}
