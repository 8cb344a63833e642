// What an in-process server keeps of its traffic: every flow in memory (and in a session file
// when asked), checked against the descriptions first, and announced to whoever listens.
import Dispatch
import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiStore
import Synchronization

/// Where a running proxy or mock keeps the flows it records.
public enum FlowRecording: Sendable, Hashable {
    /// In memory only, for as long as the server runs.
    case memory
    /// In memory and in a session file (SQLite) that `kagami open` and the web UI read.
    case sessionFile(path: String)
}

/// The sink handed to the engine. Flows are checked and kept on a serial queue of their own, so
/// neither the client's exchange nor the event loop waits for the contract check or the store.
final class FlowRecorder: FlowSink {
    private struct State {
        var flows: [Flow] = []
        var listeners: [UUID: AsyncStream<Flow>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "kagami.kit.recording")
    private let contracts: LiveContracts?
    private let store: SQLiteFlowStore?

    init(recording: FlowRecording, contracts: LiveContracts?) throws {
        self.contracts = contracts
        switch recording {
        case .memory: store = nil
        case .sessionFile(let path): store = try SQLiteFlowStore(path: path)
        }
    }

    func record(_ flow: Flow) {
        queue.async { [self] in
            var checked = flow
            if let contracts { checked.violations = contracts.check(flow) }
            store?.record(checked)
            let listeners = state.withLock { state in
                state.flows.append(checked)
                return Array(state.listeners.values)
            }
            for listener in listeners { listener.yield(checked) }
        }
    }

    var flows: [Flow] { state.withLock { $0.flows } }

    /// Every flow recorded from now on; ends when the server shuts down.
    func subscribe() -> AsyncStream<Flow> {
        let (stream, continuation) = AsyncStream<Flow>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = UUID()
        let finished = state.withLock { state in
            if !state.finished { state.listeners[id] = continuation }
            return state.finished
        }
        if finished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until `count` flows have been recorded, or `timeout` has passed.
    func flows(count: Int, timeout: Duration) async throws -> [Flow] {
        let updates = subscribe()
        if flows.count >= count { return flows }
        let recorder = self
        return try await withThrowingTaskGroup(of: [Flow]?.self) { group in
            group.addTask {
                for await _ in updates where recorder.flows.count >= count { return recorder.flows }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            if let result = try await group.next(), let flows = result { return flows }
            throw FlowWaitTimeout(expected: count, recorded: recorder.flows.count, timeout: timeout)
        }
    }

    /// Returns once every flow handed over before the call is kept, then ends the subscriptions.
    func finish() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
        let listeners = state.withLock { state in
            state.finished = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish() }
        try await store?.flush()
    }
}

/// Fewer flows than a test waited for were recorded in time.
public struct FlowWaitTimeout: Error, CustomStringConvertible, Sendable {
    public var expected: Int
    public var recorded: Int
    public var timeout: Duration

    public var description: String {
        "waited \(timeout) for \(expected) flow\(expected == 1 ? "" : "s"), \(recorded) recorded"
    }
}
