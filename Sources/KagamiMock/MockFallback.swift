// `--fallback URL`: what neither the recording nor the description answers goes to a real server.
import AsyncHTTPClient
import Foundation
import KagamiJSON
import NIOCore
import NIOHTTP1

/// Sends a request the mock can't answer to the server at `base` and hands back its answer as
/// it came: redirects are the client's to follow, bodies stay encoded as the server sent them.
final class MockFallback: Sendable {
    let base: String
    private let client: HTTPClient
    /// A server's answer larger than this is refused with a 502 rather than held in memory.
    static let maximumBodySize = 64 << 20

    init(base: String) {
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.base = trimmed
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, decompression: .disabled)
        configuration.timeout.connect = .seconds(10)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Fields about this hop, which the client sets for the hop it makes itself.
    private static let hopFields: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade", "te"]

    func forward(_ request: MockRequest) async -> MockResponse {
        var outgoing = HTTPClientRequest(url: base + request.target)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers where !Self.hopFields.contains(header.name.lowercased()) {
            outgoing.headers.add(name: header.name, value: header.value)
        }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        do {
            let response = try await client.execute(outgoing, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: Self.maximumBodySize)
            return MockResponse(
                status: Int(response.status.code),
                headers: response.headers.filter { !Self.hopFields.contains($0.name.lowercased()) }.map { ($0.name, $0.value) },
                body: Array(body.readableBytesView))
        } catch {
            return .problem(
                status: 502, type: "urn:kagami:mock:fallback-failed", title: "Bad Gateway",
                detail: "Nothing recorded or described matches \(request.method) \(request.target), and the fallback \(base) did not answer: \(error)")
        }
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
