import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Where an exchange's server connections come from and where they go back once it ended
/// cleanly: a proxy's pool, or a test's servers fed with bytes.
protocol UpstreamSource: AnyObject {
    /// Hands out a connection for `key`, reused or new; `completion` runs on the loop.
    func acquire(_ key: UpstreamPool.Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void)
    /// Takes back a connection whose exchange ended cleanly.
    func release(_ connection: UpstreamConnection)
}

/// Keep-alive connections to servers, one pool per event loop so that a client connection and
/// its server connections share a thread and never need a lock.
final class UpstreamPool: UpstreamSource {
    struct Key: Hashable {
        var host: String
        var port: Int
        var tls: Bool
        /// Speak HTTP/2 if the server will: offered by ALPN over TLS, with prior knowledge in
        /// clear text. Asked for when the client's request is HTTP/2.
        var http2 = false
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
    /// HTTP/2 connections, one per server, whose streams the exchanges share.
    private var sessions: [Key: UpstreamHTTP2Session] = [:]
    /// Servers in clear text that did not answer HTTP/2 with prior knowledge: their exchanges go
    /// in HTTP/1.1 without asking again.
    private var clearTextHTTP1Only: Set<Key> = []

    init(eventLoop: any EventLoop, configuration: Configuration) {
        self.eventLoop = eventLoop
        self.configuration = configuration
    }

