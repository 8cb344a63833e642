import DequeModule
import Foundation
import KagamiFlow
import KagamiOutput
import Synchronization

/// A flow, messages of a flow, contract violations found for a flow, or a note, on their way
/// into a session, and who waits for them to be kept. A class: the queue, the batch and the driver
/// pass one reference along instead of copying every field of a flow at each step.
package final class SessionEntry: Sendable {
    package enum Item: Sendable {
        case flow(Flow)
        case messages([WebSocketMessage], flowID: UUID)
        case violations([ContractViolation], flowID: UUID)
        case note(SessionNote)
    }

    package let item: Item
    /// Identifies the entry's rows, so writing it twice (a replay after a crash or an outage)
    /// changes nothing.
    package let key: UUID
    let stored: (@Sendable () -> Void)?
    /// The flow's stored record, when it was made already (for the journal).
    package let metadata: Data?
    /// In the session's journal: kept already, and counted there as committed once its
    /// transaction is.
    let journaled: Bool
    /// Bodies already in the session's body log, whose bytes the flow no longer holds.
    package let logged: LoggedBodies
    /// Body bytes it holds, counted against `SessionWriter.Limits.pendingBodyBytes` until it is written.
    package let bodyBytes: Int

    /// `key` defaults to the flow's id for a flow (writing it again replaces it), and to a new
    /// one otherwise.
    package init(
        _ item: Item, key: UUID? = nil, stored: (@Sendable () -> Void)? = nil, metadata: Data? = nil,
        journaled: Bool = false, logged: LoggedBodies = LoggedBodies()
    ) {
        self.item = item
        switch item {
        case .flow(let flow): self.key = key ?? flow.id
        case .messages, .violations: self.key = key ?? UUID()
        case .note(let note): self.key = key ?? note.id
        }
        self.stored = stored
        self.metadata = metadata
        self.journaled = journaled
        self.logged = logged
        switch item {
        case .flow(let flow): bodyBytes = flow.pendingBodyBytes
        case .messages(let messages, _): bodyBytes = messages.pendingBodyBytes
        case .violations, .note: bodyBytes = 0
        }
    }

    package var messageCount: Int {
        if case .messages(let messages, _) = item { return messages.count }
        return 0
    }

    /// The entry with its body bytes left out (sizes kept, marked truncated); bodies already in
    /// the body log are kept whole.
    package var withoutBodies: SessionEntry {
        let item: Item
        switch self.item {
        case .flow(let flow):
            var kept = flow.withBodiesDropped
            if logged.request != nil { kept.request.body.isTruncated = flow.request.body.isTruncated }
            if logged.response != nil { kept.response?.body.isTruncated = flow.response?.body.isTruncated ?? false }
            item = .flow(kept)
        case .messages(let messages, let flowID):
            item = .messages(messages.withPayloadsDropped, flowID: flowID)
        case .violations, .note:
            item = self.item
        }
        return SessionEntry(item, key: key, stored: stored, metadata: metadata, journaled: journaled, logged: logged)
    }
}

/// What a session writer commits into, one batch per transaction: the session's SQLite file
/// (`SQLiteFlowStore`), or a session in a PostgreSQL database that several proxies share.
package protocol SessionDriver: Sendable {
    /// Writes `batch` in one transaction, in its order: `.written` with what the store refused
    /// if it refused anything, or `.away` when it can't be reached (nothing was written).
    func write(_ batch: [SessionEntry]) async -> SessionWriteOutcome
    /// Whether the store is known to be away (`.away`): batches are kept on this machine
    /// (`keepWhileAway`) until it is back.
    var isAway: Bool { get }
    /// Whether entries kept on this machine wait to be written (`catchUp`).
    var hasEntriesWaiting: Bool { get }
    /// Keeps `batch` on this machine, durably, while the store is away; false when that failed
    /// too, and the batch waits in memory.
    func keepWhileAway(_ batch: [SessionEntry]) -> Bool
    /// Writes what waits on this machine, oldest first; true once the store took it all and is
    /// no longer away.
    func catchUp() async -> Bool
}

