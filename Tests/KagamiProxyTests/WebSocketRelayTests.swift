import Foundation
import KagamiFlow
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import KagamiRules
import KagamiTesting
import Testing
import KagamiControl
@testable import KagamiProxy

/// The relay of an upgraded connection on two embedded channels, with the WebSocket capture
/// beside it: bytes pass unchanged whatever they are, messages reach the sink before the bytes
/// are flushed on, and a peer breaking the protocol stops the capture, not the relay.
@Suite struct WebSocketRelayTests {
    struct Relay {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let sink = CollectingSink()
        let clientReads = ReadCounter()

        init(extensions: String? = nil, breakpoints: Breakpoints? = nil) throws {
            try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
            let target = ProxyTarget(scheme: "http", host: "127.0.0.1", port: 2, path: "/chat")
            let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/chat", headers: ["Upgrade": "websocket", "Connection": "Upgrade"])
            var recorder = FlowRecorder(mode: .reverse, clientAddress: nil, target: target, head: request, captureLimit: 1 << 20)
            var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
            if let extensions { headers.add(name: "Sec-WebSocket-Extensions", value: extensions) }
            let response = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers)
            recorder.responseHead(response)
            let loop = client.embeddedEventLoop
            let tools: [any WebSocketMessageTool] = breakpoints.map {
                [BreakpointMessageTool(breakpoints: $0, handshake: recorder.flow.request, response: recorder.flow.response, flowID: recorder.flow.id, eventLoop: loop)]
            } ?? []
            let relay = try #require(WebSocketRelay(
                recorder: recorder, response: response, hooks: ExchangeHooks(list: [RecordingHook(sink: sink)]), tools: tools,
                captureLimit: 1 << 20, live: LiveWebSockets(), eventLoop: loop))
            let clientRelay = TunnelRelayHandler()
            let serverRelay = TunnelRelayHandler()
            TunnelRelayHandler.join(clientRelay, serverRelay)
            TunnelRelayHandler.join(client: clientRelay, server: serverRelay, through: relay)
            clientRelay.onFinished = relay.finish
            serverRelay.onFinished = relay.finish
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
            return try written(to: other)
        }

        /// What was written to `side` since last asked.
        func written(to side: EmbeddedChannel) throws -> [UInt8] {
            var out: [UInt8] = []
            while let buffer = try side.readOutbound(as: ByteBuffer.self) { out += buffer.readableBytesView }
            return out
        }
    }

    static func frame(_ opcode: UInt8, _ payload: [UInt8], masked: Bool) -> [UInt8] {
        WebSocketMessageReaderTests.frame(opcode, payload, mask: masked ? [1, 2, 3, 4] : nil)
    }

    @Test func bytesPassUnchangedAndMessagesAreKeptBothWays() throws {
        let relay = try Relay()
        // The handshake flow was recorded when the connection switched.
        #expect(relay.sink.flows.count == 1)
        let hello = Self.frame(1, Array("hello".utf8), masked: true)
        // Split mid-frame: the first piece completes no message.
        #expect(try relay.pass(Array(hello.prefix(4)), from: relay.client) == Array(hello.prefix(4)))
        #expect(relay.sink.messages.isEmpty)
        #expect(try relay.pass(Array(hello.dropFirst(4)), from: relay.client) == Array(hello.dropFirst(4)))
        let echo = Self.frame(1, Array("hello".utf8), masked: false)
        #expect(try relay.pass(echo, from: relay.server) == echo)
        let close = Self.frame(8, [0x03, 0xE8], masked: true)
        #expect(try relay.pass(close, from: relay.client) == close)
        let messages = relay.sink.messages
        #expect(messages.map(\.direction) == [.send, .receive, .send])
        #expect(messages.map(\.opcode) == [.text, .text, .close])
        #expect(messages.first?.text == "hello")
        try relay.closeClient()
        let flows = relay.sink.flows
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
        #expect(relay.sink.messages.isEmpty)
        try relay.closeClient()
        let error = try #require(relay.sink.flows.last?.error)
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
        #expect(relay.sink.flows.last?.error?.kind == .connectionReset)
        #expect(relay.sink.messages.map(\.size) == [3])
    }

    /// A message held at a breakpoint doesn't go on, nor does what the client sends after it
    /// (and the client side reads no more) until it is decided; then the edited message goes in
    /// a frame of Kagami's own, the rest behind it as it was sent.
    @Test func aHeldMessageAndWhatFollowsWaitForTheDecision() throws {
        let breakpoints = Breakpoints(BreakpointSettings(breakpoints: [
            Breakpoint(location: Location(path: "/chat"), request: false, messages: .send, messageText: "hold"),
        ]))
        let relay = try Relay(breakpoints: breakpoints)
        let first = Self.frame(1, Array("first".utf8), masked: true)
        let held = Self.frame(1, Array("hold me".utf8), masked: true)
        let after = Self.frame(2, [9, 8, 7], masked: true)
        // While a message breakpoint covers the direction, each message is read whole before
        // it goes on (in a frame of Kagami's own: same message, another mask).
        #expect(Self.texts(try relay.pass(first + held + after, from: relay.client)) == ["first"])
        // The server side goes on meanwhile.
        let echo = Self.frame(1, Array("first".utf8), masked: false)
        #expect(try relay.pass(echo, from: relay.server) == echo)
        relay.client.read()
        let reads = relay.clientReads.reads
        #expect(try relay.pass(Self.frame(1, Array("later".utf8), masked: true), from: relay.client).isEmpty)
        relay.client.read()
        #expect(relay.clientReads.reads == reads)
        let heldMessage = try #require(breakpoints.held.first)
        #expect(heldMessage.message?.text == "hold me")
        var edited = try #require(heldMessage.message)
        edited.data = Data("edited".utf8)
        try breakpoints.resolve(heldMessage.id, with: .executeMessage(edited))
        relay.client.embeddedEventLoop.run()
        #expect(Self.texts(try relay.written(to: relay.server)) == ["edited", "binary 3", "later"])
        // Reading resumed.
        #expect(relay.clientReads.reads == reads + 1)
        #expect(Self.texts(try relay.pass(Self.frame(1, Array("go".utf8), masked: true), from: relay.client)) == ["go"])
        let recorded = relay.sink.messages.filter { $0.direction == .send }
        #expect(recorded.compactMap(\.text) == ["first", "edited", "later", "go"])
        #expect(recorded[1].note?.contains("then edited") == true)
        try relay.closeClient()
    }

    /// The messages in bytes going to the server, binary ones as "binary N".
    static func texts(_ bytes: [UInt8]) -> [String] {
        var reader = WebSocketMessageReader(.init(direction: .send, captureLimit: 1 << 20))
        var messages: [WebSocketMessage] = []
        reader.read(bytes, at: Date(), into: &messages)
        #expect(reader.failure == nil)
        return messages.map { $0.text ?? "binary \($0.data.count)" }
    }

    /// The connection closes while a message is held: the hold is let go, the message is
    /// recorded as never sent.
    @Test func aHeldMessageIsReleasedWhenTheConnectionCloses() throws {
        let breakpoints = Breakpoints(BreakpointSettings(breakpoints: [
            Breakpoint(location: Location(path: "/chat"), request: false, messages: .both),
        ]))
        let relay = try Relay(breakpoints: breakpoints)
        #expect(try relay.pass(Self.frame(1, Array("x".utf8), masked: true), from: relay.client).isEmpty)
        #expect(breakpoints.held.count == 1)
        try relay.closeClient()
        #expect(breakpoints.held.isEmpty)
        #expect(relay.sink.messages.first?.note == "held when the connection closed: never sent")
    }

    @Test func extensionsAreReadFromTheHandshake() {
        let both = WebSocketExtensions("permessage-deflate; client_no_context_takeover; server_max_window_bits=10")
        #expect(both.deflate && both.clientNoContextTakeover && !both.serverNoContextTakeover && !both.unknown)
        let other = WebSocketExtensions("x-webkit-deflate-frame, permessage-deflate; Server_No_Context_Takeover")
        #expect(other.deflate && other.serverNoContextTakeover && other.unknown)
        #expect(!WebSocketExtensions("").deflate)
    }
}
