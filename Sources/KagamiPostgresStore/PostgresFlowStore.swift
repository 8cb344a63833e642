import DequeModule
import Foundation
import KagamiFlow
import KagamiStore
import Logging
import PostgresNIO
import Synchronization

/// A named session in a PostgreSQL database that several proxies, on several machines, record
/// into at once. Like `SQLiteFlowStore`, `record` never blocks: flows queue in memory and a
/// writer commits whatever has arrived in one transaction (group commit), and a flow's `stored`
/// callback runs only after the transaction that holds it has committed on the server.
public final class PostgresFlowStore: FlowStore {
    /// A session as the `session` table holds it.
    public struct Session: Sendable, Hashable {
        public var name: String
        public var recordedBy: String
        public var createdAt: Date
    }

    public let location: PostgresLocation
    public let session: Session
    private let sessionID: Int64
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let pending = Mutex(PendingWrites())
    private var logger: Logger { Self.logger }
    /// PostgresNIO's own logging stays off; the store reports what matters itself.
    static let logger = Logger(label: "kagami.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    private let decoder: JSONDecoder

    /// Body bytes that may wait for the writer; past this, flows are kept without body bytes
    /// (sizes kept, marked truncated) until it catches up.
    public let maximumPendingBodyBytes: Int
    /// Flows that may wait for the writer before `isBehind` asks the proxy to slow down.
    public let maximumPendingFlows: Int
    /// WebSocket messages that may wait before `isBehind` asks relays to stop reading a moment.
    public let maximumPendingMessages: Int

    static let maximumBatch = 2_000

    struct PendingWrites {
        var entries = Deque<Entry>()
        var draining = false
        /// Entries queued since the store opened, and those whose transaction has ended.
        var queued = 0
        var finished = 0
        var flushes: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var lastError: String?
        var bodyBytes = 0
        var bodiesDropped = 0
        var messages = 0
    }

    struct Entry: Sendable {
        enum Item: Sendable {
            case flow(Flow)
            case messages([WebSocketMessage], flowID: UUID)
            case violations([ContractViolation], flowID: UUID)
        }
        var item: Item
        var stored: (@Sendable () -> Void)?

        var bodyBytes: Int {
            switch item {
            case .flow(let flow): flow.pendingBodyBytes
            case .messages(let messages, _): messages.pendingBodyBytes
            case .violations: 0
            }
        }

        var messageCount: Int {
            if case .messages(let messages, _) = item { return messages.count }
            return 0
        }
    }

    private init(location: PostgresLocation, session: Session, sessionID: Int64, client: PostgresClient, running: Task<Void, Never>,
                 maximumPendingBodyBytes: Int, maximumPendingFlows: Int, maximumPendingMessages: Int) {
        self.location = location
        self.session = session
        self.sessionID = sessionID
        self.client = client
        self.running = running
        self.maximumPendingBodyBytes = maximumPendingBodyBytes
        self.maximumPendingFlows = maximumPendingFlows
        self.maximumPendingMessages = maximumPendingMessages
        let decoder = JSONDecoder()
        // Dates as seconds since 2001, as `Flow.storedJSON()` writes them: exact round trips.
        decoder.dateDecodingStrategy = .deferredToDate
        self.decoder = decoder
    }

    deinit {
        running.cancel()
    }

    /// Connects, brings the tables up to date and opens the session `name`, creating it (as
    /// recorded by `recordedBy`) when it is new; an existing session is appended to.
    public static func open(
        _ location: PostgresLocation, session name: String, recordedBy: String,
        maximumConnections: Int = 4, maximumPendingBodyBytes: Int = 256 << 20,
        maximumPendingFlows: Int = 50_000, maximumPendingMessages: Int = 50_000
    ) async throws -> PostgresFlowStore {
        guard !name.isEmpty else { throw FlowStoreError("a session needs a name") }
        let opened: (id: Int64, session: Session)
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: logger)
            do {
                opened = try await openSession(name, recordedBy: recordedBy, on: connection, logger: logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw FlowStoreError("cannot open session \(name) at \(location): \(describe(error))")
        }
        let client = PostgresClient(configuration: location.clientConfiguration(maximumConnections: maximumConnections))
        return PostgresFlowStore(
            location: location, session: opened.session, sessionID: opened.id, client: client,
            running: Task { await client.run() }, maximumPendingBodyBytes: maximumPendingBodyBytes,
            maximumPendingFlows: maximumPendingFlows, maximumPendingMessages: maximumPendingMessages)
    }

    /// Brings the tables up to date and finds or creates the session.
    private static func openSession(
        _ name: String, recordedBy: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (id: Int64, session: Session) {
        try await PostgresSchema.migrate(connection, logger: logger)
        try await connection.query(
            "INSERT INTO session (name, recorded_by) VALUES (\(name), \(recordedBy)) ON CONFLICT (name) DO NOTHING", logger: logger)
        let rows = try await connection.query(
            "SELECT id, recorded_by, created_at FROM session WHERE name = \(name)", logger: logger)
        var found: (Int64, String, Date)?
        for try await row in rows.decode((Int64, String, Date).self) { found = row }
        guard let (id, recorder, created) = found else {
            throw FlowStoreError("session \(name) vanished while it was being opened")
        }
        return (id, Session(name: name, recordedBy: recorder, createdAt: created))
    }

    /// Writes what is queued, then closes the store's connections.
    public func close() async {
        try? await flush()
        running.cancel()
        await running.value
    }

    // MARK: Writing

    public func record(_ flow: Flow) {
        enqueue(.flow(flow), stored: nil)
    }

    public func record(_ flow: Flow, stored: @escaping @Sendable () -> Void) {
        enqueue(.flow(flow), stored: stored)
    }

    /// Messages queue behind the flow they belong to; when the writer is behind, their
    /// payloads are left out (sizes kept, marked truncated) as bodies are.
    public func record(messages: [WebSocketMessage], of flowID: UUID) {
        enqueue(.messages(messages, flowID: flowID), stored: nil)
    }

    /// Queued like a flow, so it lands after every `record(_:)` made before the call.
    public func updateViolations(_ violations: [ContractViolation], ofFlow id: UUID) {
        enqueue(.violations(violations, flowID: id), stored: nil)
    }

    public var isBehind: Bool {
        pending.withLock { $0.entries.count >= maximumPendingFlows || $0.messages >= maximumPendingMessages }
    }

    private func enqueue(_ item: Entry.Item, stored: (@Sendable () -> Void)?) {
        var entry = Entry(item: item, stored: stored)
        let bytes = entry.bodyBytes
        let limit = maximumPendingBodyBytes
        var warnDropping = false
        let startWriter = pending.withLock { state in
            if bytes > 0, state.bodyBytes + bytes > limit {
                switch entry.item {
                case .flow(let flow): entry.item = .flow(flow.withBodiesDropped)
                case .messages(let messages, let flowID): entry.item = .messages(messages.withPayloadsDropped, flowID: flowID)
                case .violations: break
                }
                state.bodiesDropped += 1
                warnDropping = state.bodiesDropped == 1
            } else {
                state.bodyBytes += bytes
            }
            state.messages += entry.messageCount
            state.entries.append(entry)
            state.queued += 1
            if state.draining { return false }
            state.draining = true
            return true
        }
        if warnDropping {
            FileHandle.standardError.write(Data("kagami: writing to session \(session.name) at \(location) is behind the traffic; storing exchanges without their bodies until it catches up\n".utf8))
        }
        if startWriter {
            Task { await self.drain() }
        }
    }

    /// One writer at a time: it takes what has queued, commits it, and goes on until the
    /// queue is empty.
    private func drain() async {
        while true {
            let batch = pending.withLock { state -> [Entry] in
                let count = min(state.entries.count, Self.maximumBatch)
                let batch = Array(state.entries.prefix(count))
                state.entries.removeFirst(count)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            let failure = await write(batch)
            if let failure {
                FileHandle.standardError.write(Data("kagami: \(failure)\n".utf8))
            }
            let written = batch.reduce(0) { $0 + $1.bodyBytes }
            let messages = batch.reduce(0) { $0 + $1.messageCount }
            let flushed = pending.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.bodyBytes -= written
                state.messages -= messages
                state.finished += batch.count
                if let failure { state.lastError = failure }
                let finished = state.finished
                let ready = state.flushes.filter { $0.after <= finished }.map(\.continuation)
                state.flushes.removeAll { $0.after <= finished }
                return ready
            }
            for entry in batch { entry.stored?() }
            for continuation in flushed { continuation.resume() }
        }
    }

    /// Commits `batch` in one transaction, trying again while the server is away for a moment;
    /// a batch the server keeps refusing is written entry by entry, so one bad entry doesn't
    /// cost the rest. Returns what could not be written.
    private func write(_ batch: [Entry]) async -> String? {
        var lastError: (any Error)?
        for delay in [0, 200, 1_000] {
            if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            do {
                try await commit(batch)
                return nil
            } catch {
                lastError = error
            }
        }
        guard batch.count > 1 else {
            return "could not write to session \(session.name) at \(location): \(lastError.map(Self.describe) ?? "unknown error")"
        }
        var failures = 0
        for entry in batch {
            do {
                try await commit([entry])
            } catch {
                failures += 1
                lastError = error
            }
        }
        if failures == 0 { return nil }
        return "could not write \(failures) of \(batch.count) entries to session \(session.name) at \(location): \(lastError.map(Self.describe) ?? "unknown error")"
    }

    private func commit(_ batch: [Entry]) async throws {
        try await client.withTransaction(logger: logger) { connection in
            for entry in batch {
                switch entry.item {
                case .flow(let flow): try await self.upsert(flow, connection)
                case .messages(let messages, let flowID): try await self.insert(messages, of: flowID, connection)
                case .violations(let violations, let flowID): try await self.update(violations, of: flowID, connection)
                }
            }
        }
    }

    /// A flow recorded again (an update, a WebSocket at its end) replaces the earlier row and
    /// its bodies, keeping its place in the session and its messages.
    private func upsert(_ flow: Flow, _ connection: PostgresConnection) async throws {
        let response = flow.response
        let rows = try await connection.query("""
            INSERT INTO flow (session_id, id, mode, started_at, method, url, host, status, request_size, response_size,
                              duration, error, metadata, repeat_of)
            VALUES (\(sessionID), \(flow.id), \(flow.mode.rawValue), \(flow.timings.start), \(flow.request.method),
                    \(flow.request.url), \(flow.request.host), \(response?.status), \(flow.request.body.size),
                    \(response?.body.size), \(flow.duration), \(flow.error?.message), \(flow.storedJSON()), \(flow.repeatOf))
            ON CONFLICT (session_id, id) DO UPDATE SET
                mode = EXCLUDED.mode, started_at = EXCLUDED.started_at, method = EXCLUDED.method, url = EXCLUDED.url,
                host = EXCLUDED.host, status = EXCLUDED.status, request_size = EXCLUDED.request_size,
                response_size = EXCLUDED.response_size, duration = EXCLUDED.duration, error = EXCLUDED.error,
                metadata = EXCLUDED.metadata, repeat_of = EXCLUDED.repeat_of
            RETURNING (xmax = 0)
            """, logger: logger)
        var inserted = true
        for try await isNew in rows.decode(Bool.self) { inserted = isNew }
        if !inserted {
            try await connection.query("DELETE FROM body WHERE session_id = \(sessionID) AND flow_id = \(flow.id)", logger: logger)
        }
        if !flow.request.body.data.isEmpty {
            try await insertBody(flow.request.body.data, part: "request", of: flow.id, connection)
        }
        if let response, !response.body.data.isEmpty {
            try await insertBody(response.body.data, part: "response", of: flow.id, connection)
        }
    }

    private func insertBody(_ data: Data, part: String, of flowID: UUID, _ connection: PostgresConnection) async throws {
        try await connection.query(
            "INSERT INTO body (session_id, flow_id, part, data) VALUES (\(sessionID), \(flowID), \(part), \(data))", logger: logger)
    }

    private func insert(_ messages: [WebSocketMessage], of flowID: UUID, _ connection: PostgresConnection) async throws {
        for message in messages {
            try await connection.query("""
                INSERT INTO websocket_message (session_id, flow_id, direction, time, opcode, size, truncated, compressed, data, note)
                VALUES (\(sessionID), \(flowID), \(message.direction.rawValue), \(message.time.timeIntervalSince1970),
                        \(Int(message.opcode.rawValue)), \(message.size), \(message.isTruncated), \(message.isCompressed),
                        \(message.data), \(message.note))
                """, logger: logger)
        }
    }

    /// A no-op when the session has no flow with that id.
    private func update(_ violations: [ContractViolation], of flowID: UUID, _ connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            "SELECT metadata FROM flow WHERE session_id = \(sessionID) AND id = \(flowID) FOR UPDATE", logger: logger)
        var metadata: Data?
        for try await stored in rows.decode(Data.self) { metadata = stored }
        guard let metadata else { return }
        var flow = try decodeFlow(metadata, id: flowID)
        flow.violations = violations
        try await connection.query(
            "UPDATE flow SET metadata = \(flow.storedJSON()) WHERE session_id = \(sessionID) AND id = \(flowID)", logger: logger)
    }

    /// Returns once every write queued before the call has ended; throws the last write that
    /// failed, if any did.
    public func flush() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = pending.withLock { state -> Bool in
                if state.finished >= state.queued { return true }
                state.flushes.append((after: state.queued, continuation: continuation))
                return false
            }
            if done { continuation.resume() }
        }
        if let error = pending.withLock({ $0.lastError }) {
            throw FlowStoreError(error)
        }
    }

    /// Deletes this session's flows, bodies and messages; other sessions keep theirs.
    public func removeAll() async throws {
        try await flush()
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("DELETE FROM websocket_message WHERE session_id = \(sessionID)", logger: logger)
                try await connection.query("DELETE FROM flow WHERE session_id = \(sessionID)", logger: logger)
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
        do {
            return try decoder.decode(Flow.self, from: metadata)
        } catch {
            throw FlowStoreError("flow \(id) in session \(session.name) has unreadable metadata: \(error)")
        }
    }

    private func reading<Result>(_ what: String, _ body: () async throws -> Result) async throws -> Result {
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
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + state
            }
            if let underlying = error.underlying {
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
}
