import Foundation
import KagamiKit
import KagamiTesting
import Testing

/// KagamiKit records through the same chain as `kagami proxy`: with descriptions to check
/// against, a socket's messages are kept beside its checked handshake.
@Suite struct KagamiKitWebSocketTests {
    @Test func messagesAreKeptWithTheContractCheckOn() async throws {
        let server = try PeerServer.webSocketEcho()
        defer { server.stop() }
        let folder = try TemporaryFolder.make("kit-ws")
        defer { try? FileManager.default.removeItem(at: folder) }
        let description = try WebSocketThroughProxyTests.chatDescription(in: folder, response: #""200": {description: "A page, not a socket"}"#)
        try await withKagamiProxy(configuration: .init(
            reverseTarget: "http://127.0.0.1:\(server.port)", contracts: ["\(description)=http://127.0.0.1:\(server.port)"]
        )) { proxy in
            let run = try await WebSocketPeer.run([
                "talk", "ws://127.0.0.1:\(proxy.port)/chat", "--send", "one", "--send", "two", "--expect", "one", "--expect", "two",
            ])
            #expect(run.status == 0, "\(run.report) \(run.stderr)")
            let flows = try await proxy.flows(count: 1)
            let socket = try #require(flows.first)
            #expect(socket.isWebSocket)
            #expect(!socket.violations.isEmpty, "a 101 the description doesn't list is reported")
            try await eventually(every: .milliseconds(20)) { proxy.webSocketMessages(of: socket.id).contains { $0.opcode == .close } }
            // Each direction in its order; how the two interleave is the network's timing.
            let messages = proxy.webSocketMessages(of: socket.id).filter { $0.text != nil }
            #expect(messages.filter { $0.direction == .send }.compactMap(\.text).prefix(2) == ["one", "two"])
            #expect(messages.filter { $0.direction == .receive }.compactMap(\.text).prefix(2) == ["one", "two"])
        }
    }
}
