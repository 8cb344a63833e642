import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import Synchronization

/// Repeat and Repeat Advanced: a recorded request sent again, `count` times with up to
/// `concurrency` in flight, through a Kagami proxy. Going through the proxy's own listening port
/// means every repeat runs the same rule pipeline (and breakpoints) as live traffic and is
/// recorded like it; the `X-Kagami-Repeat-Of` header it carries is taken off by the proxy and
/// stored as the new exchange's `repeatOf`. Requests go in absolute form, https ones too (the
/// proxy makes the TLS connection to the server itself), each on a connection of its own: in
/// HTTP/2 (h2c with prior knowledge, the URL in `:path`) when the exchange was HTTP/2, so the
/// proxy speaks HTTP/2 to the server too, else in HTTP/1.1. An answer the proxy made itself
/// because it could not reach the server (it carries `Proxy-Status` with an `error`,
/// RFC 9209) is a failed send, not a status.
public struct RequestRepeater: Sendable {
    public struct Plan: Sendable, Hashable {
        public var count: Int
        public var concurrency: Int
        /// Pause before each request of a sender after its first.
        public var delay: Duration

        public static let countRange = 1...10_000
        public static let concurrencyRange = 1...64
        public static let delayRange = 0...60_000

        /// Refuses values outside the ranges, naming the field.
        public init(count: Int = 1, concurrency: Int = 1, delayMilliseconds: Int = 0) throws(RepeatError) {
            guard Self.countRange.contains(count) else { throw .outOfRange(field: "count", value: count, range: Self.countRange) }
            guard Self.concurrencyRange.contains(concurrency) else {
                throw .outOfRange(field: "concurrency", value: concurrency, range: Self.concurrencyRange)
            }
            guard Self.delayRange.contains(delayMilliseconds) else {
                throw .outOfRange(field: "delayMs", value: delayMilliseconds, range: Self.delayRange)
            }
            self.count = count
            self.concurrency = concurrency
            self.delay = .milliseconds(delayMilliseconds)
        }
    }

    /// How to reach the proxy.
    public enum Route: Sendable, Hashable {
        /// A forward proxy: the request line carries the absolute URL.
        case forwardProxy(host: String, port: Int)
        /// A reverse proxy listening on `host:port` for an upstream whose base path is
        /// `upstreamBasePath`, which recorded targets start with.
        case reverseProxy(host: String, port: Int, upstreamBasePath: String)
    }

    public let route: Route
    public var responseTimeout: TimeAmount = .seconds(60)
    private let group: any EventLoopGroup

    public init(route: Route, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.route = route
        self.group = group
    }

    /// Sends `request` (the one stored as `id`) per `plan`; each send's outcome is in the summary.
    public func run(_ request: FlowRequest, of id: UUID, plan: Plan) async throws(RepeatError) -> RepeatSummary {
        let outgoing = try outgoingRequest(request, repeatOf: id)
        let next = NextIndex(limit: plan.count)
        let results = await withTaskGroup(of: [RepeatSummary.Send].self) { group in
            for _ in 0..<min(plan.concurrency, plan.count) {
                group.addTask {
                    var sends: [RepeatSummary.Send] = []
                    var first = true
                    while next.take() {
                        if !first, plan.delay > .zero { try? await Task.sleep(for: plan.delay) }
                        first = false
                        sends.append(await self.send(outgoing))
                    }
                    return sends
                }
            }
            var all: [RepeatSummary.Send] = []
            for await sends in group { all += sends }
            return all
        }
        return RepeatSummary(repeatOf: id, sends: results)
    }

