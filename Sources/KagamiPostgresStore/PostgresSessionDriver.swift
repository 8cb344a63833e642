import Foundation
import KagamiFlow
import KagamiOutput
import KagamiStore
import Logging
import PostgresNIO
import Synchronization

/// Commits a session writer's batches (`SessionWriter`) into a session in a PostgreSQL
/// database, one transaction each (one statement per table where it can), announcing the flows
/// to `kagami serve` as they commit. While the server is away (stopped, restarting,
/// unreachable, or not answering within `writeTimeout`) it keeps batches in a spool file on
/// this machine (`SessionSpool`, a session journal of entries, fsynced), reconnects when the writer asks it to catch up and
/// then writes the spools in order, before anything newer, and removes them. A spool left by a
/// store that is gone is written by the next one that opens the same session.
final class PostgresSessionDriver: SessionDriver {
    let location: PostgresLocation
    let session: PostgresFlowStore.Session
    let sessionID: Int64
    /// Where batches go while the server is away, and how large the spools may grow (past it,
    /// flows are spooled without their bodies).
    let spoolDirectory: String
    let maximumSpoolBytes: Int
    let spoolPrefix: String
    /// How long a transaction may take before the server counts as away.
    let writeTimeout: Duration
    let limits: SessionWriter.Limits
    private let state = Mutex(State())
    private var logger: Logger { PostgresFlowStore.logger }

    private struct State {
        /// The writer's own connection (the pool would wait for the server; this one fails).
        var connection: PostgresConnection?
        var away: (since: Date, reason: String)?
        /// Spool files waiting to be written, oldest first; the last one takes new entries.
        var spools: [SessionSpool] = []
        var spooled = 0
        var spoolFailureReported = false
        var spoolFullReported = false
        /// The last entries the server refused as a spool was written, if it refused any.
        var lastError: String?
    }

    init(
        location: PostgresLocation, session: PostgresFlowStore.Session, sessionID: Int64, spoolDirectory: String,
        maximumSpoolBytes: Int, writeTimeout: Duration, limits: SessionWriter.Limits, leftovers: [SessionSpool] = []
    ) {
        self.location = location
        self.session = session
        self.sessionID = sessionID
        self.spoolDirectory = spoolDirectory
        self.maximumSpoolBytes = maximumSpoolBytes
        self.spoolPrefix = SessionSpool.prefix(session: session.name, location: location)
        self.writeTimeout = writeTimeout
        self.limits = limits
        state.withLock { $0.spools = leftovers }
    }

    var isAway: Bool { state.withLock { $0.away != nil } }
    var hasEntriesWaiting: Bool { state.withLock { !$0.spools.isEmpty } }
    var away: (since: Date, reason: String)? { state.withLock { $0.away } }
    var lastFailure: String? { state.withLock { $0.lastError } }
    var spooled: (count: Int, files: [String]) { state.withLock { ($0.spooled, $0.spools.map(\.path)) } }

    func keepWhileAway(_ batch: [SessionEntry]) -> Bool {
        spool(batch)
    }

    func catchUp() async -> Bool {
        await replaySpools()
    }

    /// Closes the writer's connection and lets go of the spools still waiting, kept for the
    /// next store that opens this session.
    func close() async {
        let (connection, spools) = state.withLock { state in
            defer {
                state.connection = nil
                state.spools = []
            }
            return (state.connection, state.spools)
        }
        try? await connection?.close()
        // Each file is closed, and its lock let go, when `spools` goes at the end of this call.
        if !spools.isEmpty {
            report("session \(session.name) has exchanges waiting in \(spools.map(\.path).joined(separator: ", ")); they are written to \(location) when the session is next opened on this machine")
        }
    }

    private func report(_ message: String) {
        Console.error("kagami: \(message)\n")
    }

    @discardableResult
    private func goAway(_ reason: String) -> String {
        let (connection, first) = state.withLock { state in
            defer {
                state.connection = nil
                if state.away == nil { state.away = (Date(), reason) }
            }
            return (state.connection, state.away == nil)
        }
        if let connection { Task { try? await connection.close() } }
        if first {
            report("the server of session \(session.name) at \(location) is away (\(reason)); exchanges are kept in a spool file in \(spoolDirectory) and written when it is back")
        }
        return reason
    }

