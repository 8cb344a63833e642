// The descriptions a running proxy checks traffic against: read at start (a broken one stops
// the start), re-read when their file changes (a broken edit keeps the last good version and
// says so), with coverage kept as flows are checked.
import Foundation
import KagamiDescription
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import Synchronization

public final class LiveContracts: Sendable {
    /// One `--contract` argument and what it gave.
    struct Entry: Sendable {
        var argument: String
        var path: String
        var baseURL: String?
        var check: ContractCheck
        var coverage: ContractCoverage
        var modified: Date?
        /// The errors of the file as it is now, when they made Kagami keep `check`.
        var reloadErrors: [String] = []
        var reloadedAt: Date?
        /// Counts successful reloads, so a check made with an older version isn't counted in the new one's coverage.
        var generation = 0
    }

    /// A `grpc-reflection=URL` argument whose server has not described its methods yet.
    struct PendingReflection: Sendable {
        var argument: String
        var host: String
        var port: Int
        var tls: Bool
        var reason = "not asked yet"
        var attempts = 0
        var nextAttempt = Date.distantPast
    }

    /// Reflection requests to one server (host, port, TLS): the proxy's own upstream connections.
    public typealias ReflectionSender = @Sendable (_ host: String, _ port: Int, _ tls: Bool) -> ServerReflection.Send

    struct State: Sendable {
        var entries: [Entry]
        var pending: [PendingReflection] = []
        var set: ContractSet
        var checked = 0
        /// Flows not checked because the check was too far behind the traffic.
        var skipped = 0
    }

    private let state: Mutex<State>
    private let assertsFormat: Bool
    private let watcher = Mutex<Task<Void, Never>?>(nil)
    private let reflectionSender = Mutex<ReflectionSender?>(nil)

    /// Reads every description; the first that can't be used throws its lint lines.
    /// A `grpc-reflection=URL` argument waits for `askReflection(through:)`.
    /// `assertsFormat` false accepts any value for a format (`--no-assert-format`).
    public init(arguments: [String], assertsFormat: Bool = true) throws(ContractCheckError) {
        self.assertsFormat = assertsFormat
        var entries: [Entry] = []
        var pending: [PendingReflection] = []
        for argument in arguments {
            if let server = try ContractCheck.reflectionServer(argument) {
                pending.append(PendingReflection(argument: argument, host: server.host, port: server.port, tls: server.tls))
                continue
            }
            let (path, baseURL) = ContractCheck.split(argument)
            let check = try ContractCheck.load(argument, assertsFormat: assertsFormat)
            entries.append(Entry(
                argument: argument, path: path, baseURL: baseURL, check: check, coverage: ContractCoverage(check),
                modified: Self.modificationDate(path)))
        }
        state = Mutex(State(entries: entries, pending: pending, set: ContractSet(entries.map(\.check))))
    }

    /// Asks the servers of the `grpc-reflection=URL` arguments for their methods through
    /// `sender`; a description learned is checked from then on (after the files). A server
    /// that doesn't answer is asked again while `watch` runs, after 1, 2, 4… up to 30 seconds.
    /// Returns a line for each description learned and for each first failure.
    public func askReflection(through sender: @escaping ReflectionSender) async -> [String] {
        reflectionSender.withLock { $0 = sender }
        return await askPendingReflection()
    }

    func askPendingReflection(now: Date = Date()) async -> [String] {
        guard let sender = reflectionSender.withLock({ $0 }) else { return [] }
        let due = state.withLock { $0.pending.filter { $0.nextAttempt <= now } }
        var notes: [String] = []
        for item in due {
            let outcome: Result<ContractCheck, ContractCheckError>
            do {
                outcome = .success(try await ContractCheck.reflected(item.argument, send: sender(item.host, item.port, item.tls), assertsFormat: assertsFormat))
            } catch {
                outcome = .failure(error)
            }
            let note: String? = state.withLock { state in
                guard let index = state.pending.firstIndex(where: { $0.argument == item.argument }) else { return nil }
                switch outcome {
                case .success(let check):
                    state.pending.remove(at: index)
                    state.entries.append(Entry(
                        argument: item.argument, path: item.argument, baseURL: ContractCheck.split(item.argument).baseURL, check: check,
                        coverage: ContractCoverage(check), modified: nil))
                    state.set = ContractSet(state.entries.map(\.check))
                    return "Contract: \(item.argument) (\(check.routes.routes.count) operations) from the server's reflection"
                case .failure(let error):
                    state.pending[index].attempts += 1
                    state.pending[index].reason = error.description
                    let attempts = state.pending[index].attempts
                    state.pending[index].nextAttempt = now.addingTimeInterval(min(30, Double(1 << min(attempts - 1, 5))))
                    return attempts == 1 ? "Contract: \(error.description) (asked again until it answers)" : nil
                }
            }
            if let note { notes.append(note) }
        }
        return notes
    }

