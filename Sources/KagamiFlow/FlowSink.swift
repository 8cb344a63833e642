/// Receives each exchange when it ends. Called on the proxy's event loops: must not block.
public protocol FlowSink: Sendable {
    func record(_ flow: Flow)
    /// True while the sink holds more unwritten flows than it wants to: the proxy then waits
    /// before reading a connection's next request, so traffic slows to what the sink can keep
    /// instead of memory growing.
    var isBehind: Bool { get }
}

extension FlowSink {
    public var isBehind: Bool { false }
}
