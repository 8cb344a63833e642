import Foundation
import KagamiFlow
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing
@testable import KagamiProxy

/// The relay of an upgraded connection on two embedded channels, with the WebSocket capture
/// beside it: bytes pass unchanged whatever they are, messages reach the sink before the bytes
/// are flushed on, and a peer breaking the protocol stops the capture, not the relay.
@Suite struct WebSocketRelayTests {
    /// Keeps what the recording hook hands it.
    final class Sink: FlowSink {
        let flows = Mutex<[Flow]>([])
        let messages = Mutex<[WebSocketMessage]>([])
        let behind = Mutex(false)
        var isBehind: Bool { behind.withLock { $0 } }
        func record(_ flow: Flow) { flows.withLock { $0.append(flow) } }
        func record(messages: [WebSocketMessage], of flowID: UUID) { self.messages.withLock { $0 += messages } }
    }

    /// Counts the reads that get past the relay to the socket.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Never
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    struct Relay {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let sink = Sink()
        let clientReads = ReadCounter()

        init(extensions: String? = nil) throws {
            try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
            let target = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 2, path: "/chat")
            let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/chat", headers: ["Upgrade": "websocket", "Connection": "Upgrade"])
            var recorder = FlowRecorder(mode: .reverse, clientAddress: nil, target: target, head: request, captureLimit: 1 << 20, allocator: ByteBufferAllocator())
            var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
            if let extensions { headers.add(name: "Sec-WebSocket-Extensions", value: extensions) }
            let response = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers)
            recorder.responseHead(response)
            let capture = try #require(WebSocketCapture(recorder: recorder, response: response, hooks: ExchangeHooks(list: [RecordingHook(sink: sink)]), captureLimit: 1 << 20))
            let clientRelay = TunnelRelayHandler()
            let serverRelay = TunnelRelayHandler()
            TunnelRelayHandler.join(clientRelay, serverRelay)
            clientRelay.capture = (capture, .send)
            serverRelay.capture = (capture, .receive)
            clientRelay.onFinished = capture.finish
            serverRelay.onFinished = capture.finish
            try client.pipeline.syncOperations.addHandlers([clientReads, clientRelay])
            try server.pipeline.syncOperations.addHandler(serverRelay)
        }

        /// The client leaves: the relay closes the server side once what it queued went out.
        func closeClient() throws {
            _ = try client.finish()
            #expect(!server.isActive)
        }

        /// `bytes` arrive from `side`; returns what left on the other side.
        func pass(_ bytes: [UInt8], from side: EmbeddedChannel) throws -> [UInt8] {
            let other = side === client ? server : client
            try side.writeInbound(ByteBuffer(bytes: bytes))
            side.pipeline.fireChannelReadComplete()
            var out: [UInt8] = []
            while let buffer = try other.readOutbound(as: ByteBuffer.self) { out += buffer.readableBytesView }
            return out
        }
    }

    static func frame(_ opcode: UInt8, _ payload: [UInt8], masked: Bool) -> [UInt8] {
        WebSocketMessageReaderTests.frame(opcode, payload, mask: masked ? [1, 2, 3, 4] : nil)
    }

    @Test func bytesPassUnchangedAndMessagesAreKeptBothWays() throws {
        let relay = try Relay()
        // The handshake flow was recorded when the connection switched.
        #expect(relay.sink.flows.withLock { $0.count } == 1)
        let hello = Self.frame(1, Array("hello".utf8), masked: true)
        // Split mid-frame: the first piece completes no message.
        #expect(try relay.pass(Array(hello.prefix(4)), from: relay.client) == Array(hello.prefix(4)))
        #expect(relay.sink.messages.withLock { $0.isEmpty })
        #expect(try relay.pass(Array(hello.dropFirst(4)), from: relay.client) == Array(hello.dropFirst(4)))
        let echo = Self.frame(1, Array("hello".utf8), masked: false)
        #expect(try relay.pass(echo, from: relay.server) == echo)
        let close = Self.frame(8, [0x03, 0xE8], masked: true)
        #expect(try relay.pass(close, from: relay.client) == close)
        let messages = relay.sink.messages.withLock { $0 }
        #expect(messages.map(\.direction) == [.send, .receive, .send])
        #expect(messages.map(\.opcode) == [.text, .text, .close])
        #expect(messages.first?.text == "hello")
        try relay.closeClient()
        let flows = relay.sink.flows.withLock { $0 }
        #expect(flows.count == 2)
        #expect(flows.last?.id == flows.first?.id)
        #expect(flows.last?.timings.end != nil)
        #expect(flows.last?.error == nil)
    }

    /// An unmasked client frame breaks RFC 6455: the bytes still reach the server as sent, the
    /// capture stops for good, and the flow says what happened and where.
    @Test func aBrokenRuleStopsTheCaptureNotTheRelay() throws {
        let relay = try Relay()
        let unmasked = Self.frame(1, Array("sneaky".utf8), masked: false)
        #expect(try relay.pass(unmasked, from: relay.client) == unmasked)
        let fine = Self.frame(1, Array("fine".utf8), masked: true)
        #expect(try relay.pass(fine, from: relay.client) == fine)
        let garbage: [UInt8] = [0xFF, 0xFF, 0x00, 0x13, 0x37]
        #expect(try relay.pass(garbage, from: relay.server) == garbage)
        #expect(relay.sink.messages.withLock { $0.isEmpty })
        try relay.closeClient()
        let error = try #require(relay.sink.flows.withLock { $0.last?.error })
        #expect(error.message == "WebSocket: the client broke RFC 6455: client frame not masked (at byte 2); messages after it were relayed but not captured")
    }

    /// While the session is behind the messages, the relay stops reading; it looks again every
    /// 2 ms and reads once the session has caught up.
    @Test func readsWaitWhileTheSessionIsBehind() throws {
        let relay = try Relay()
        relay.client.read()
        #expect(relay.clientReads.reads == 1)
        relay.sink.behind.withLock { $0 = true }
        relay.client.read()
        relay.client.read()
        relay.client.embeddedEventLoop.advanceTime(by: .milliseconds(10))
        #expect(relay.clientReads.reads == 1)
        relay.sink.behind.withLock { $0 = false }
        relay.client.embeddedEventLoop.advanceTime(by: .milliseconds(2))
        #expect(relay.clientReads.reads == 2)
        try relay.closeClient()
    }

    /// Neither side sent a close frame: recorded as a reset.
    @Test func closedWithoutACloseFrame() throws {
        let relay = try Relay()
        _ = try relay.pass(Self.frame(2, [1, 2, 3], masked: true), from: relay.client)
        try relay.closeClient()
        #expect(relay.sink.flows.withLock { $0.last?.error?.kind } == .connectionReset)
        #expect(relay.sink.messages.withLock { $0.map(\.size) } == [3])
    }

    @Test func extensionsAreReadFromTheHandshake() {
        let both = WebSocketExtensions("permessage-deflate; client_no_context_takeover; server_max_window_bits=10")
        #expect(both.deflate && both.clientNoContextTakeover && !both.serverNoContextTakeover && !both.unknown)
        let other = WebSocketExtensions("x-webkit-deflate-frame, permessage-deflate; Server_No_Context_Takeover")
        #expect(other.deflate && other.serverNoContextTakeover && other.unknown)
        #expect(!WebSocketExtensions("").deflate)
    }
}
