import Foundation
import KagamiFlow
import Synchronization

/// A `FlowSink` that keeps every record in memory, in the order it came, and can be told to
/// say it is behind: what a test hands the engine or a chain where a store would be.
public final class CollectingSink: FlowSink {
    private let kept = Mutex<[FlowRecord]>([])
    /// While true, `isBehind` is true (a store that can't keep up).
    public let behind = Mutex(false)

    public init() {}

    public func record(_ record: FlowRecord) {
        kept.withLock { $0.append(record) }
        if case .flow(_, let stored?) = record { stored() }
    }

    public var isBehind: Bool { behind.withLock { $0 } }

    /// Every record so far.
    public var records: [FlowRecord] { kept.withLock { $0 } }

    /// The flows among the records.
    public var flows: [Flow] {
        records.compactMap { if case .flow(let flow, _) = $0 { flow } else { nil } }
    }

    /// The WebSocket messages among the records, of every flow.
    public var messages: [WebSocketMessage] {
        records.flatMap { record -> [WebSocketMessage] in
            guard case .messages(let messages, _) = record else { return [] }
            return messages
        }
    }
}
