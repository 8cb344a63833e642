import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiControl
@testable import KagamiProxy
import KagamiTesting
import Testing

/// gRPC (grpcio's server and client, Tests/GRPC/grpc_peer.py) through Kagami in reverse mode:
/// the client speaks h2c to Kagami, Kagami h2c to the server. Every kind of call gives the
/// client exactly what it gets from the server directly: messages, status, details, trailers.
@Suite("gRPC through the proxy", .serialized)
struct GRPCThroughProxyTests {
    static var script: String { WebSocketPeer.root.appendingPathComponent("Tests/GRPC/grpc_peer.py").path }

    static func call(target: String) async throws -> String {
        let result = try await CommandLineClient(try WebSocketPeer.python()).run([script, "call", "--target", target])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
    }

    @Test func everyKindOfCallIsTheSameThroughKagami() async throws {
        let server = try PeerServer(script: Self.script)
        defer { server.stop() }
        try await ProxyHarness.with(mode: { _ in .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: server.port)) }) { h in
            let direct = try await Self.call(target: "127.0.0.1:\(server.port)")
            let proxied = try await Self.call(target: "127.0.0.1:\(h.proxyPort)")
            #expect(!direct.isEmpty)
            #expect(proxied == direct)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(direct.utf8)) as? [String: [String: Any]])
            #expect(report["unary"]?["code"] as? String == "OK")
            #expect(report["fail"]?["code"] as? String == "NOT_FOUND")
            #expect(report["cancelled"]?["code"] as? String == "DEADLINE_EXCEEDED")

            let flows = try await h.flows(count: 7)
            #expect(flows.count == 7)
            let byMethod = Dictionary(flows.map { ($0.request.path.split(separator: "/").last.map(String.init) ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            #expect(flows.allSatisfy { $0.request.version == "HTTP/2.0" })
            // The status of a call with a body comes in its trailers, which the flow keeps.
            let unary = try #require(byMethod["Unary"])
            #expect(unary.response?.trailers?["grpc-status"] == "0")
            #expect(unary.response?.trailers?["x-trailer"] == "unary")
            let exchange = try #require(GRPCExchange(flow: unary, responseTrailers: unary.response?.trailers))
            #expect(exchange.status?.name == "OK")
            #expect(try exchange.request.messages.first?.fields?.get().first == ProtobufWire.Field(number: 1, value: .varint(150)))
            // A trailers-only answer: the status is in its only HEADERS frame.
            let fail = try #require(byMethod["Fail"])
            #expect(fail.response?.headers["grpc-status"] == "5")
            #expect(GRPCExchange(flow: fail)?.status?.message == "no note 7 — gone")
            // The client gave up on the slow call: recorded with what happened. The deadline
            // (grpc-timeout) is the server's too, so either the client's reset or the server's
            // own DEADLINE_EXCEEDED reaches the proxy first: on a busy machine it can be either.
            let slow = try #require(byMethod["Slow"])
            if let error = slow.error {
                #expect(error.message.hasPrefix("the client reset the stream (RST_STREAM CANCEL)"), "\(error.message)")
            } else {
                let status = slow.response?.trailers?["grpc-status"] ?? slow.response?.headers["grpc-status"]
                #expect(status == "4", "neither the client's reset nor the server's DEADLINE_EXCEEDED: \(String(describing: slow.response))")
            }
            #expect(byMethod["Bidi"]?.response?.body.size ?? 0 > 100_000)
        }
    }
}
