// The descriptions a running proxy checks traffic against: read at start (a broken one stops
// the start), re-read when their file changes (a broken edit keeps the last good version and
// says so), with coverage kept as flows are checked.
import Foundation
import KagamiDescription
import KagamiFlow
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

    struct State: Sendable {
        var entries: [Entry]
        var set: ContractSet
        var checked = 0
        /// Flows not checked because the check was too far behind the traffic.
        var skipped = 0
    }

    private let state: Mutex<State>
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Reads every description; the first that can't be used throws its lint lines.
    public init(arguments: [String]) throws(ContractCheckError) {
        var entries: [Entry] = []
        for argument in arguments {
            let (path, baseURL) = ContractCheck.split(argument)
            let check = try ContractCheck.load(argument)
            entries.append(Entry(
                argument: argument, path: path, baseURL: baseURL, check: check, coverage: ContractCoverage(check),
                modified: Self.modificationDate(path)))
        }
        state = Mutex(State(entries: entries, set: ContractSet(entries.map(\.check))))
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
                outcome = .success(try ContractCheck.load(argument))
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
            ]
        }
    }

    /// Lines for the proxy's start banner.
    public var banner: String {
        state.withLock { state in
            state.entries.map { entry in
                let bases = entry.check.baseURLs.isEmpty ? "every host" : entry.check.baseURLs.map(\.description).joined(separator: ", ")
                return "Contract: \(entry.path) (\(entry.check.routes.routes.count) operations) checks \(bases)\n"
            }.joined()
        }
    }

    private static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    deinit {
        watcher.withLock { $0?.cancel() }
    }
}

/// A `FlowSink` in front of another that checks each flow against the descriptions in force
/// after handing it on, on a queue of its own: the client's exchange never waits for the check.
/// Flows with violations go to `found` (which stores and announces them). When more than
/// `maximumPending` flows, or `maximumPendingBodyBytes` of their bodies, wait, new ones are
/// counted as skipped rather than queued: memory stays bounded when traffic outruns the check.
public final class ContractCheckSink: FlowSink {
    private let downstream: any FlowSink
    private let contracts: LiveContracts
    private let found: @Sendable (Flow) -> Void
    private let queue = DispatchQueue(label: "kagami.contract-check")
    private let pending = Atomic<Int>(0)
    private let pendingBytes = Atomic<Int>(0)
    private let maximumPending: Int
    private let maximumPendingBodyBytes: Int

    public init(
        forwardingTo downstream: any FlowSink, contracts: LiveContracts, maximumPending: Int = 10_000,
        maximumPendingBodyBytes: Int = 256 << 20, found: @escaping @Sendable (Flow) -> Void
    ) {
        self.downstream = downstream
        self.contracts = contracts
        self.maximumPending = maximumPending
        self.maximumPendingBodyBytes = maximumPendingBodyBytes
        self.found = found
    }

    public var isBehind: Bool { downstream.isBehind }

    public func record(_ flow: Flow) {
        downstream.record(flow)
        enqueue(flow)
    }

    public func record(_ flow: Flow, stored: @escaping @Sendable () -> Void) {
        downstream.record(flow, stored: stored)
        enqueue(flow)
    }

    private func enqueue(_ flow: Flow) {
        let bytes = flow.request.body.keptCount + (flow.response?.body.keptCount ?? 0)
        let count = pending.add(1, ordering: .relaxed).newValue
        let total = pendingBytes.add(bytes, ordering: .relaxed).newValue
        guard count <= maximumPending, total <= maximumPendingBodyBytes || count == 1 else {
            pending.subtract(1, ordering: .relaxed)
            pendingBytes.subtract(bytes, ordering: .relaxed)
            contracts.countSkipped()
            return
        }
        queue.async { [self] in
            defer {
                pending.subtract(1, ordering: .relaxed)
                pendingBytes.subtract(bytes, ordering: .relaxed)
            }
            let violations = contracts.check(flow)
            guard !violations.isEmpty else { return }
            var checked = flow
            checked.violations = violations
            found(checked)
        }
    }

    /// Returns once every flow recorded before the call has been checked.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