    public var set: ContractSet { state.withLock { $0.set } }

    /// Exchanges checked, and those not checked because the check was too far behind.
    public var counts: (checked: Int, skipped: Int) { state.withLock { ($0.checked, $0.skipped) } }

    /// Checks a flow against the descriptions in force and counts it in their coverage.
    public func check(_ flow: Flow) -> [ContractViolation] {
        let (set, generations) = state.withLock { ($0.set, $0.entries.map(\.generation)) }
        guard let (index, result) = set.check(flow) else { return [] }
        state.withLock { state in
            state.checked += 1
            // A reload in between replaced the entry: its fresh coverage starts after it.
            if index < state.entries.count, state.entries[index].generation == generations[index] {
                state.entries[index].coverage.record(result)
            }
        }
        return result.violations
    }

    func countSkipped() {
        state.withLock { $0.skipped += 1 }
    }

    /// Re-reads the files whose modification time changed; returns one line per file read.
    @discardableResult
    public func reloadChanged() -> [String] {
        let candidates = state.withLock { state in state.entries.enumerated().map { ($0.offset, $0.element.argument, $0.element.path, $0.element.modified) } }
        var notes: [String] = []
        for (index, argument, path, modified) in candidates {
            let now = Self.modificationDate(path)
            guard now != modified else { continue }
            let outcome: Result<ContractCheck, ContractCheckError>
            do {
                outcome = .success(try ContractCheck.load(argument, assertsFormat: assertsFormat))
            } catch {
                outcome = .failure(error)
            }
            state.withLock { state in
                guard index < state.entries.count else { return }
                state.entries[index].modified = now
                state.entries[index].reloadedAt = Date()
                switch outcome {
                case .success(let check):
                    state.entries[index].check = check
                    state.entries[index].generation += 1
                    state.entries[index].coverage = ContractCoverage(check)
                    state.entries[index].reloadErrors = []
                    notes.append("Reloaded \(path): \(check.routes.routes.count) operations")
                case .failure(let error):
                    state.entries[index].reloadErrors = error.lines
                    notes.append("Keeping the last good version of \(path):\n" + error.description)
                }
                state.set = ContractSet(state.entries.map(\.check))
            }
        }
        return notes
    }

    /// Polls the files every `interval` and reloads those that changed.
    public func watch(every interval: Duration, log: @escaping @Sendable (String) -> Void) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                for note in self.reloadChanged() { log(note) }
                for note in await self.askPendingReflection() { log(note) }
            }
        }
        watcher.withLock { $0 = task }
    }

    public func stopWatching() {
        watcher.withLock { $0?.cancel() }
    }

    /// `GET /api/contract`: the descriptions in force, their coverage, and reload problems.
    public var json: JSONValue {
        state.withLock { state in
            [
                "checked": .integer(state.checked),
                "skipped": .integer(state.skipped),
                "descriptions": .array(state.entries.map { entry in
                    [
                        "path": .string(entry.path),
                        "format": .string(entry.check.contract.format.rawValue),
                        "name": .string(entry.check.contract.name),
                        "baseURLs": .array(entry.check.baseURLs.map { .string($0.description) }),
                        "operations": .integer(entry.check.routes.routes.count),
                        "reloadErrors": .array(entry.reloadErrors.map(JSONValue.string)),
                        "coverage": entry.coverage.json,
                    ]
                }),
                "waitingForReflection": .array(state.pending.map { item in
                    ["argument": .string(item.argument), "reason": .string(item.reason)]
                }),
            ]
        }
    }

    /// Lines for the proxy's start banner.
    public var banner: String {
        state.withLock { state in
            state.entries.map { entry in
                let bases = entry.check.baseURLs.isEmpty ? "every host" : entry.check.baseURLs.map(\.description).joined(separator: ", ")
                return "Contract: \(entry.path) (\(entry.check.routes.routes.count) operations) checks \(bases)\n"
            }.joined() + state.pending.map { item in
                "Contract: \(item.argument) waits for the server's reflection (\(item.reason))\n"
            }.joined()
        }
    }

    /// The file's modification time; for a folder of `.proto` files, the latest of theirs and
    /// the folder's own (a file added, removed or edited).
    private static func modificationDate(_ path: String) -> Date? {
        let own = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        guard let files = try? ProtoFiles.list(in: path, option: "--contract") else { return own }
        let folder = URL(fileURLWithPath: path)
        return files.compactMap { file in
            (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(file).path))?[.modificationDate] as? Date
        }.reduce(own) { latest, date in latest.map { max($0, date) } ?? date }
    }

    deinit {
        watcher.withLock { $0?.cancel() }
    }
}