    /// Hands out an idle connection to `key`, or opens one. `completion` runs on the loop.
    func acquire(_ requested: Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        var adjusted = requested
        if adjusted.http2, !adjusted.tls, clearTextHTTP1Only.contains(adjusted) { adjusted.http2 = false }
        let key = adjusted
        if key.http2, let session = sessions[key] {
            if session.isActive {
                session.openStream(reused: true, completion: completion)
                return
            }
            sessions[key] = nil
        }
        while let connection = idle[key]?.popLast() {
            connection.idleSince = nil
            if connection.channel.isActive {
                connection.isReused = true
                completion(.success(connection))
                return
            }
        }
        let limits = configuration.decoderLimits
        let tlsContext = key.tls ? (key.http2 ? configuration.tls?.http2Context : configuration.tls?.context) : nil
        if key.tls && tlsContext == nil {
            completion(.failure(InterceptionError("HTTPS to \(Authority(host: key.host, port: key.port)) needs interception to be set up")))
            return
        }
        let sniName: String? = IPAddressText.isIPAddress(key.host) ? nil : key.host
        let verifiesNames = !(configuration.tls?.verificationDisabled ?? true)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tlsContext {
                        try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: sniName))
                        try sync.addHandler(UpstreamTLSHandshake(host: key.host, checksName: verifiesNames, eventLoop: channel.eventLoop))
                    }
                    // Offering HTTP/2, the protocol is known once ALPN has settled (or, in clear
                    // text, is HTTP/2 from the first byte): the handlers come then.
                    if !key.http2 { try Self.addHTTP1Handlers(sync, limits: limits) }
                }
            }
        configuration.gate.connect(bootstrap, host: key.host, port: key.port, on: eventLoop)
            .assumeIsolated()
            .whenComplete { [weak self] result in
                switch result {
                case .success(let channel): self?.opened(channel, key: key, completion: completion)
                case .failure(let error): completion(.failure(error))
                }
            }
    }

    static func addHTTP1Handlers(_ sync: ChannelPipeline.SynchronousOperations, limits: NIOHTTPDecoderLimitConfiguration) throws {
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

    /// A new connection is handed out once its TLS handshake is done (the exchange's
    /// `connected` includes it, and `ssl` says how long it took), as HTTP/2 when ALPN chose h2.
    private func opened(_ channel: any Channel, key: Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        let sync = channel.pipeline.syncOperations
        let handshake = try? sync.handler(type: UpstreamTLSHandshake.self)
        let ready: (TimeAmount?) -> Void = { [weak self] duration in
            guard let self else {
                channel.close(promise: nil)
                return
            }
            if key.http2, !key.tls {
                self.probeClearText(channel, key: key, completion: completion)
                return
            }
            if key.http2, handshake?.negotiatedProtocol == "h2" {
                self.startSession(on: channel, key: key, handshake: duration, completion: completion)
                return
            }
            do {
                if key.http2 { try Self.addHTTP1Handlers(sync, limits: self.configuration.decoderLimits) }
                let connection = UpstreamConnection(key: key, channel: channel, handler: try sync.handler(type: UpstreamHandler.self))
                connection.handshakeDuration = duration
                completion(.success(connection))
            } catch {
                channel.close(promise: nil)
                completion(.failure(error))
            }
        }
        guard let handshake else { return ready(nil) }
        handshake.completed.futureResult.assumeIsolated().whenComplete { outcome in
            switch outcome {
            case .success(let duration):
                ready(duration)
            case .failure(let error):
                channel.close(promise: nil)
                completion(.failure(error))
            }
        }
    }

    /// In clear text nothing negotiates HTTP/2: Kagami opens with the preface and waits for the
    /// server's SETTINGS before any stream goes out. A server that answers otherwise is marked
    /// HTTP/1.1-only and the exchange goes to it in HTTP/1.1 on a new connection.
    private func probeClearText(_ channel: any Channel, key: Key, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        let probe = ClearTextHTTP2Probe(eventLoop: channel.eventLoop, timeout: configuration.connectTimeout)
        let session: UpstreamHTTP2Session
        do {
            try channel.pipeline.syncOperations.addHandler(probe, position: .first)
            session = try UpstreamHTTP2Session.start(on: channel, key: key)
        } catch {
            channel.close(promise: nil)
            completion(.failure(error))
            return
        }
        probe.speaksHTTP2.futureResult.assumeIsolated().whenSuccess { [weak self] speaksHTTP2 in
            guard let self else {
                channel.close(promise: nil)
                return
            }
            if speaksHTTP2, channel.isActive {
                self.share(session, handshake: nil, completion: completion)
                return
            }
            channel.close(promise: nil)
            var http1 = key
            http1.http2 = false
            self.clearTextHTTP1Only.insert(key)
            self.acquire(http1, completion: completion)
        }
    }

    private func startSession(on channel: any Channel, key: Key, handshake: TimeAmount?, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        let session: UpstreamHTTP2Session
        do {
            session = try UpstreamHTTP2Session.start(on: channel, key: key)
        } catch {
            channel.close(promise: nil)
            completion(.failure(error))
            return
        }
        share(session, handshake: handshake, completion: completion)
    }

    /// Keeps a session for the server's next exchanges and opens the first one's stream.
    private func share(_ session: UpstreamHTTP2Session, handshake: TimeAmount?, completion: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        let key = session.key
        let channel = session.channel
        session.handshakeDuration = handshake
        sessions[key] = session
        channel.closeFuture.assumeIsolated().whenComplete { [weak self, weak session] _ in
            guard let self, let session, self.sessions[key] === session else { return }
            self.sessions[key] = nil
        }
        session.openStream(reused: false, completion: completion)
    }

    /// Takes back a connection whose exchange ended cleanly; closes it when the pool is full.
    /// A stream is done with once its exchange is: its connection stays for the next ones.
    func release(_ connection: UpstreamConnection) {
        if connection.isStream {
            connection.handler.delegate = nil
            connection.channel.close(promise: nil)
            return
        }
        connection.handler.delegate = nil
        connection.handler.resumeReads()
        guard connection.channel.isActive, idle[connection.key, default: []].count < configuration.maximumIdlePerServer else {
            connection.channel.close(promise: nil)
            return
        }
        idle[connection.key, default: []].append(connection)
        if connection.idleTimer == nil {
            let key = connection.key
            let idleTimeout = configuration.idleTimeout
            connection.handler.onClose = { [weak self, weak connection] in
                guard let self, let connection else { return }
                self.idle[key]?.removeAll { $0 === connection }
            }
            // Used again and again, the connection costs no timer work: it only notes when it
            // became idle.
            connection.idleTimer = MovingDeadlineTimer(
                on: eventLoop,
                deadline: { [weak connection] in connection?.idleSince.map { $0 + idleTimeout } },
                expired: { [weak connection] in connection?.channel.close(promise: nil) })
        }
        connection.idleSince = eventLoop.now
        connection.idleTimer?.start()
    }

    func closeAll() {
        for connection in idle.values.joined() {
            connection.idleTimer?.cancel()
            connection.channel.close(promise: nil)
        }
        idle.removeAll()
        for session in sessions.values { session.channel.close(promise: nil) }
        sessions.removeAll()
    }
}
