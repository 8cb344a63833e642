import Foundation

/// Receives each exchange when it ends. Called on the proxy's event loops: must not block.
public protocol FlowSink: Sendable {
    func record(_ flow: Flow)
    /// Records `flow` and calls `stored` once it is safely kept (for a session file: committed,
    /// so it survives the process being killed). The proxy finishes an exchange for the client
    /// only then, so an exchange the client saw complete is always in the session.
    func record(_ flow: Flow, stored: @escaping @Sendable () -> Void)
    /// True while the sink holds more unwritten flows than it wants to: the proxy then waits
    /// before reading a connection's next request, so traffic slows to what the sink can keep
    /// instead of memory growing.
    var isBehind: Bool { get }
    /// Appends messages of an upgraded exchange (WebSocket) whose flow, its handshake, was
    /// recorded before, in the order they were seen. Like `record`, it never blocks: messages
    /// are queued behind that flow and written in batches, so a message a peer received is
    /// kept or about to be, and a long socket doesn't hold its messages in memory.
    func record(messages: [WebSocketMessage], of flowID: UUID)
}

extension FlowSink {
    public var isBehind: Bool { false }

    /// For sinks that keep flows only.
    public func record(messages: [WebSocketMessage], of flowID: UUID) {}

    /// For sinks that keep flows as soon as they get them.
    public func record(_ flow: Flow, stored: @escaping @Sendable () -> Void) {
        record(flow)
        stored()
    }
}