extension SessionDriver {
    package var isAway: Bool { false }
    package var hasEntriesWaiting: Bool { false }
    package func keepWhileAway(_ batch: [SessionEntry]) -> Bool { false }
    package func catchUp() async -> Bool { true }
}

/// A driver whose store is on this machine (a session file): it commits a batch on the calling
/// thread, so the writer runs on a queue of its own and hops no thread per batch.
package protocol InPlaceSessionDriver: SessionDriver {
    func writeInPlace(_ batch: [SessionEntry]) -> SessionWriteOutcome
}

extension InPlaceSessionDriver {
    package func write(_ batch: [SessionEntry]) async -> SessionWriteOutcome { writeInPlace(batch) }
}

package enum SessionWriteOutcome: Sendable {
    case written(failure: String?)
    case away(String)
}

/// The one write path of a session, whatever holds it: `record` never blocks (the proxy calls
/// it from its event loops); entries queue in memory and one writer at a time commits whatever
/// has arrived in one transaction (group commit) through the session's driver.
///
/// - **Kept before the client sees it.** A flow whose client waits (`stored`) is appended to
///   the session's journal first when it has one (`SessionJournal`, beside a session file; its
///   large bodies go to the body log, `SessionBodyLog`) and `stored` runs at once; otherwise
///   `stored` runs once the transaction holding the flow has committed, or once the driver kept
///   it on this machine while its store is away.
/// - **Backpressure.** `isBehind` asks the proxy to slow down before memory grows; past
///   `Limits.pendingBodyBytes` entries are kept without body bytes (sizes kept, marked truncated).
/// - **Redaction.** What `redaction` replaces never reaches the journal, the body log or the store.
/// - **Outages.** While the driver's store is away, batches are kept on this machine by the
///   driver; it is asked to catch up with backoff, oldest first, before anything newer.
package final class SessionWriter: Sendable {
    package struct Limits: Sendable {
        /// Body bytes that may wait; past this, entries are kept without body bytes.
        package var pendingBodyBytes: Int
        /// Entries that may wait before `isBehind` asks the proxy to slow down.
        package var pendingEntries: Int
        /// WebSocket messages that may wait before `isBehind` asks relays to stop reading a moment.
        package var pendingMessages: Int
        /// Entries one transaction writes at most, and body bytes it carries at most (past one entry).
        package var batch: Int
        package var batchBytes: Int
        /// How long entries already in the journal gather before a transaction writes them:
        /// nobody waits for their commit, so a transaction writes each page once for many.
        package var gathering: Duration?

        package init(pendingBodyBytes: Int, pendingEntries: Int, pendingMessages: Int, batch: Int, batchBytes: Int = .max, gathering: Duration? = nil) {
            self.pendingBodyBytes = pendingBodyBytes
            self.pendingEntries = pendingEntries
            self.pendingMessages = pendingMessages
            self.batch = batch
            self.batchBytes = batchBytes
            self.gathering = gathering
        }
    }

    package let limits: Limits
    package let redaction: FlowRedaction
    /// The session as the writer's messages name it.
    let name: String
    private let driver: any SessionDriver
    /// The driver, when it commits in place: the writer runs on `queue`, not as a task.
    private let inPlace: (any InPlaceSessionDriver)?
    /// Where an in-place writer runs, and where gathering moments end.
    private let queue = DispatchQueue(label: "kagami.session.writer")
    /// Where flows whose client waits go first (nil: they wait for their commit).
    let journal: SessionJournal?
    /// Where large bodies go, appended to only with a journal.
    let bodyLog: SessionBodyLog?
    private let state = Mutex(State())

    private struct State {
        var entries = Deque<SessionEntry>()
        /// A writer runs (`drain`), or is about to.
        var running = false
        /// A writer is set for the end of a gathering moment.
        var gatherScheduled = false
        var task: Task<Void, Never>?
        var closing = false
        /// Entries queued since the writer began, and those written, kept while away or given up on.
        var queued = 0
        var finished = 0
        var flushes: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var lastError: String?
        var bodyBytes = 0
        var bodiesDropped = 0
        var messages = 0
        /// Tests hold the writer to see what survives before a commit.
        var suspended = false
    }

    package convenience init(name: String, driver: any SessionDriver, limits: Limits, redaction: FlowRedaction) {
        self.init(name: name, driver: driver, limits: limits, redaction: redaction, journal: nil, bodyLog: nil)
    }

    init(name: String, driver: any SessionDriver, limits: Limits, redaction: FlowRedaction, journal: SessionJournal?, bodyLog: SessionBodyLog?) {
        self.name = name
        self.driver = driver
        self.inPlace = driver as? any InPlaceSessionDriver
        self.limits = limits
        self.redaction = redaction
        self.journal = journal
        self.bodyLog = bodyLog
    }

    // MARK: Recording

    package func record(_ record: FlowRecord) {
        switch record {
        case .flow(let flow, let stored): self.record(flow, stored: stored)
        case .messages(let messages, let flowID): self.record(messages: messages, of: flowID)
        case .note(let note): enqueue(SessionEntry(.note(note.bounded)))
        }
    }

    /// `stored` runs once the flow would survive the process being killed: at once, on the
    /// caller's thread, when it went into the journal; otherwise on the writer once its
    /// transaction has committed (or failed: the error is kept for `flush()` and the caller is
    /// not held forever).
    package func record(_ flow: Flow, stored: (@Sendable () -> Void)?) {
        let flow = redaction.apply(to: flow)
        guard let stored, let journal else {
            return withLargeBodiesLogged(flow) { flow, logged in enqueue(SessionEntry(.flow(flow), stored: stored, logged: logged)) }
        }
        let metadata = flow.storedRecord()
        withLargeBodiesLogged(flow) { flow, logged in
            let request = logged.request.map(SessionJournal.Body.logged) ?? .inline(flow.request.body.data)
            let response = logged.response.map(SessionJournal.Body.logged) ?? .inline(flow.response?.body.data ?? Data())
            if journal.append(metadata: metadata, request: request, response: response) {
                enqueue(SessionEntry(.flow(flow), metadata: metadata, journaled: true, logged: logged))
                stored()
            } else {
                enqueue(SessionEntry(.flow(flow), stored: stored, metadata: metadata, logged: logged))
            }
        }
    }

    /// Messages queue behind the flow they belong to.
    package func record(messages: [WebSocketMessage], of flowID: UUID) {
        enqueue(SessionEntry(.messages(redaction.apply(to: messages), flowID: flowID)))
    }

    /// Queued like a flow, so it lands after every flow recorded before the call.
    package func updateViolations(_ violations: [ContractViolation], ofFlow id: UUID) {
        enqueue(SessionEntry(.violations(violations, flowID: id)))
    }

    /// Hands `body` the flow with its large bodies appended to the body log (with a journal)
    /// and only their sizes left in it, and where they went. The flow is copied only when a
    /// body moves: copying one retains every field.
    private func withLargeBodiesLogged(_ flow: Flow, _ body: (Flow, LoggedBodies) -> Void) {
        let request = flow.request.body.keptCount >= SessionBodyLog.threshold
        let response = (flow.response?.body.keptCount ?? 0) >= SessionBodyLog.threshold
        guard journal != nil, let bodyLog, request || response else { return body(flow, LoggedBodies()) }
        var bodies: [FlowBody] = []
        if request { bodies.append(flow.request.body) }
        if response, let kept = flow.response?.body { bodies.append(kept) }
        guard let places = bodyLog.append(bodies) else { return body(flow, LoggedBodies()) }
        var flow = flow
        var logged = LoggedBodies()
        var next = places.makeIterator()
        if request, let place = next.next() {
            logged.request = place
            flow.request.body.data = Data()
        }
        if response, let place = next.next() {
            logged.response = place
            flow.response?.body.data = Data()
        }
        body(flow, logged)
    }

    private enum Start {
        case now
        case afterGathering(Duration)
    }

    private func enqueue(_ entry: SessionEntry) {
        let bytes = entry.bodyBytes
        let limits = limits
        let (start, warnDropping) = state.withLock { state -> (Start?, Bool) in
            var entry = entry
            var warn = false
            if bytes > 0, state.bodyBytes + bytes > limits.pendingBodyBytes {
                entry = entry.withoutBodies
                state.bodiesDropped += 1
                warn = state.bodiesDropped == 1
            } else {
                state.bodyBytes += entry.bodyBytes
            }
            state.messages += entry.messageCount
            state.entries.append(entry)
            state.queued += 1
            if state.running { return (nil, warn) }
            if entry.journaled, let gathering = limits.gathering {
                if state.gatherScheduled { return (nil, warn) }
                state.gatherScheduled = true
                return (.afterGathering(gathering), warn)
            }
            state.running = true
            return (.now, warn)
        }
        if warnDropping {
            Console.error("kagami: writing to \(name) is behind the traffic; storing exchanges without their bodies until it catches up\n")
        }
        switch start {
        case .now?:
            startWriter()
        case .afterGathering(let gathering)?:
            // It does not hold the writer: flows in the journal outlive a store let go before
            // it runs (the next opening replays them, as after a crash).
            let (seconds, attoseconds) = gathering.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                self?.startAfterGathering()
            }
        case nil:
            break
        }
    }

    private func startAfterGathering() {
        startWriterIfIdle { $0.gatherScheduled = false }
    }

    /// Starts the writer for what the driver kept on this machine before (a spool left by a
    /// store that is gone), with nothing queued yet.
    package func catchUp() {
        startWriterIfIdle(evenIfEmpty: true)
    }

    /// Starts the writer unless one runs or nothing is queued (`evenIfEmpty`: what the driver
    /// keeps is to write too), after `change` to the state under the same lock.
    private func startWriterIfIdle(evenIfEmpty: Bool = false, after change: (inout State) -> Void = { _ in }) {
        let start = state.withLock { state -> Bool in
            change(&state)
            guard !state.running, evenIfEmpty || !state.entries.isEmpty else { return false }
            state.running = true
            return true
        }
        if start { startWriter() }
    }

    private func startWriter() {
        if let inPlace {
            queue.async { self.drain(inPlace) }
        } else {
            let task = Task { await self.drain() }
            state.withLock { $0.task = task }
        }
    }

    /// Also behind with half the pending body bytes waiting: clients slow down before any body
    /// has to be dropped.
    package var isBehind: Bool {
        state.withLock {
            $0.entries.count >= limits.pendingEntries || $0.messages >= limits.pendingMessages
                || $0.bodyBytes >= limits.pendingBodyBytes / 2
        }
    }

    /// Entries queued in memory, being written included.
    package var queuedCount: Int { state.withLock { $0.entries.count } }

    /// The last failure the store reported, if any.
    package var lastError: String? { state.withLock { $0.lastError } }

    // MARK: Writing

    /// The writer of a driver that commits in place, on `queue`: it takes what has queued and
    /// commits it until the queue is empty.
    private func drain(_ driver: any InPlaceSessionDriver) {
        while let batch = takeBatch(waiting: false) {
            _ = written(batch, driver.writeInPlace(batch))
        }
        journal?.committed(0, idle: true)
    }

    /// One writer at a time: it takes what has queued and commits it (or has the driver keep it
    /// while its store is away) and goes on until the queue is empty and nothing waits.
    private func drain() async {
        var attempts = 0
        var nextAttempt = ContinuousClock.now
        while !Task.isCancelled {
            if driver.isAway || driver.hasEntriesWaiting, ContinuousClock.now >= nextAttempt {
                if await driver.catchUp() {
                    attempts = 0
                } else {
                    attempts += 1
                    nextAttempt = ContinuousClock.now + Self.backoff(attempts)
                }
            }
            let away = driver.isAway
            guard let batch = takeBatch(waiting: away || driver.hasEntriesWaiting) else {
                journal?.committed(0, idle: true)
                return
            }
            if batch.isEmpty {
                // Waiting for the store to be back: new entries are kept as they come.
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            if away {
                if driver.keepWhileAway(batch) {
                    finish(batch, failure: nil)
                } else {
                    try? await Task.sleep(for: .milliseconds(200))
                }
                continue
            }
            if !written(batch, await driver.write(batch)) {
                attempts = 1
                nextAttempt = ContinuousClock.now + Self.backoff(attempts)
            }
        }
        state.withLock { $0.running = false }
    }

    /// The next batch to write, empty while nothing is queued but entries wait on this machine
    /// (`waiting`); nil when the writer stops: nothing to write, closing, or held (tests).
    private func takeBatch(waiting: Bool) -> [SessionEntry]? {
        state.withLock { state in
            let batch = state.suspended ? [] : Self.nextBatch(of: state.entries, limits: limits)
            if batch.isEmpty, !waiting || state.closing || state.suspended {
                state.running = false
                return nil
            }
            return batch
        }
    }

    /// Takes `batch` off the queue as the driver wrote it; false when its store was away and
    /// the batch is still to write.
    private func written(_ batch: [SessionEntry], _ outcome: SessionWriteOutcome) -> Bool {
        guard case .written(let failure) = outcome else { return false }
        if let failure {
            Console.error("kagami: \(failure)\n")
        } else {
            journal?.committed(batch.reduce(0) { $0 + ($1.journaled ? 1 : 0) }, idle: false)
            bodyLog?.committed(batch.reduce(0) { $0 + $1.logged.count })
        }
        finish(batch, failure: failure)
        return true
    }

    /// The oldest entries, up to `limits.batch` of them and `limits.batchBytes` of bodies.
    package static func nextBatch(of entries: some Collection<SessionEntry>, limits: Limits) -> [SessionEntry] {
        var batch: [SessionEntry] = []
        var bytes = 0
        for entry in entries.prefix(limits.batch) {
            if !batch.isEmpty, bytes + entry.bodyBytes > limits.batchBytes { break }
            batch.append(entry)
            bytes += entry.bodyBytes
        }
        return batch
    }

    /// 0.2 s, 0.4 s, … up to 5 s between attempts to reach a store that is away.
    package static func backoff(_ attempts: Int) -> Duration {
        .milliseconds(min(200 << min(max(attempts, 1) - 1, 5), 5_000))
    }

    /// Takes `batch` off the queue once it is written, kept while away or given up on; who
    /// waits for its entries goes on.
    private func finish(_ batch: [SessionEntry], failure: String?) {
        let written = batch.reduce(0) { $0 + $1.bodyBytes }
        let messages = batch.reduce(0) { $0 + $1.messageCount }
        let flushed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
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

    /// Returns once every entry queued before the call has been written (or kept on this
    /// machine while the store is away); throws the last failure the store reported, if any.
    package func flush() async throws {
        startWriterIfIdle()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.finished >= state.queued { return true }
                state.flushes.append((after: state.queued, continuation: continuation))
                return false
            }
            if done { continuation.resume() }
        }
        if let error = lastError { throw FlowStoreError(error) }
    }

    /// Writes what is queued, then stops: what the driver keeps on this machine stays there.
    package func close() async {
        try? await flush()
        let task = state.withLock { state in
            state.closing = true
            return state.task
        }
        task?.cancel()
        await task?.value
    }

    // MARK: Holding the writer (tests)

    /// Stops the writer before its next batch until `resume()`.
    func suspend() {
        state.withLock { $0.suspended = true }
    }

    func resume() {
        startWriterIfIdle { $0.suspended = false }
    }
}

/// Where a flow's large bodies are in the session's body log.
package struct LoggedBodies: Sendable {
    var request: SessionBodyLog.Place?
    var response: SessionBodyLog.Place?
    package init() {}
    package var count: Int { (request == nil ? 0 : 1) + (response == nil ? 0 : 1) }
}
