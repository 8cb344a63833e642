import Foundation
import KagamiKit
import KagamiTesting
import Testing

/// `diff(_:_:)` as an app's suite uses it: a baseline recording, then this run's, and the
/// assertion that the change adds no network call.
@Suite struct CaptureDiffInSuiteTests {
    private func get(_ url: String, through proxy: KagamiProxyServer) async throws {
        let result = try await CommandLineClient.curl.run(["-sS", "--max-time", "60", "-x", proxy.proxyURL.absoluteString, "-o", "/dev/null", url])
        #expect(result.status == 0, "curl: \(result.stderr)")
    }

    @Test func aChangeThatAddsACallIsSeenAndTheSameCallsAreNot() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let directory = try TemporaryFolder.make("kit-diff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.sqlite").path
        let screen = ["/status/200", "/bytes/64"]

        try await withKagamiProxy(configuration: .init(recording: .sessionFile(path: baseline))) { proxy in
            for path in screen { try await get(origin.baseURL + path, through: proxy) }
            _ = try await proxy.flows(count: screen.count)
        }
        try await withKagamiProxy { proxy in
            for path in screen { try await get(origin.baseURL + path, through: proxy) }
            let same = try await diff(sessionFile: baseline, try await proxy.flows(count: screen.count))
            #expect(same.findings(.addedOperation, .removedOperation, .callCount).isEmpty, "\(same.findings.map(\.message))")

            try await get(origin.baseURL + "/echo", through: proxy)
            let flows = try await proxy.flows(count: screen.count + 1)
            let changed = try await diff(sessionFile: baseline, flows)
            #expect(changed.findings(.addedOperation).map(\.operation.description) == ["GET /echo"])
            // The in-memory form compares the same way.
            let before = Array(flows.prefix(screen.count))
            #expect(try diff(before, flows).findings(.addedOperation).count == 1)
            #expect(throws: DiffInputError.empty("the after capture")) { try diff(before, []) }
        }
        #expect(throws: DiffInputError.empty("the before capture")) { try diff([], []) }
    }
}
