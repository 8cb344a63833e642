// What an in-process server keeps of its traffic: every flow and WebSocket message in memory
// (and in a session file when asked), checked against the descriptions first, and announced to
// whoever listens.
import Foundation
import KagamiFlow
import KagamiRecording
import KagamiRecordingProxy
import KagamiStore
import Synchronization

/// Where a running proxy or mock keeps the flows it records.
public enum FlowRecording: Sendable, Hashable {
    /// In memory only, for as long as the server runs.
    case memory
    /// In memory and in a session file (SQLite) that `kagami open` and the web UI read.
    case sessionFile(path: String)
}

/// What an in-process server keeps: its memory, and the session file when asked. The proxy's
/// chain is built with them by `ProxySetup` (the contract check first, so each flow is kept
/// with its violations), the mock's by `recording()`.
struct FlowRecorder: Sendable {
    let store: SQLiteFlowStore?
    let memory = FlowMemory()

    init(recording: FlowRecording) throws {
        switch recording {
        case .memory: store = nil
        case .sessionFile(let path): store = try SQLiteFlowStore(path: path)
        }
    }

    /// The chain of a server without a proxy: the session file when asked, then the memory.
    func recording() -> Recording {
        Recording(store: store, contractTiming: .first, then: [memory])
    }
}

/// The last stage of an in-process server's chain: every flow, and every WebSocket message,
/// in memory for as long as the server runs, announced to whoever listens.
final class FlowMemory: RecordingStage {
    private struct State {
        var flows: [Flow] = []
        var messages: [UUID: [WebSocketMessage]] = [:]
        var listeners: [UUID: AsyncStream<Flow>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    var isBehind: Bool { false }

    func handle(_ record: FlowRecord, next: @escaping @Sendable (FlowRecord) -> Void) {
        switch record {
        case .flow(let flow, _):
            let listeners = state.withLock { state in
                state.flows.append(flow)
                return Array(state.listeners.values)
            }
            for listener in listeners { listener.yield(flow) }
        case .messages(let messages, let flowID):
            state.withLock { $0.messages[flowID, default: []].append(contentsOf: messages) }
        case .note:
            break
        }
        next(record)
    }

    var flows: [Flow] { state.withLock { $0.flows } }

    /// The messages of a WebSocket flow so far, in the order they passed.
    func messages(of flowID: UUID) -> [WebSocketMessage] {
        state.withLock { $0.messages[flowID] ?? [] }
    }

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
        let memory = self
        return try await withThrowingTaskGroup(of: [Flow]?.self) { group in
            group.addTask {
                for await _ in updates where memory.flows.count >= count { return memory.flows }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            if let result = try await group.next(), let flows = result { return flows }
            throw FlowWaitTimeout(expected: count, recorded: memory.flows.count, timeout: timeout)
        }
    }

    /// Ends the subscriptions.
    func finish() {
        let listeners = state.withLock { state in
            state.finished = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish() }
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
