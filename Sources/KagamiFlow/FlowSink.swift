/// Receives each exchange when it ends. Called on the proxy's event loops: must not block.
public protocol FlowSink: Sendable {
    func record(_ flow: Flow)
}