    /// Appends `batch` to the newest spool (a new one when that one takes no more entries: none,
    /// found, or past `SessionSpool.fileBytes`); false when the disk refused it, and the entries
    /// wait in memory.
    private func spool(_ batch: [SessionEntry]) -> Bool {
        let outcome = state.withLock { state -> (ok: Bool, note: String?) in
            do {
                if state.spools.last?.takesEntries != true {
                    state.spools.append(try SessionSpool.create(in: spoolDirectory, prefix: spoolPrefix))
                }
                let full = state.spools.reduce(0) { $0 + $1.bytes } >= maximumSpoolBytes
                try state.spools[state.spools.count - 1].append(full ? batch.map(\.withoutBodies) : batch)
                state.spooled += batch.count
                var note: String?
                if full, !state.spoolFullReported {
                    state.spoolFullReported = true
                    note = "the spool of session \(session.name) holds \(maximumSpoolBytes) bytes; exchanges are spooled without their bodies until the server is back"
                }
                return (true, note)
            } catch {
                guard !state.spoolFailureReported else { return (false, nil) }
                state.spoolFailureReported = true
                return (false, "\(error); exchanges wait in memory (their clients wait) until the server is back")
            }
        }
        if let note = outcome.note { report(note) }
        return outcome.ok
    }

    /// Writes every spool, oldest first, and removes it; true when the server took them all
    /// (and is no longer away).
    private func replaySpools() async -> Bool {
        do {
            _ = try await writerConnection()
        } catch {
            return false
        }
        while let spool = state.withLock({ $0.spools.first }) {
            var failures: [String] = []
            let (read, damage) = spool.entries()
            // Set aside already: said once, whether or not the server takes the rest now.
            if let damage { report(damage.description) }
            var entries = read[...]
            while !entries.isEmpty {
                let batch = SessionWriter.nextBatch(of: entries, limits: limits)
                entries = entries.dropFirst(batch.count)
                switch await write(batch) {
                case .written(let failure): if let failure { failures.append(failure) }
                case .away: return false
                }
            }
            for failure in failures { report(failure) }
            // Damaged bytes that could not be set aside stay in the file, left for the next
            // store that opens the session (writing its entries again changes nothing).
            if damage?.notSetAside == nil { spool.remove() }
            state.withLock { state in
                state.spools.removeFirst()
                state.spooled = max(0, state.spooled - read.count)
                if let failure = failures.last { state.lastError = failure }
            }
        }
        let away = state.withLock { state in
            defer {
                state.away = nil
                state.spooled = 0
                state.spoolFailureReported = false
                state.spoolFullReported = false
            }
            return state.away
        }
        if let away {
            let seconds = Int(Date().timeIntervalSince(away.since).rounded())
            report("the server of session \(session.name) at \(location) is back after \(seconds) s; what was spooled is written")
        }
        return true
    }

    struct ServerAway: Error {
        var reason: String
    }

