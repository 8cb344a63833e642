import KagamiRules
import NIOCore

extension UpstreamConnection {
    /// Shapes this connection's traffic for the exchange now using it; nil: unshaped. The link
    /// joins the pipeline the first time it is needed and stays (pooled connections are reused).
    func shape(with profile: ThrottleProfile?) {
        if handler.link == nil {
            guard profile != nil else { return }
            let link = ThrottledLink()
            do {
                try channel.pipeline.syncOperations.addHandler(link, position: .first)
            } catch {
                // A connection already closing: the exchange will see that on its own.
                return
            }
            handler.link = link
        }
        handler.link?.shape(profile)
    }

    /// Whether more of the request may be written now: the socket's buffer and the throttle's queue.
    var isWritable: Bool {
        channel.isWritable && (handler.link?.isWritable ?? true)
    }
}
