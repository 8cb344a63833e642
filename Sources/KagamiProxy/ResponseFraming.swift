import NIOHTTP1

/// How a server's response head goes on to the client, worked out from the head, the request
/// and the client's HTTP version alone: the head as the client gets it, whether each connection
/// can carry another exchange after it, how much body the head promises, and the status of a
/// gRPC "trailers-only" answer. Pure: the exchange handler applies it.
struct ResponseFraming: Equatable {
    /// The head the client gets.
    var head: HTTPResponseHead
    /// The server's connection can serve another exchange after this response.
    var serverKeepsAlive: Bool
    /// The client's connection can: not when the server closes its own, nor when an HTTP/1.0
    /// client's body can only end with the connection.
    var clientKeepsAlive: Bool
    /// Bytes of body the head declares with Content-Length; nil when it is chunked, ends with
    /// the connection, or there is none.
    var declaredLength: Int?
    /// The `grpc-*` fields of an HTTP/2 answer whose only HEADERS frame carried its status: an
    /// HTTP/2 client gets them again as trailers, where gRPC reads the status.
    var trailersOnlyStatus: HTTPHeaders?

    init(relaying head: HTTPResponseHead, to request: HTTPRequestHead, clientVersion: HTTPVersion) {
        var head = head
        serverKeepsAlive = head.isKeepAlive
        clientKeepsAlive = head.isKeepAlive
        switch (clientVersion.major, clientVersion.minor) {
        case (1, 0):
            // An HTTP/1.0 client can't read chunked framing: the body goes raw and the close ends it.
            head.version = .http1_0
            if head.headers[canonicalForm: "transfer-encoding"].contains(where: { $0.lowercased() == "chunked" }) {
                head.headers.remove(name: "transfer-encoding")
                clientKeepsAlive = false
            }
            if !head.headers.contains(name: "content-length") { clientKeepsAlive = false }
        case (2, _):
            // Connection-specific in HTTP/2 (RFC 9113 §8.2.2): the stream's end frames the body.
            head.headers.remove(name: "transfer-encoding")
        default:
            break
        }
        declaredLength = Self.declaredBodyLength(head, request: request)
        if clientVersion.major == 2, head.headers.contains(name: "grpc-status") {
            trailersOnlyStatus = HTTPHeaders(head.headers.filter { $0.name.lowercased().hasPrefix("grpc-") })
        }
        self.head = head
    }

    /// The body length a response declares with Content-Length, when its body is framed so
    /// (not chunked, and not a response that has none).
    static func declaredBodyLength(_ head: HTTPResponseHead, request: HTTPRequestHead) -> Int? {
        guard request.method != .HEAD, head.status.code >= 200, head.status != .noContent, head.status != .notModified,
              !head.headers[canonicalForm: "transfer-encoding"].contains(where: { $0.lowercased() == "chunked" }),
              let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > 0 else { return nil }
        return length
    }
}