    /// The writer's connection, opened when there is none: when the server is away this fails
    /// at once, where the pool would wait for it.
    private func writerConnection() async throws -> PostgresConnection {
        if let connection = state.withLock({ $0.connection }), !connection.isClosed {
            return connection
        }
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 1, logger: logger)
            state.withLock { $0.connection = connection }
            return connection
        } catch {
            throw ServerAway(reason: PostgresFlowStore.describe(error))
        }
    }

    /// Commits `batch` in one transaction, trying again when the server refuses it; a batch
    /// the server keeps refusing is written entry by entry, so one bad entry doesn't cost the
    /// rest. A server that can't be reached ends the attempt at once: the caller spools.
    func write(_ batch: [SessionEntry]) async -> SessionWriteOutcome {
        var lastError: (any Error)?
        for delay in [0, 200, 1_000] {
            if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            do {
                try await commit(batch)
                return .written(failure: nil)
            } catch {
                if Self.isServerAway(error) { return .away(goAway(PostgresFlowStore.describe(error))) }
                lastError = error
            }
        }
        guard batch.count > 1 else {
            return .written(failure: "could not write to session \(session.name) at \(location): \(lastError.map(PostgresFlowStore.describe) ?? "unknown error")")
        }
        var failures = 0
        for entry in batch {
            do {
                try await commit([entry])
            } catch {
                if Self.isServerAway(error) { return .away(goAway(PostgresFlowStore.describe(error))) }
                failures += 1
                lastError = error
            }
        }
        if failures == 0 { return .written(failure: nil) }
        return .written(failure: "could not write \(failures) of \(batch.count) entries to session \(session.name) at \(location): \(lastError.map(PostgresFlowStore.describe) ?? "unknown error")")
    }

    /// Whether `error` says the server can't be reached (down, restarting, the connection
    /// lost or silent), rather than that it refused what was sent.
    static func isServerAway(_ error: any Error) -> Bool {
        switch error {
        case is ServerAway:
            return true
        case is FlowStoreError:
            return false
        case let error as PostgresTransactionError:
            return (error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError).map(isServerAway) ?? false
        case let error as PSQLError:
            if error.code == .server {
                // Connection exceptions, operator intervention (shutdown, restart),
                // insufficient resources: the server is going or gone, not refusing.
                let state = error.serverInfo?[.sqlState] ?? ""
                return ["08", "57", "53"].contains(String(state.prefix(2)))
            }
            return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .queryCancelled].contains(error.code)
        default:
            return true
        }
    }

    private func commit(_ batch: [SessionEntry]) async throws {
        let connection = try await writerConnection()
        let transaction = Task {
            let statements = Self.statements(for: batch)
            // Flows alone, as a proxy records them: one statement, committed on its own.
            if statements.count == 1, case .rows(let flows, let messages) = statements[0], messages.isEmpty,
               let notification = self.notification(of: flows.map(\.id)) {
                try await self.upsert(flows, notification: notification, connection)
                return
            }
            try await connection.withTransaction(logger: self.logger) { connection in
                var flowIDs: [UUID] = []
                for statement in statements {
                    switch statement {
                    case .rows(let flows, let messages):
                        try await self.upsert(flows, notification: nil, connection)
                        try await self.insert(messages, connection)
                        flowIDs += flows.map(\.id)
                    case .violations(let violations, let flowID):
                        try await self.update(violations, of: flowID, connection)
                        flowIDs.append(flowID)
                    case .note(let note):
                        try await self.insert(note, connection)
                    }
                }
                try await self.announce(flowIDs, connection)
            }
        }
        // A silent server, or a transaction slower than the timeout: closing the connection
        // ends the transaction's wait on the server's side. The transaction's own task is not
        // waited for: a query on a closed connection doesn't always end.
        guard try await TimeLimit.outcome(of: transaction, within: writeTimeout) != nil else {
            try? await connection.close()
            throw ServerAway(reason: "no answer within \(writeTimeout)")
        }
    }

    /// Tells `kagami serve` (LISTEN) which flows this transaction holds; PostgreSQL delivers
    /// the notification when the transaction commits, and never when it doesn't. Payloads stay
    /// well under the server's 8,000-byte limit.
    private func announce(_ flowIDs: [UUID], _ connection: PostgresConnection) async throws {
        var start = 0
        while start < flowIDs.count {
            let chunk = flowIDs[start..<min(start + Self.flowsPerNotification, flowIDs.count)]
            start += chunk.count
            try await connection.query("SELECT pg_notify(\(PostgresSessionCatalog.channel), \(payload(of: chunk)))", logger: logger)
        }
    }

    static let flowsPerNotification = 150

    private func payload(of flowIDs: some Collection<UUID>) -> String {
        "\(sessionID) " + flowIDs.map(\.uuidString).joined(separator: ",")
    }

    /// The one notification announcing `flowIDs`, when one is enough.
    private func notification(of flowIDs: [UUID]) -> String? {
        guard !flowIDs.isEmpty, flowIDs.count <= Self.flowsPerNotification else { return nil }
        return payload(of: flowIDs)
    }

    /// Rows a batch's statements write, in the batch's order.
    enum BatchStatement {
        /// Flows (each once) and WebSocket messages, each written with one statement per table.
        case rows(flows: [Flow], messages: [(key: UUID, flowID: UUID, messages: [WebSocketMessage])])
        case violations([ContractViolation], flowID: UUID)
        case note(SessionNote)
    }

    /// Rows one statement writes at most, and body bytes it carries at most (past one row).
    static let maximumStatementRows = 1_000
    static let maximumStatementBytes = 8 << 20

    /// Cuts `batch` into statements that write what it holds in its order: consecutive flows
    /// and messages share one, up to `maximumStatementRows` rows and `maximumStatementBytes`;
    /// a flow recorded again starts a new one (one statement changes a row once), and a
    /// violation update, which reads the flow's row, stands alone.
    static func statements(for batch: [SessionEntry]) -> [BatchStatement] {
        var statements: [BatchStatement] = []
        var flows: [Flow] = []
        var messages: [(key: UUID, flowID: UUID, messages: [WebSocketMessage])] = []
        var flowIDs = Set<UUID>()
        var rows = 0
        var bytes = 0
        func close() {
            if !flows.isEmpty || !messages.isEmpty {
                statements.append(.rows(flows: flows, messages: messages))
            }
            flows = []
            messages = []
            flowIDs = []
            rows = 0
            bytes = 0
        }
        for entry in batch {
            let entryRows: Int
            switch entry.item {
            case .flow: entryRows = 1
            case .messages(let list, _): entryRows = list.count
            case .violations(let violations, let flowID):
                close()
                statements.append(.violations(violations, flowID: flowID))
                continue
            case .note(let note):
                close()
                statements.append(.note(note))
                continue
            }
            if rows > 0, rows + entryRows > maximumStatementRows || bytes + entry.bodyBytes > maximumStatementBytes {
                close()
            }
            switch entry.item {
            case .flow(let flow):
                if flowIDs.contains(flow.id) { close() }
                flowIDs.insert(flow.id)
                flows.append(flow)
            case .messages(let list, let flowID):
                messages.append((key: entry.key, flowID: flowID, messages: list))
            case .violations, .note:
                break
            }
            rows += entryRows
            bytes += entry.bodyBytes
        }
        close()
        return statements
    }

    /// Flows recorded again (an update, a WebSocket at its end) replace their earlier rows and
    /// bodies, keeping their place in the session and their messages. New flows take their
    /// place (`seq`) in the order given. One statement: the rows, the bodies (a part the flow
    /// no longer has is deleted) and, when `notification` is given, the notification for
    /// `kagami serve` (see `announce`).
    private func upsert(_ flows: [Flow], notification: String?, _ connection: PostgresConnection) async throws {
        guard !flows.isEmpty else { return }
        var bodyFlows: [UUID?] = []
        var parts: [String?] = []
        var data: [Data?] = []
        for flow in flows {
            if flow.request.body.keptCount > 0 {
                bodyFlows.append(flow.id)
                parts.append("request")
                data.append(flow.request.body.data)
            }
            if let response = flow.response, response.body.keptCount > 0 {
                bodyFlows.append(flow.id)
                parts.append("response")
                data.append(response.body.data)
            }
        }
        let ids = PostgresColumn(flows.map(\.id))
        // Data-modifying WITH queries all run, and see the tables as they were before the
        // statement: the flows inserted here are seen by the bodies' foreign key at its end.
        try await connection.query("""
            WITH written AS (
                INSERT INTO flow (session_id, id, mode, started_at, method, url, host, status, request_size, response_size,
                                  duration, error, metadata, repeat_of)
                SELECT \(sessionID), id, mode, started_at, method, url, host, status, request_size, response_size,
                       duration, error, metadata, repeat_of
                FROM unnest(\(ids)::uuid[], \(PostgresColumn(flows.map(\.mode.rawValue)))::text[],
                            \(PostgresColumn(flows.map(\.timings.start)))::timestamptz[],
                            \(PostgresColumn(flows.map(\.request.method)))::text[], \(PostgresColumn(flows.map(\.request.url)))::text[],
                            \(PostgresColumn(flows.map(\.request.host)))::text[], \(PostgresColumn(flows.map(\.response?.status)))::int8[],
                            \(PostgresColumn(flows.map(\.request.body.size)))::int8[],
                            \(PostgresColumn(flows.map(\.response?.body.size)))::int8[], \(PostgresColumn(flows.map(\.duration)))::float8[],
                            \(PostgresColumn(flows.map(\.error?.message)))::text[], \(PostgresColumn(flows.map { $0.storedRecord() }))::bytea[],
                            \(PostgresColumn(flows.map(\.repeatOf)))::uuid[])
                     WITH ORDINALITY AS given (id, mode, started_at, method, url, host, status, request_size, response_size,
                                               duration, error, metadata, repeat_of, ordinal)
                ORDER BY ordinal
                ON CONFLICT (session_id, id) DO UPDATE SET
                    mode = EXCLUDED.mode, started_at = EXCLUDED.started_at, method = EXCLUDED.method, url = EXCLUDED.url,
                    host = EXCLUDED.host, status = EXCLUDED.status, request_size = EXCLUDED.request_size,
                    response_size = EXCLUDED.response_size, duration = EXCLUDED.duration, error = EXCLUDED.error,
                    metadata = EXCLUDED.metadata, repeat_of = EXCLUDED.repeat_of
            ),
            part AS (
                SELECT * FROM unnest(\(PostgresColumn(bodyFlows))::uuid[], \(PostgresColumn(parts))::text[], \(PostgresColumn(data))::bytea[])
                    AS given (flow_id, part, data)
            ),
            stale AS (
                DELETE FROM body WHERE session_id = \(sessionID) AND flow_id = ANY(\(ids)::uuid[])
                    AND (flow_id, part) NOT IN (SELECT flow_id, part FROM part)
            ),
            kept AS (
                INSERT INTO body (session_id, flow_id, part, data) SELECT \(sessionID), flow_id, part, data FROM part
                ON CONFLICT (session_id, flow_id, part) DO UPDATE SET data = EXCLUDED.data
            )
            SELECT pg_notify(\(PostgresSessionCatalog.channel), \(notification)::text) WHERE \(notification)::text IS NOT NULL
            """, logger: logger)
    }

    /// Each message is keyed by its entry and position, so an entry written twice adds nothing.
    private func insert(_ entries: [(key: UUID, flowID: UUID, messages: [WebSocketMessage])], _ connection: PostgresConnection) async throws {
        var flowIDs: [UUID?] = [], directions: [String?] = [], times: [Double?] = [], opcodes: [Int?] = []
        var sizes: [Int?] = [], truncated: [Bool?] = [], compressed: [Bool?] = [], data: [Data?] = []
        var notes: [String?] = [], keys: [UUID?] = [], indexes: [Int?] = []
        for entry in entries {
            for (index, message) in entry.messages.enumerated() {
                flowIDs.append(entry.flowID)
                directions.append(message.direction.rawValue)
                times.append(message.time.timeIntervalSince1970)
                opcodes.append(Int(message.opcode.rawValue))
                sizes.append(message.size)
                truncated.append(message.isTruncated)
                compressed.append(message.isCompressed)
                data.append(message.data)
                notes.append(message.note)
                keys.append(entry.key)
                indexes.append(index)
            }
        }
        guard !flowIDs.isEmpty else { return }
        try await connection.query("""
            INSERT INTO websocket_message (session_id, flow_id, direction, time, opcode, size, truncated, compressed, data, note,
                                           record_key, record_index)
            SELECT \(sessionID), flow_id, direction, time, opcode, size, truncated, compressed, data, note, record_key, record_index
            FROM unnest(\(PostgresColumn(flowIDs))::uuid[], \(PostgresColumn(directions))::text[], \(PostgresColumn(times))::float8[],
                        \(PostgresColumn(opcodes))::int8[], \(PostgresColumn(sizes))::int8[], \(PostgresColumn(truncated))::bool[],
                        \(PostgresColumn(compressed))::bool[], \(PostgresColumn(data))::bytea[], \(PostgresColumn(notes))::text[],
                        \(PostgresColumn(keys))::uuid[], \(PostgresColumn(indexes))::int8[])
                 WITH ORDINALITY AS given (flow_id, direction, time, opcode, size, truncated, compressed, data, note,
                                         record_key, record_index, ordinal)
            ORDER BY ordinal
            ON CONFLICT (record_key, record_index) DO NOTHING
            """, logger: logger)
    }

    /// A note written again (a replay of the spool) is kept once.
    private func insert(_ note: SessionNote, _ connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO note (session_id, id, time, author, text, flow_id)
            VALUES (\(sessionID), \(note.id), \(note.time), \(note.author), \(note.text), \(note.flowID))
            ON CONFLICT (session_id, id) DO NOTHING
            """, logger: logger)
    }

    /// A no-op when the session has no flow with that id.
    private func update(_ violations: [ContractViolation], of flowID: UUID, _ connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            "SELECT metadata FROM flow WHERE session_id = \(sessionID) AND id = \(flowID) FOR UPDATE", logger: logger)
        var metadata: Data?
        for try await stored in rows.decode(Data.self) { metadata = stored }
        guard let metadata else { return }
        var flow = try PostgresFlowStore.decodeFlow(metadata, id: flowID, session: session.name)
        flow.violations = violations
        try await connection.query(
            "UPDATE flow SET metadata = \(flow.storedRecord()) WHERE session_id = \(sessionID) AND id = \(flowID)", logger: logger)
    }

}
