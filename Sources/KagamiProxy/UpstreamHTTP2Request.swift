import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// What a server answered to a request Kagami made itself over HTTP/2.
public struct UpstreamHTTP2Answer: Sendable {
    public var status: Int
    public var headers: HeaderFields
    public var body: Data
    public var trailers: HeaderFields?
}

/// Why a request Kagami made itself got no answer.
public struct UpstreamHTTP2RequestFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
}

extension ProxyServer {
    /// One request Kagami makes on its own behalf (server reflection, for one) to `host:port`
    /// over HTTP/2: h2c with prior knowledge, or TLS offering h2 when `tls` is set (which needs
    /// interception's upstream TLS settings). It goes through the same gate as the exchanges the
    /// proxy relays (the upstream allow list, never Kagami's own listeners) and is not recorded.
    /// The answer's body is kept up to `bodyLimit` bytes; past that the request fails.
    public func upstreamHTTP2Request(
        host: String, port: Int, tls: Bool, path: String, headers: HeaderFields, body: Data,
        timeout: Duration = .seconds(10), bodyLimit: Int = 16 * 1024 * 1024
    ) async throws -> UpstreamHTTP2Answer {
        let loop = group.next()
        let tlsContext: NIOSSLContext?
        if tls {
            guard let context = poolConfiguration.tls?.http2Context else {
                throw UpstreamHTTP2RequestFailure(description: "HTTPS to \(Authority(host: host, port: port)) needs interception to be set up")
            }
            tlsContext = context
        } else {
            tlsContext = nil
        }
        let serverName: String? = IPAddressText.isIPAddress(host) ? nil : host
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(poolConfiguration.connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: serverName))
                    }
                    // HTTP/2 from the start: the server's SETTINGS may come before connect() returns.
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init(), position: .last
                    ) { pushed in pushed.close() }
                }
            }
        let channel = try await gate.connect(bootstrap, host: host, port: port, on: loop).get()
        let answer = loop.makePromise(of: UpstreamHTTP2Answer.self)
        let deadline = loop.scheduleTask(in: TimeAmount(timeout)) {
            answer.fail(UpstreamHTTP2RequestFailure(description: "\(Authority(host: host, port: port)) did not answer within \(timeout)"))
        }
        var head = HTTPHeaders([("host", Authority(host: host, port: port).description)])
        for field in headers.fields { head.add(name: field.name, value: field.value) }
        let requestHead = HTTPRequestHead(version: .http2, method: .POST, uri: path, headers: head)
        let requestBody = ByteBuffer(bytes: body)
        let protocolName: HTTP2FramePayloadToHTTP1ClientCodec.HTTPProtocol = tls ? .https : .http
        loop.execute {
            do {
                let multiplexer = try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
                let stream = loop.makePromise(of: (any Channel).self)
                multiplexer.createStreamChannel(promise: stream) { streamChannel in
                    streamChannel.eventLoop.makeCompletedFuture {
                        try streamChannel.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: protocolName))
                        try streamChannel.pipeline.syncOperations.addHandler(UpstreamAnswerCollector(answer: answer, bodyLimit: bodyLimit))
                    }
                }
                stream.futureResult.whenComplete { result in
                    switch result {
                    case .success(let streamChannel):
                        streamChannel.write(HTTPClientRequestPart.head(requestHead), promise: nil)
                        streamChannel.write(HTTPClientRequestPart.body(.byteBuffer(requestBody)), promise: nil)
                        streamChannel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                    case .failure(let error):
                        answer.fail(error)
                    }
                }
            } catch {
                answer.fail(error)
            }
        }
        channel.closeFuture.whenComplete { _ in
            answer.fail(UpstreamHTTP2RequestFailure(description: "\(Authority(host: host, port: port)) closed the connection before answering"))
        }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        return try await answer.futureResult.get()
    }
}

/// Gathers one stream's answer: head, body (bounded), trailers.
private final class UpstreamAnswerCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let answer: EventLoopPromise<UpstreamHTTP2Answer>
    let bodyLimit: Int
    private var head: HTTPResponseHead?
    private var body = Data()

    init(answer: EventLoopPromise<UpstreamHTTP2Answer>, bodyLimit: Int) {
        self.answer = answer
        self.bodyLimit = bodyLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.status.code >= 200 { self.head = head }
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= bodyLimit else {
                answer.fail(UpstreamHTTP2RequestFailure(description: "the answer is over \(bodyLimit) bytes"))
                context.close(promise: nil)
                return
            }
            body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end(let trailers):
            guard let head else {
                answer.fail(UpstreamHTTP2RequestFailure(description: "the stream ended without a response"))
                return
            }
            answer.succeed(UpstreamHTTP2Answer(
                status: Int(head.status.code), headers: HeaderFields(head.headers.map { (name: $0.name, value: $0.value) }), body: body,
                trailers: trailers.map { HeaderFields($0.map { (name: $0.name, value: $0.value) }) }))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answer.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer.fail(UpstreamHTTP2RequestFailure(description: "the stream closed before the answer ended"))
        context.fireChannelInactive()
    }
}
