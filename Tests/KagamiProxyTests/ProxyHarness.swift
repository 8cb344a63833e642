import Foundation
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiStore
import KagamiTesting
import NIOCore

/// A proxy on 127.0.0.1:0 recording into a fresh session file, with an origin server beside it.
/// The proxy connects to loopback only (`UpstreamAllowList.loopback`): a test that wants to see
/// a refusal changes the list in `configure`, never widens it past this machine.
struct ProxyHarness {
    let origin: OriginServer
    let proxy: ProxyServer
    let store: SQLiteFlowStore
    let sessionPath: String
    let proxyPort: Int

    var proxyURL: String { "http://127.0.0.1:\(proxyPort)" }

    static func with<T>(
        mode: ((OriginServer) -> ProxyServer.Mode)? = nil,
        rules: ActiveRules = ActiveRules(),
        breakpoints: Breakpoints = Breakpoints(),
        configure: (inout ProxyOptions) -> Void = { _ in },
        _ body: (ProxyHarness) async throws -> T
    ) async throws -> T {
        let origin = try await OriginServer.start()
        let sessionPath = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: sessionPath)
        var options = ProxyOptions(host: "127.0.0.1", port: 0, upstreamAllow: ["loopback"])
        if case .reverse(let target)? = mode?(origin) { options.reverse = target.description }
        configure(&options)
        let proxy = try ProxyServer(options: options, sink: store, rules: rules, breakpoints: breakpoints)
        let address = try await proxy.start()
        let harness = ProxyHarness(origin: origin, proxy: proxy, store: store, sessionPath: sessionPath, proxyPort: address.port ?? 0)
        do {
            let result = try await body(harness)
            try await harness.shutdown()
            return result
        } catch {
            try? await harness.shutdown()
            throw error
        }
    }

    func shutdown() async throws {
        try await proxy.stop()
        try await origin.stop()
        try? FileManager.default.removeItem(atPath: (sessionPath as NSString).deletingLastPathComponent)
    }

    /// curl through the proxy; `-s` and a time limit always.
    func curl(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.curl.run(["-s", "--max-time", "30", "-x", proxyURL] + arguments)
    }

    /// The stored flows once everything recorded so far is written, waiting up to two seconds
    /// for `count` of them (an exchange is recorded when it ends, just after the client is
    /// answered).
    func flows(count: Int) async throws -> [Flow] {
        let enough = try await eventually(attempts: 200) {
            try await store.flush()
            let flows = try await store.allFlows()
            return flows.count >= count ? flows : nil
        }
        if let enough { return enough }
        return try await store.allFlows()
    }
}


/// The JSON the origin's /echo route answers with.
struct Echo: Decodable {
    var method: String
    var uri: String
    var version: String
    var headers: [[String]]
    var bodySize: Int
    var bodySHA256: String

    init(_ data: Data) throws {
        self = try JSONDecoder().decode(Echo.self, from: data)
    }
}

/// A file of `size` pseudo-random bytes, and its SHA-256.
func randomFile(size: Int, seed: UInt64 = 42) throws -> (path: String, data: Data) {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: size)
    for i in 0..<size {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
    }
    let data = Data(bytes)
    let path = temporaryPath("body.bin")
    try data.write(to: URL(fileURLWithPath: path))
    return (path, data)
}