    struct Outgoing: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer?
        /// Sent on an HTTP/2 stream instead of an HTTP/1.1 connection.
        var http2 = false
    }

    private func send(_ outgoing: Outgoing) async -> RepeatSummary.Send {
        let start = ContinuousClock.now
        let (host, port): (String, Int)
        switch route {
        case .forwardProxy(let h, let p): (host, port) = (h, p)
        case .reverseProxy(let h, let p, _): (host, port) = (h, p)
        }
        do {
            let status = try await Self.exchange(outgoing, host: host, port: port, timeout: responseTimeout, group: group)
            return RepeatSummary.Send(status: status, error: nil, duration: start.duration(to: .now))
        } catch {
            return RepeatSummary.Send(status: nil, error: "\(error)", duration: start.duration(to: .now))
        }
    }

    /// One request on a connection of its own; the status once the whole response has arrived.
    private static func exchange(_ outgoing: Outgoing, host: String, port: Int, timeout: TimeAmount, group: any EventLoopGroup) async throws -> Int {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if outgoing.http2 {
                        // The proxy opens no streams of its own: any it opened would be closed.
                        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                            mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                        ) { pushed in pushed.close() }
                    } else {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    }
                }
            }
            .connect(host: host, port: port)
            .get()
        let promise = channel.eventLoop.makePromise(of: Int.self)
        let result: Int
        do {
            try await channel.eventLoop.submit {
                let timer = channel.eventLoop.scheduleTask(in: timeout) {
                    promise.fail(RepeatSendError("no complete response within \(timeout.nanoseconds / 1_000_000_000) s"))
                }
                promise.futureResult.whenComplete { _ in timer.cancel() }
                guard outgoing.http2 else {
                    try channel.pipeline.syncOperations.addHandler(ResponseReader(promise: promise))
                    Self.write(outgoing, to: channel)
                    return
                }
                let multiplexer = try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
                let stream = channel.eventLoop.makePromise(of: (any Channel).self)
                multiplexer.createStreamChannel(promise: stream) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        // The connection to the proxy is clear text; the URL in `:path` names the server.
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .http))
                        try stream.pipeline.syncOperations.addHandler(ResponseReader(promise: promise))
                    }
                }
                stream.futureResult.whenComplete { opened in
                    switch opened {
                    case .success(let stream): Self.write(outgoing, to: stream)
                    case .failure(let error): promise.fail(error)
                    }
                }
            }.get()
            result = try await promise.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
        try? await channel.close()
        return result
    }

    private static func write(_ outgoing: Outgoing, to channel: any Channel) {
        channel.write(HTTPClientRequestPart.head(outgoing.head), promise: nil)
        if let body = outgoing.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    /// Framing headers are written afresh for the stored body.
    static let framingHeaders: Set<String> = ["content-length", "transfer-encoding", "connection", "proxy-connection", "keep-alive", "te", "upgrade", "x-kagami-repeat-of"]

    func outgoingRequest(_ request: FlowRequest, repeatOf id: UUID) throws(RepeatError) -> Outgoing {
        guard request.method != "CONNECT", request.scheme == "http" || request.scheme == "https" else { throw .notRepeatable(request.url) }
        let uri: String
        switch route {
        case .forwardProxy:
            uri = request.url
        case .reverseProxy(_, _, let basePath):
            let base = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
            let target = request.target.hasPrefix(base) ? String(request.target.dropFirst(base.count)) : request.target
            uri = target.hasPrefix("/") ? target : "/" + target
        }
        var headers = HTTPHeaders()
        for field in request.headers where !Self.framingHeaders.contains(field.name.lowercased()) {
            headers.add(name: field.name, value: field.value)
        }
        if !headers.contains(name: "host") { headers.add(name: "Host", value: request.authority) }
        let hasBody = request.body.keptCount > 0 || request.headers.contains("Content-Length") || request.headers.contains("Transfer-Encoding")
        if hasBody { headers.add(name: "Content-Length", value: String(request.body.keptCount)) }
        headers.add(name: Flow.repeatHeaderName, value: id.uuidString)
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: uri, headers: headers)
        return Outgoing(
            head: head, body: request.body.keptCount == 0 ? nil : ByteBuffer(bytes: request.body.data),
            http2: request.version.hasPrefix("HTTP/2"))
    }
}

