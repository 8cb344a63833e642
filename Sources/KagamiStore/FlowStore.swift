import Foundation
import KagamiFlow

/// Where captured exchanges live. The proxy hands records to `record(_:)` from its event
/// loops, so that call never blocks (it queues them for writing; a flow with an id already
/// stored replaces it); everything else is for readers.
public protocol FlowStore: FlowSink {
    /// Replaces a stored flow's contract violations (the check finds them after the flow was
    /// recorded, off the proxy's path); after every `record(_:)` made before the call, and a
    /// no-op when no flow has that id.
    func updateViolations(_ violations: [ContractViolation], ofFlow id: UUID)
    /// Returns once every flow recorded before the call is durable.
    func flush() async throws
    /// The flow with bodies, or nil.
    func flow(id: UUID) async throws -> Flow?
    /// Flows in capture order; without bodies' bytes unless asked (sizes are always there).
    func flows(offset: Int, limit: Int?, includeBodies: Bool) async throws -> [Flow]
    /// A page of the flows `query` asks for (see `FlowQuery`).
    func flows(_ query: FlowQuery) async throws -> FlowPage
    func count() async throws -> Int
    /// The messages of a WebSocket flow, in the order they passed.
    func messages(of flowID: UUID, offset: Int, limit: Int?) async throws -> [WebSocketMessage]
    /// The changes made to the proxy while it recorded (`SessionNote`), oldest first.
    func notes() async throws -> [SessionNote]
    /// Deletes every flow and note, after those recorded before the call have been written.
    func removeAll() async throws
    /// Writes what is queued and lets go of the store's connections (a store on a server).
    func close() async
}

extension FlowStore {
    /// The messages of each WebSocket flow among `flows` (for exports).
    public func webSocketMessages(of flows: [Flow]) async throws -> [UUID: [WebSocketMessage]] {
        var messages: [UUID: [WebSocketMessage]] = [:]
        for flow in flows where flow.isWebSocket {
            messages[flow.id] = try await self.messages(of: flow.id, offset: 0, limit: nil)
        }
        return messages
    }

    /// For stores that hold no connection of their own.
    public func close() async {}

    /// For stores that keep no messages.
    public func messages(of flowID: UUID, offset: Int, limit: Int?) async throws -> [WebSocketMessage] { [] }

    public func allFlows(includeBodies: Bool = true) async throws -> [Flow] {
        try await flows(offset: 0, limit: nil, includeBodies: includeBodies)
    }
}

public struct FlowStoreError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
