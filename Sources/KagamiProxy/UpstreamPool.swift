import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Keep-alive connections to servers, one pool per event loop so that a client connection and
/// its server connections share a thread and never need a lock.
final class UpstreamPool {
    struct Key: Hashable {
        var host: String
        var port: Int
        var tls: Bool
    }

    struct Configuration {
        var connectTimeout: TimeAmount
        var idleTimeout: TimeAmount
        var maximumIdlePerServer: Int
        var decoderLimits: NIOHTTPDecoderLimitConfiguration
        /// How to speak TLS to servers; nil when HTTPS interception is off.
        var tls: UpstreamTLS?
        var gate: UpstreamGate
    }

    enum HandlerName {
        static let encoder = "kagami.upstream.encoder"
        static let decoder = "kagami.upstream.decoder"
    }

    private let eventLoop: any EventLoop
    private let configuration: Configuration
    private var idle: [Key: [UpstreamConnection]] = [:]

    init(eventLoop: any EventLoop, configuration: Configuration) {
        self.eventLoop = eventLoop
        self.configuration = configuration
    }

    /// Hands out an idle connection to `key`, or opens one. `completion` runs on the loop.
    func acquire(_ key: Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        while let connection = idle[key]?.popLast() {
            connection.idleTimeout?.cancel()
            connection.idleTimeout = nil
            connection.handler.onClose = nil
            if connection.channel.isActive {
                connection.isReused = true
                completion(.success(connection))
                return
            }
        }
        let limits = configuration.decoderLimits
        let tlsContext = key.tls ? configuration.tls?.context : nil
        if key.tls && tlsContext == nil {
            completion(.failure(InterceptionError("HTTPS to \(key.host):\(key.port) needs interception to be set up")))
            return
        }
        let sniName: String? = IPAddressText.isIPAddress(key.host) ? nil : key.host
        let verifiesNames = !(configuration.tls?.verificationDisabled ?? true)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tlsContext {
                        try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: sniName))
                        try sync.addHandler(UpstreamTLSHandshake(host: key.host, checksName: verifiesNames, eventLoop: channel.eventLoop))
                    }
                    var encoderConfiguration = HTTPRequestEncoder.Configuration()
                    encoderConfiguration.automaticallySetFramingHeaders = false
                    try sync.addHandler(HTTPRequestEncoder(configuration: encoderConfiguration), name: HandlerName.encoder)
                    // After a 101 the decoder stops and, once removed, hands the bytes that came
                    // with the 101 (the new protocol's first frames) to the relay.
                    try sync.addHandler(ByteToMessageHandler(HTTPResponseDecoder(
                        leftOverBytesStrategy: .forwardBytes,
                        informationalResponseStrategy: .forward,
                        limitConfiguration: limits
                    )), name: HandlerName.decoder)
                    try sync.addHandler(UpstreamHandler())
                }
            }
        configuration.gate.connect(bootstrap, host: key.host, port: key.port, on: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                let opened = result.flatMap { channel in
                    Result {
                        let handler = try channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                        return UpstreamConnection(key: key, channel: channel, handler: handler)
                    }
                }
                // A TLS connection is handed out once its handshake is done: the exchange's
                // `connected` includes it, and `ssl` says how long it took.
                guard case .success(let connection) = opened,
                      let handshake = try? connection.channel.pipeline.syncOperations.handler(type: UpstreamTLSHandshake.self) else {
                    completion(opened)
                    return
                }
                handshake.completed.futureResult.assumeIsolated().whenComplete { outcome in
                    switch outcome {
                    case .success(let duration):
                        connection.handshakeDuration = duration
                        completion(.success(connection))
                    case .failure(let error):
                        connection.channel.close(promise: nil)
                        completion(.failure(error))
                    }
                }
            }
    }

    /// Takes back a connection whose exchange ended cleanly; closes it when the pool is full.
    func release(_ connection: UpstreamConnection) {
        connection.handler.delegate = nil
        connection.handler.resumeReads()
        guard connection.channel.isActive, idle[connection.key, default: []].count < configuration.maximumIdlePerServer else {
            connection.channel.close(promise: nil)
            return
        }
        idle[connection.key, default: []].append(connection)
        let key = connection.key
        let forget: () -> Void = { [weak self, weak connection] in
            guard let self, let connection else { return }
            self.idle[key]?.removeAll { $0 === connection }
        }
        connection.handler.onClose = forget
        connection.idleTimeout = eventLoop.assumeIsolated().scheduleTask(in: configuration.idleTimeout) {
            connection.channel.close(promise: nil)
        }
    }

    func closeAll() {
        for connection in idle.values.joined() {
            connection.idleTimeout?.cancel()
            connection.channel.close(promise: nil)
        }
        idle.removeAll()
    }
}
