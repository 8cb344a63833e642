import NIOCore
import NIOHTTP1

/// Writes responses to the client exactly as the server framed them: headers in their order and
/// spelling, chunked only when the response said so (or when a close-delimited body has to be
/// framed for a keep-alive HTTP/1.1 client), and no body for HEAD, 1xx, 204 and 304. A 101 gets
/// no framing at all: the bytes after it belong to the protocol it switches to.
///
/// It watches request heads go by (inbound) to know which responses answer a HEAD; pipelined
/// requests are answered in order, so a queue suffices.
final class ProxyResponseEncoder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = ByteBuffer

    private enum Framing { case none, raw, chunked }
    private var framing = Framing.none
    private var requestMethods = CircularBuffer<HTTPMethod>(initialCapacity: 4)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            requestMethods.append(head.method)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let code = head.status.code
            let informational = code >= 100 && code < 200 && code != 101
            let method = informational ? nil : requestMethods.popFirst()
            let bodyAllowed = !(informational || code == 101 || method == .HEAD || code == 204 || code == 304)
            if !bodyAllowed {
                framing = .none
            } else if head.headers[canonicalForm: "transfer-encoding"].last?.lowercased() == "chunked" {
                framing = .chunked
            } else if head.headers.contains(name: "content-length") {
                framing = .raw
            } else if head.version == .http1_1 {
                head.headers.add(name: "Transfer-Encoding", value: "chunked")
                framing = .chunked
            } else {
                framing = .raw
            }
            var buffer = context.channel.allocator.buffer(capacity: 256)
            buffer.writeString("HTTP/\(head.version.major).\(head.version.minor) \(code) \(head.status.reasonPhrase)\r\n")
            for (name, value) in head.headers {
                buffer.writeString(name)
                buffer.writeStaticString(": ")
                buffer.writeString(value)
                buffer.writeStaticString("\r\n")
            }
            buffer.writeStaticString("\r\n")
            context.write(wrapOutboundOut(buffer), promise: promise)
        case .body(let part):
            guard case .byteBuffer(let body) = part else {
                promise?.fail(ChannelError.operationUnsupported)
                return
            }
            switch framing {
            case .none:
                promise?.succeed()
            case .raw:
                context.write(wrapOutboundOut(body), promise: promise)
            case .chunked:
                guard body.readableBytes > 0 else {
                    promise?.succeed()
                    return
                }
                var size = context.channel.allocator.buffer(capacity: 12)
                size.writeString(String(body.readableBytes, radix: 16))
                size.writeStaticString("\r\n")
                context.write(wrapOutboundOut(size), promise: nil)
                context.write(wrapOutboundOut(body), promise: nil)
                var crlf = context.channel.allocator.buffer(capacity: 2)
                crlf.writeStaticString("\r\n")
                context.write(wrapOutboundOut(crlf), promise: promise)
            }
        case .end(let trailers):
            var buffer = context.channel.allocator.buffer(capacity: framing == .chunked ? 64 : 0)
            if framing == .chunked {
                buffer.writeStaticString("0\r\n")
                for (name, value) in trailers ?? [:] {
                    buffer.writeString("\(name): \(value)\r\n")
                }
                buffer.writeStaticString("\r\n")
            }
            framing = .none
            context.write(wrapOutboundOut(buffer), promise: promise)
        }
    }
}