/// Reads one response to its end and reports its status, or the proxy's error when the proxy
/// answered in the server's place.
private final class ResponseReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let promise: EventLoopPromise<Int>
    private var status: Int?
    /// The body of an answer the proxy made because the server could not be reached: its message.
    private var proxyError: ByteBuffer?
    private var done = false

    init(promise: EventLoopPromise<Int>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // 1xx answers come before the real one.
            if head.status.code >= 200 || head.status.code == 101 { status = Int(head.status.code) }
            if Self.reportsProxyError(head.headers) { proxyError = ByteBuffer() }
        case .body(var bytes):
            proxyError?.writeBuffer(&bytes)
        case .end:
            guard let status else { return }
            done = true
            if let proxyError {
                let message = String(buffer: proxyError).trimmingCharacters(in: .whitespacesAndNewlines)
                promise.fail(RepeatSendError("the proxy answered \(status): \(message.isEmpty ? "(no message)" : message)"))
            } else {
                promise.succeed(status)
            }
        }
    }

    /// `Proxy-Status: kagami; error=tls_protocol_error` (RFC 9209): some proxy on the way failed.
    static func reportsProxyError(_ headers: HTTPHeaders) -> Bool {
        headers["proxy-status"].contains { value in
            value.split(separator: ";").dropFirst().contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("error=") }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(RepeatSendError("the proxy closed the connection before the response ended"))
        }
        context.fireChannelInactive()
    }
}

struct RepeatSendError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Hands out the next send to whichever worker asks first.
private final class NextIndex: Sendable {
    private let remaining: Mutex<Int>
    init(limit: Int) { remaining = Mutex(limit) }
    func take() -> Bool {
        remaining.withLock { value in
            guard value > 0 else { return false }
            value -= 1
            return true
        }
    }
}

/// What a repeat run came to: counts by status and the spread of durations.
public struct RepeatSummary: Sendable {
    public struct Send: Sendable {
        public var status: Int?
        public var error: String?
        public var duration: Duration
    }

    public var repeatOf: UUID
    public var sends: [Send]

    public var countsByStatus: [(status: Int, count: Int)] {
        Dictionary(grouping: sends.compactMap(\.status), by: { $0 }).map { (status: $0.key, count: $0.value.count) }.sorted { $0.status < $1.status }
    }

    public var failures: Int { sends.filter { $0.status == nil }.count }

    /// Milliseconds: fastest, median, slowest; nil when nothing was sent.
    public var durations: (min: Double, median: Double, max: Double)? {
        // Microseconds are as fine as a round trip through the proxy is worth telling apart.
        let sorted = sends.map { send in
            ((Double(send.duration.components.seconds) * 1000 + Double(send.duration.components.attoseconds) / 1e15) * 1000).rounded() / 1000
        }.sorted()
        guard let first = sorted.first, let last = sorted.last else { return nil }
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return (first, median, last)
    }

    /// The first failure's message, to say why sends failed.
    public var firstError: String? { sends.lazy.compactMap(\.error).first }

    /// `100 sent: 200 ×98, 503 ×2; duration min 3.1 ms, median 4.0 ms, max 12.7 ms`
    public var text: String {
        var parts = countsByStatus.map { "\($0.status) ×\($0.count)" }
        if failures > 0 { parts.append("failed ×\(failures)") }
        var line = "\(sends.count) sent: " + (parts.isEmpty ? "nothing" : parts.joined(separator: ", "))
        if let durations {
            line += String(format: "; duration min %.1f ms, median %.1f ms, max %.1f ms", durations.min, durations.median, durations.max)
        }
        if let firstError { line += "\nfirst failure: \(firstError)" }
        return line
    }
}

public enum RepeatError: Error, Sendable, Hashable, CustomStringConvertible {
    case outOfRange(field: String, value: Int, range: ClosedRange<Int>)
    case notRepeatable(String)

    public var description: String {
        switch self {
        case .outOfRange(let field, let value, let range):
            "\(field) must be between \(range.lowerBound) and \(range.upperBound), not \(value)"
        case .notRepeatable(let url):
            "\(url) can't be sent again (a CONNECT tunnel, or not a URL)"
        }
    }
}
