import Foundation
import KagamiFlow

// What a store keeps of an exchange while its writer is behind the traffic: everything but the
// body bytes, whose sizes stay and which say they were cut, so memory stays bounded.
extension Flow {
    public var withBodiesDropped: Flow {
        var flow = self
        flow.request.body.data = Data()
        flow.request.body.isTruncated = flow.request.body.size > 0
        flow.response?.body.data = Data()
        if let size = flow.response?.body.size { flow.response?.body.isTruncated = size > 0 }
        return flow
    }

    /// Body bytes a store holds for this flow until it is written.
    public var pendingBodyBytes: Int {
        request.body.keptCount + (response?.body.keptCount ?? 0)
    }
}

extension Array where Element == WebSocketMessage {
    public var withPayloadsDropped: [WebSocketMessage] {
        map { message in
            guard !message.data.isEmpty else { return message }
            var message = message
            message.data = Data()
            message.isTruncated = true
            return message
        }
    }

    public var pendingBodyBytes: Int {
        reduce(0) { $0 + $1.data.count }
    }
}
