import DequeModule
import Foundation
import KagamiFlow
import KagamiOutput
import KagamiStore
import Logging
import PostgresNIO
import Synchronization

/// A named session in a PostgreSQL database that several proxies, on several machines, record
/// into at once. Like `SQLiteFlowStore`, `record` never blocks: flows queue in memory and a
/// writer commits whatever has arrived in one transaction (group commit), and a flow's `stored`
/// callback runs only after the transaction that holds it has committed on the server.
///
/// While the server is away (stopped, restarted, unreachable, or not answering within
/// `writeTimeout`), the writer appends what it cannot commit to a spool file on this machine
/// (`WriteSpool`, fsynced) and calls `stored` once it is there, so clients keep being served
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
    private let pending = Mutex(PendingWrites())
    private var logger: Logger { Self.logger }
    /// PostgresNIO's own logging stays off; the store reports what matters itself.
    static let logger = Logger(label: "kagami.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Body bytes that may wait for the writer; past this, flows are kept without body bytes
    /// (sizes kept, marked truncated) until it catches up.
    public let maximumPendingBodyBytes: Int
    /// Flows that may wait for the writer before `isBehind` asks the proxy to slow down.
    public let maximumPendingFlows: Int
    /// WebSocket messages that may wait before `isBehind` asks relays to stop reading a moment.
    public let maximumPendingMessages: Int
    /// Where entries go while the server is away.
    public let spoolDirectory: String
    /// Bytes a spool may grow to; past this, flows are spooled without their bodies.
    public let maximumSpoolBytes: Int
    /// How long a transaction may take before the server counts as away.
    public let writeTimeout: Duration
    /// What is replaced before a flow or a message is queued, so it never reaches the shared
    /// store (nor the spool); a session file applies it as this does (`FlowRedaction`).
    public let redaction: FlowRedaction
    private let spoolPrefix: String

    /// Entries one transaction writes at most, and body bytes it carries at most (past one entry).
    static let maximumBatch = 2_000
    static let maximumBatchBytes = 32 << 20

    struct PendingWrites {
        var entries = Deque<Entry>()
        var draining = false
        var writer: Task<Void, Never>?
        var closing = false
        /// Entries queued since the store opened, and those written, spooled or given up on.
        var queued = 0
        var finished = 0
        var flushes: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var lastError: String?
        var bodyBytes = 0
        var bodiesDropped = 0
        var messages = 0
        /// The writer's own connection (the pool would wait for the server; this one fails).
        var connection: PostgresConnection?
        var away: (since: Date, reason: String)?
        /// Spool files waiting to be written, oldest first; the last one takes new entries.
        var spools: [WriteSpool] = []
        var spooled = 0
        var spoolFailureReported = false
        var spoolFullReported = false
    }

    struct Entry: Sendable {
        enum Item: Sendable {
            case flow(Flow)
            case messages([WebSocketMessage], flowID: UUID)
            case violations([ContractViolation], flowID: UUID)
        }
        var item: Item
        var stored: (@Sendable () -> Void)?
        /// Identifies the entry's rows, so writing it twice (a spool replayed after a crash)
        /// changes nothing.
        var key = UUID()

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

        var spoolRecord: WriteSpool.Record {
            switch item {
            case .flow(let flow): WriteSpool.Record(key: key, flow: flow)
            case .messages(let messages, let flowID): WriteSpool.Record(key: key, messages: messages, flowID: flowID)
            case .violations(let violations, let flowID): WriteSpool.Record(key: key, violations: violations, flowID: flowID)
            }
        }

        init(item: Item, stored: (@Sendable () -> Void)?) {
            self.item = item
            self.stored = stored
        }

        init?(_ record: WriteSpool.Record) {
            if let flow = record.flow {
                item = .flow(flow)
            } else if let messages = record.messages, let flowID = record.flowID {
                item = .messages(messages, flowID: flowID)
            } else if let violations = record.violations, let flowID = record.flowID {
                item = .violations(violations, flowID: flowID)
            } else {
                return nil
            }
            key = record.key
        }
    }

    private init(location: PostgresLocation, session: Session, sessionID: Int64, client: PostgresClient, running: Task<Void, Never>,
                 maximumPendingBodyBytes: Int, maximumPendingFlows: Int, maximumPendingMessages: Int,
                 spoolDirectory: String, maximumSpoolBytes: Int, writeTimeout: Duration, redaction: FlowRedaction) {
        self.location = location
        self.session = session
        self.sessionID = sessionID
        self.client = client
        self.running = running
        self.maximumPendingBodyBytes = maximumPendingBodyBytes
        self.maximumPendingFlows = maximumPendingFlows
        self.maximumPendingMessages = maximumPendingMessages
        self.spoolDirectory = spoolDirectory
        self.maximumSpoolBytes = maximumSpoolBytes
        self.writeTimeout = writeTimeout
        self.redaction = redaction
        self.spoolPrefix = WriteSpool.prefix(session: session.name, location: location)
    }

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
        let store = PostgresFlowStore(
            location: location, session: opened.session, sessionID: opened.id, client: client,
            running: Task { await client.run() }, maximumPendingBodyBytes: maximumPendingBodyBytes,
            maximumPendingFlows: maximumPendingFlows, maximumPendingMessages: maximumPendingMessages,
            spoolDirectory: spoolDirectory, maximumSpoolBytes: maximumSpoolBytes, writeTimeout: writeTimeout, redaction: redaction)
        let leftovers = WriteSpool.leftovers(in: spoolDirectory, prefix: store.spoolPrefix)
        if !leftovers.isEmpty {
            Console.error("kagami: writing what session \(name) left in \(leftovers.map(\.path).joined(separator: ", ")) to \(location)\n")
            store.pending.withLock { state in
                state.spools = leftovers
                state.draining = true
            }
            store.startWriter()
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
        try? await flush()
        let (writer, connection) = pending.withLock { state in
            state.closing = true
            return (state.writer, state.connection)
        }
        writer?.cancel()
        await writer?.value
        try? await connection?.close()
        let spools = pending.withLock { state in
            defer { state.spools = [] }
            return state.spools
        }
        for spool in spools { spool.release() }
        if !spools.isEmpty {
            Console.error("kagami: session \(session.name) has exchanges waiting in \(spools.map(\.path).joined(separator: ", ")); they are written to \(location) when the session is next opened on this machine\n")
        }
        running.cancel()
        await running.value
    }

    public var status: WriteStatus {
        pending.withLock { state in
            WriteStatus(serverAway: state.away, queued: state.entries.count, spooled: state.spooled,
                        spoolFiles: state.spools.map(\.path), lastFailure: state.lastError)
        }
    }

    // MARK: Writing

    public func record(_ record: FlowRecord) {
        switch record {
        case .flow(let flow, let stored?): self.record(flow, stored: stored)
        case .flow(let flow, nil): self.record(flow)
        case .messages(let messages, let flowID): self.record(messages: messages, of: flowID)
        }
    }

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

    /// Also behind with half the pending body bytes waiting, as a session file is: clients (and
    /// `kagami import`) slow down before any body has to be dropped.
    public var isBehind: Bool {
        pending.withLock {
            $0.entries.count >= maximumPendingFlows || $0.messages >= maximumPendingMessages
                || $0.bodyBytes >= maximumPendingBodyBytes / 2
        }
    }

    private func enqueue(_ item: Entry.Item, stored: (@Sendable () -> Void)?) {
        var entry = Entry(item: item, stored: stored)
        if !redaction.isEmpty {
            switch item {
            case .flow(let flow): entry.item = .flow(redaction.apply(to: flow))
            case .messages(let messages, let flowID): entry.item = .messages(redaction.apply(to: messages), flowID: flowID)
            case .violations: break
            }
        }
        let bytes = entry.bodyBytes
        let limit = maximumPendingBodyBytes
        var warnDropping = false
        let startWriter = pending.withLock { state in
            if bytes > 0, state.bodyBytes + bytes > limit {
                entry.item = Self.withoutBodies(entry.item)
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
            report("writing to session \(session.name) at \(location) is behind the traffic; storing exchanges without their bodies until it catches up")
        }
        if startWriter { self.startWriter() }
    }

    private static func withoutBodies(_ item: Entry.Item) -> Entry.Item {
        switch item {
        case .flow(let flow): .flow(flow.withBodiesDropped)
        case .messages(let messages, let flowID): .messages(messages.withPayloadsDropped, flowID: flowID)
        case .violations: item
        }
    }

    private func startWriter() {
        let task = Task { await self.drain() }
        pending.withLock { $0.writer = task }
    }

    private func report(_ message: String) {
        Console.error("kagami: \(message)\n")
    }

    /// One writer at a time: it takes what has queued and commits it — or spools it while the
    /// server is away — and goes on until the queue and the spools are empty.
    private func drain() async {
        var attempts = 0
        var nextAttempt = ContinuousClock.now
        while !Task.isCancelled {
            let (away, spooling) = pending.withLock { ($0.away != nil, !$0.spools.isEmpty) }
            if away || spooling, ContinuousClock.now >= nextAttempt {
                if await replaySpools() {
                    attempts = 0
                } else {
                    attempts += 1
                    nextAttempt = ContinuousClock.now + Self.backoff(attempts)
                }
            }
            let (batch, done) = pending.withLock { state -> ([Entry], Bool) in
                let batch = Self.nextBatch(of: state.entries)
                if batch.isEmpty, state.away == nil && state.spools.isEmpty || state.closing {
                    state.draining = false
                    return (batch, true)
                }
                return (batch, false)
            }
            if done { return }
            if batch.isEmpty {
                // Waiting for the server: new entries are spooled as they come.
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            if pending.withLock({ $0.away != nil }) {
                if spool(batch) {
                    finish(batch, failure: nil)
                } else {
                    try? await Task.sleep(for: .milliseconds(200))
                }
                continue
            }
            switch await write(batch) {
            case .written(let failure):
                if let failure { report(failure) }
                finish(batch, failure: failure)
            case .serverAway(let reason):
                goAway(reason)
                attempts = 1
                nextAttempt = ContinuousClock.now + Self.backoff(attempts)
            }
        }
        pending.withLock { $0.draining = false }
    }

    /// The oldest entries, up to `maximumBatch` of them and `maximumBatchBytes` of bodies.
    static func nextBatch(of entries: some Collection<Entry>) -> [Entry] {
        var batch: [Entry] = []
        var bytes = 0
        for entry in entries.prefix(maximumBatch) {
            let entryBytes = entry.bodyBytes
            if !batch.isEmpty, bytes + entryBytes > maximumBatchBytes { break }
            batch.append(entry)
            bytes += entryBytes
        }
        return batch
    }

    /// 0.2 s, 0.4 s, … up to 5 s between attempts to reach the server.
    static func backoff(_ attempts: Int) -> Duration {
        .milliseconds(min(200 << min(attempts - 1, 5), 5_000))
    }

    /// Takes `batch` off the queue once it is written, spooled or given up on.
    private func finish(_ batch: [Entry], failure: String?) {
        let written = batch.reduce(0) { $0 + $1.bodyBytes }
        let messages = batch.reduce(0) { $0 + $1.messageCount }
        let flushed = pending.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.entries.removeFirst(batch.count)
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

    private func goAway(_ reason: String) {
        let (connection, first) = pending.withLock { state in
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
    }

    /// Appends `batch` to the newest spool (a new one when there is none); false when the
    /// disk refused it, and the entries wait in memory.
    private func spool(_ batch: [Entry]) -> Bool {
        let outcome = pending.withLock { state -> (ok: Bool, note: String?) in
            do {
                if state.spools.isEmpty {
                    state.spools.append(try WriteSpool.create(in: spoolDirectory, prefix: spoolPrefix))
                }
                let full = state.spools.reduce(0) { $0 + $1.bytes } >= maximumSpoolBytes
                let records = batch.map { entry in
                    var entry = entry
                    if full { entry.item = Self.withoutBodies(entry.item) }
                    return entry.spoolRecord
                }
                try state.spools[state.spools.count - 1].append(records)
                state.spooled += records.count
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
        while let spool = pending.withLock({ $0.spools.first }) {
            var failures: [String] = []
            let read: Int
            do {
                read = try await spool.read(chunk: Self.maximumBatch) { records in
                    var entries = records.compactMap(Entry.init)[...]
                    while !entries.isEmpty {
                        let batch = Self.nextBatch(of: entries)
                        entries = entries.dropFirst(batch.count)
                        switch await self.write(batch) {
                        case .written(let failure): if let failure { failures.append(failure) }
                        case .serverAway(let reason): throw ServerAway(reason: reason)
                        }
                    }
                }
            } catch {
                goAway((error as? ServerAway)?.reason ?? "\(error)")
                return false
            }
            for failure in failures { report(failure) }
            spool.remove()
            pending.withLock { state in
                state.spools.removeFirst()
                state.spooled = max(0, state.spooled - read)
                if let failure = failures.last { state.lastError = failure }
            }
        }
        let away = pending.withLock { state in
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
        if let connection = pending.withLock({ $0.connection }), !connection.isClosed {
            return connection
        }
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 1, logger: logger)
            pending.withLock { $0.connection = connection }
            return connection
        } catch {
            throw ServerAway(reason: Self.describe(error))
        }
    }

    enum WriteOutcome {
        /// Committed; with what the server refused, if it refused anything.
        case written(failure: String?)
        case serverAway(String)
    }

    /// Commits `batch` in one transaction, trying again when the server refuses it; a batch
    /// the server keeps refusing is written entry by entry, so one bad entry doesn't cost the
    /// rest. A server that can't be reached ends the attempt at once: the caller spools.
    private func write(_ batch: [Entry]) async -> WriteOutcome {
        var lastError: (any Error)?
        for delay in [0, 200, 1_000] {
            if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            do {
                try await commit(batch)
                return .written(failure: nil)
            } catch {
                if Self.isServerAway(error) { return .serverAway(Self.describe(error)) }
                lastError = error
            }
        }
        guard batch.count > 1 else {
            return .written(failure: "could not write to session \(session.name) at \(location): \(lastError.map(Self.describe) ?? "unknown error")")
        }
        var failures = 0
        for entry in batch {
            do {
                try await commit([entry])
            } catch {
                if Self.isServerAway(error) { return .serverAway(Self.describe(error)) }
                failures += 1
                lastError = error
            }
        }
        if failures == 0 { return .written(failure: nil) }
        return .written(failure: "could not write \(failures) of \(batch.count) entries to session \(session.name) at \(location): \(lastError.map(Self.describe) ?? "unknown error")")
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

    private func commit(_ batch: [Entry]) async throws {
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
    }

    /// Rows one statement writes at most, and body bytes it carries at most (past one row).
    static let maximumStatementRows = 1_000
    static let maximumStatementBytes = 8 << 20

    /// Cuts `batch` into statements that write what it holds in its order: consecutive flows
    /// and messages share one, up to `maximumStatementRows` rows and `maximumStatementBytes`;
    /// a flow recorded again starts a new one (one statement changes a row once), and a
    /// violation update, which reads the flow's row, stands alone.
    static func statements(for batch: [Entry]) -> [BatchStatement] {
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
            case .violations:
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
                            \(PostgresColumn(flows.map(\.error?.message)))::text[], \(PostgresColumn(flows.map { $0.storedJSON() }))::bytea[],
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

    /// Returns once every write queued before the call has ended — committed, or in the spool
    /// while the server is away; throws the last write the server refused, if any was.
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
            return try Flow(storedJSON: metadata)
        } catch {
            throw FlowStoreError("flow \(id) in session \(session.name) has unreadable metadata: \(error)")
        }
    }

    /// Reads fail at once while the writer knows the server is away, where the pool would wait.
    private func reading<Result>(_ what: String, _ body: () async throws -> Result) async throws -> Result {
        if let away = pending.withLock({ $0.away }) {
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
        if let error = error as? ServerAway { return error.reason }
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
