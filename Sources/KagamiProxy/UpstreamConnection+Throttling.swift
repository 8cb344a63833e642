import KagamiRules
import NIOCore

extension UpstreamConnection {
    /// Shapes this connection's traffic for the exchange now using it; nil: unshaped. The handler
    /// joins the pipeline the first time it is needed and stays (pooled connections are reused).
    /// An HTTP/2 stream is not shaped: its bytes are frames of a connection other streams
    /// share (throttling's latency still applies).
    func shape(with profile: ThrottleProfile?) {
        guard !isStream else { return }
        if handler.throttle == nil {
            guard profile != nil else { return }
            let throttle = ThrottleHandler()
            throttle.holdsEndOfInput = true
            do {
                try channel.pipeline.syncOperations.addHandler(throttle, position: .first)
            } catch {
                // A connection already closing: the exchange will see that on its own.
                return
            }
            handler.throttle = throttle
        }
        handler.throttle?.shape(profile)
    }

    /// Whether more of the request may be written now: the socket's buffer and the throttle's queue.
    var isWritable: Bool {
        channel.isWritable && (handler.throttle?.isWritable ?? true)
    }
}