/// The stage of a `RecordingChain` that checks each flow against the descriptions in force, on a
/// queue of its own. `timing` says whether later stages wait for the check. When more than
/// `maximumPending` flows, or `maximumPendingBodyBytes` of their bodies, wait for a check that
/// runs alongside, new ones are counted as skipped rather than queued: memory stays bounded
/// when traffic outruns the check.
public final class ContractCheckStage: RecordingStage {
    public enum Timing: Sendable {
        /// Later stages (the store, the live views) get each record at once and the client's
        /// exchange never waits for the check; flows with violations go to `found` (which
        /// stores and announces them). `kagami proxy --contract`.
        case alongside(found: @Sendable (Flow) -> Void)
        /// Later stages get each flow once it is checked, its violations set, and every other
        /// record in the same order behind it. An in-process server whose flows a test reads.
        case before
    }

    private let contracts: LiveContracts
    private let timing: Timing
    private let queue = DispatchQueue(label: "kagami.contract-check")
    private let pending = Atomic<Int>(0)
    private let pendingBytes = Atomic<Int>(0)
    /// Flows handed over to be checked alongside, and whether the queue is set to check them.
    private let waiting = Mutex<(flows: [(Flow, Int)], scheduled: Bool)>(([], false))
    private let maximumPending: Int
    private let maximumPendingBodyBytes: Int

    public init(contracts: LiveContracts, timing: Timing, maximumPending: Int = 10_000, maximumPendingBodyBytes: Int = 256 << 20) {
        self.contracts = contracts
        self.timing = timing
        self.maximumPending = maximumPending
        self.maximumPendingBodyBytes = maximumPendingBodyBytes
    }

    /// Checked before they go on, flows wait for the check: past `maximumPending` the proxy
    /// slows down rather than skipping any.
    public var isBehind: Bool {
        guard case .before = timing else { return false }
        return pending.load(ordering: .relaxed) >= maximumPending
    }

    public func handle(_ record: FlowRecord, next: @escaping @Sendable (FlowRecord) -> Void) {
        switch timing {
        case .alongside:
            next(record)
            guard case .flow(let flow, _) = record else { return }
            checkAlongside(flow)
        case .before:
            pending.add(1, ordering: .relaxed)
            queue.async { [self] in
                defer { pending.subtract(1, ordering: .relaxed) }
                switch record {
                case .flow(var flow, let stored):
                    flow.violations = contracts.check(flow)
                    next(.flow(flow, stored: stored))
                case .messages, .note:
                    next(record)
                }
            }
        }
    }

    private func checkAlongside(_ flow: Flow) {
        let bytes = flow.request.body.keptCount + (flow.response?.body.keptCount ?? 0)
        let count = pending.add(1, ordering: .relaxed).newValue
        let total = pendingBytes.add(bytes, ordering: .relaxed).newValue
        guard count <= maximumPending, total <= maximumPendingBodyBytes || count == 1 else {
            pending.subtract(1, ordering: .relaxed)
            pendingBytes.subtract(bytes, ordering: .relaxed)
            contracts.countSkipped()
            return
        }
        let first = waiting.withLock { waiting in
            waiting.flows.append((flow, bytes))
            defer { waiting.scheduled = true }
            return !waiting.scheduled
        }
        // Flows gather a moment and the queue checks them together: a block per flow woke a
        // thread per exchange (a context switch each, more than the check itself costs).
        if first {
            queue.asyncAfter(deadline: .now() + Self.gathering) { [self] in checkWaiting() }
        }
    }

    /// How long flows checked alongside gather before the queue checks them.
    static let gathering = DispatchTimeInterval.milliseconds(2)

    /// Checks every flow waiting to be checked alongside (on `queue`), until none is.
    private func checkWaiting() {
        guard case .alongside(let found) = timing else { return }
        while true {
            let flows = waiting.withLock { waiting -> [(Flow, Int)] in
                let flows = waiting.flows
                waiting.flows.removeAll(keepingCapacity: true)
                if flows.isEmpty { waiting.scheduled = false }
                return flows
            }
            if flows.isEmpty { return }
            for (flow, bytes) in flows {
                let violations = contracts.check(flow)
                pending.subtract(1, ordering: .relaxed)
                pendingBytes.subtract(bytes, ordering: .relaxed)
                guard !violations.isEmpty else { continue }
                var checked = flow
                checked.violations = violations
                found(checked)
            }
        }
    }

    /// Returns once every flow handed to the stage before the call has been checked.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                checkWaiting()
                continuation.resume()
            }
        }
    }
}
