import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 connection to a server, shared by the exchanges on its event loop: each exchange
/// gets a stream of its own, with `HTTP2FramePayloadToHTTP1ClientCodec` and an
/// `UpstreamHandler` on it, so an exchange drives a stream as it drives an HTTP/1.1
/// connection. Used when the client's request is HTTP/2: over TLS when the server chooses h2 by
/// ALPN, in clear text (h2c) with prior knowledge. The server's own pushes are refused.
final class UpstreamHTTP2Session {
    let key: UpstreamPool.Key
    /// The connection the streams share.
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    /// How long its TLS handshake took, reported by the first exchange only.
    var handshakeDuration: TimeAmount?
    /// What broke the connection (bad HPACK, a frame against the protocol, a flood of control
    /// frames): its streams' exchanges end with it.
    private(set) var failure: (any Error)?

    private init(key: UpstreamPool.Key, channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer) {
        self.key = key
        self.channel = channel
        self.multiplexer = multiplexer
    }

    /// Adds HTTP/2 to a connection's pipeline (at its end) and makes the session.
    static func start(on channel: any Channel, key: UpstreamPool.Key) throws -> UpstreamHTTP2Session {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
        ]
        var streams = NIOHTTP2Handler.StreamConfiguration()
        streams.targetWindowSize = 1 << 20
        let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: connection, streamConfiguration: streams, position: .last
        ) { pushed in
            // Push is off; a server that opens a stream anyway gets it closed.
            pushed.close()
        }
        let session = UpstreamHTTP2Session(key: key, channel: channel, multiplexer: multiplexer)
        // Keeps the error the HTTP/2 handler reported for the connection (bad HPACK, a frame
        // against the protocol, a flood of control frames) for the streams' exchanges.
        try channel.pipeline.syncOperations.addHandler(HTTP2ConnectionErrorHandler { [weak session] error in
            if session?.failure == nil { session?.failure = error }
        })
        return session
    }

    var isActive: Bool { channel.isActive }

    /// A new stream for one exchange.
    func openStream(reused: Bool, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        let promise = channel.eventLoop.makePromise(of: (any Channel).self)
        let httpProtocol: HTTP2FramePayloadToHTTP1ClientCodec.HTTPProtocol = key.tls ? .https : .http
        multiplexer.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                let handlers = stream.pipeline.syncOperations
                try handlers.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: httpProtocol))
                try handlers.addHandler(UpstreamHandler())
            }
        }
        let key = self.key
        let handshake = reused ? nil : handshakeDuration
        promise.futureResult.assumeIsolated().whenComplete { [weak self] result in
            completion(result.flatMap { stream in
                Result {
                    let handler = try stream.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                    handler.closeReason = { [weak self] in self?.failure.map(UpstreamHTTP2Failure.init) }
                    let connection = UpstreamConnection(key: key, channel: stream, handler: handler)
                    connection.isStream = true
                    connection.isReused = reused
                    connection.handshakeDuration = handshake
                    return connection
                }
            })
        }
    }
}

/// The HTTP/2 connection a stream was on broke: what its exchange ends with.
struct UpstreamHTTP2Failure: Error, CustomStringConvertible {
    let underlying: any Error
    var description: String { "broke HTTP/2 on the connection: \(underlying)" }
}
