import Foundation

/// One thing a running proxy or mock records.
public enum FlowRecord: Sendable {
    /// An exchange that ended, finished or failed (a request, a tunnel, a WebSocket handshake,
    /// a gRPC call). `stored`, when given, is called once the flow is safely kept (for a session
    /// file: committed, so it survives the process being killed); the proxy finishes an
    /// exchange for the client only then, so an exchange the client saw complete is always in
    /// the session.
    case flow(Flow, stored: (@Sendable () -> Void)?)
    /// Messages of an upgraded exchange (WebSocket) whose flow, its handshake, was recorded
    /// before, in the order they were seen.
    case messages([WebSocketMessage], of: UUID)
    /// A change made to the proxy while it records, kept in the session beside the exchanges.
    case note(SessionNote)
}

/// Receives what a running proxy or mock records. Called on the proxy's event loops: must not
/// block. Each kind of `FlowRecord` is handled by a `switch`, so a kind added later is a
/// compile error in every sink rather than records silently dropped.
public protocol FlowSink: Sendable {
    func record(_ record: FlowRecord)
    /// True while the sink holds more unwritten records than it wants to: the proxy then waits
    /// before reading a connection's next request (a relay its next message), so traffic slows
    /// to what the sink can keep instead of memory growing.
    var isBehind: Bool { get }
}

extension FlowSink {
    /// Records a flow nobody waits on.
    public func record(_ flow: Flow) {
        record(.flow(flow, stored: nil))
    }

    /// Records `flow` and calls `stored` once it is safely kept.
    public func record(_ flow: Flow, stored: @escaping @Sendable () -> Void) {
        record(.flow(flow, stored: stored))
    }

    /// Appends messages of an upgraded exchange recorded before. Like every record it never
    /// blocks: messages are queued behind that flow and written in batches, so a message a peer
    /// received is kept or about to be, and a long socket doesn't hold its messages in memory.
    public func record(messages: [WebSocketMessage], of flowID: UUID) {
        record(.messages(messages, of: flowID))
    }
}

/// One stage of a `RecordingChain`: it sees every record in the chain's order and hands on
/// what later stages see — the record as it was, or changed — by calling `next` (now, or later
/// from a queue of its own, in the order records came), or keeps it from them by not calling it.
public protocol RecordingStage: Sendable {
    func handle(_ record: FlowRecord, next: @escaping @Sendable (FlowRecord) -> Void)
    /// True while the stage holds more than it wants to (see `FlowSink.isBehind`).
    var isBehind: Bool { get }
}

/// What a running proxy or mock records goes through: one ordered list of stages (the store,
/// the live views, the contract check, a test's memory), one record at a time. A flow's
/// `stored` is called by the stage that keeps it (it passes the flow on without it), or, when no
/// stage keeps flows, once the flow has passed the last stage.
public final class RecordingChain: FlowSink {
    public let stages: [any RecordingStage]

    public init(_ stages: [any RecordingStage]) {
        self.stages = stages
    }

    public func record(_ record: FlowRecord) {
        run(record, from: 0)
    }

    public var isBehind: Bool {
        stages.contains { $0.isBehind }
    }

    private func run(_ record: FlowRecord, from index: Int) {
        guard index < stages.count else {
            if case .flow(_, let stored?) = record { stored() }
            return
        }
        stages[index].handle(record) { [self] next in run(next, from: index + 1) }
    }
}

/// The stage that keeps records in a sink (a store): each flow with its `stored`, each batch of
/// messages; later stages see the flow without `stored`, as it is already armed.
public struct KeepingStage: RecordingStage {
    public let sink: any FlowSink

    public init(in sink: any FlowSink) {
        self.sink = sink
    }

    public func handle(_ record: FlowRecord, next: @escaping @Sendable (FlowRecord) -> Void) {
        sink.record(record)
        switch record {
        case .flow(let flow, _): next(.flow(flow, stored: nil))
        case .messages, .note: next(record)
        }
    }

    public var isBehind: Bool { sink.isBehind }
}
