import Foundation
import KagamiKit
import KagamiKitOpenAPI
import NotesClient
import Testing

/// A recording proxy in front of a local server (here the mock itself): the client's calls are
/// recorded as flows, and a rule set at runtime slows one of them down.
@Suite struct ProxyTests {
    @Test func callsThroughTheProxyAreRecorded() async throws {
        try await withKagamiMock(description: Fixtures.notes) { mock in
            try await withKagamiProxy(configuration: .init(reverseTarget: mock.baseURL.absoluteString)) { proxy in
                let client = Client(serverURL: proxy.proxyURL.appendingPathComponent("v1"), transport: proxy.clientTransport)
                _ = try await client.getNote(path: .init(id: 1)).ok
                _ = try await client.listNotes().ok
                let flows = try await proxy.flows(count: 2)
                // MSON has no integer type: `id` is a `number`, so the generated client holds it as
                // a Double and writes it as `1.0` in the path (which the description allows).
                #expect(flows.map(\.request.path) == ["/v1/notes/1.0", "/v1/notes"])
                #expect(flows.allSatisfy { $0.response?.status == 200 && $0.mode == .reverse })
            }
        }
    }

    /// Throttling with 400 ms of latency: the recorded exchange says it was throttled and
    /// lasted at least that long (a busy machine makes it slower, never faster).
    @Test func aThrottledCallIsSlowerAndSaysSo() async throws {
        try await withKagamiMock(description: Fixtures.notes) { mock in
            try await withKagamiProxy(configuration: .init(reverseTarget: mock.baseURL.absoluteString)) { proxy in
                try proxy.setRules(document: """
                    throttling:
                      enabled: true
                      profile: {name: Slow, downloadKbps: 10000, uploadKbps: 10000, latencyMs: 400}
                    """)
                let client = Client(serverURL: proxy.proxyURL.appendingPathComponent("v1"), transport: proxy.clientTransport)
                _ = try await client.getNote(path: .init(id: 1)).ok
                let flow = try #require(try await proxy.flows(count: 1).first)
                #expect(flow.appliedRules.contains { $0.name.contains("Throttling") || $0.description.contains("throttled") })
                #expect((flow.duration ?? 0) >= 0.4)
            }
        }
    }
}
