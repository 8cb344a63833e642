import ArgumentParser
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing
@testable import KagamiCLI

/// `kagami repeat` on a session file.
@Suite struct RepeatCommandTests {
    /// A session holding one recorded POST to the testing origin's /echo.
    static func session(origin: OriginServer) async throws -> (path: String, flow: Flow) {
        let path = try TemporaryFolder.path("repeat", "session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        let body = Data("repeat me".utf8)
        let flow = Flow(
            mode: .forward,
            request: FlowRequest(
                method: "POST", scheme: "http", host: "127.0.0.1", port: origin.port, target: "/echo?from=session",
                headers: HeaderFields([("Host", "127.0.0.1:\(origin.port)"), ("Content-Type", "text/plain"), ("Content-Length", "9"), ("X-Trace", "t-1")]),
                body: FlowBody(data: body)),
            response: FlowResponse(status: 200),
            timings: FlowTimings(start: Date(), end: Date()))
        store.record(flow)
        try await store.flush()
        return (path, flow)
    }

    @Test func repeatRecordsEachSendAsARepeatInTheSameSession() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let (path, flow) = try await Self.session(origin: origin)
        try await RepeatCommand.parse(["--session", path, flow.id.uuidString, "--count", "20", "--concurrency", "4", "--delay", "1"]).run()
        let store = try SQLiteFlowStore(path: path)
        let repeats = try await store.repeats(of: flow.id)
        #expect(repeats.count == 20)
        #expect(repeats.allSatisfy { $0.response?.status == 200 && $0.request.target == "/echo?from=session" })
        #expect(try await store.count() == 21)
        #expect(origin.received.count == 20)
        for received in origin.received {
            #expect(received.method == "POST")
            #expect(received.body == Data("repeat me".utf8))
            #expect(received.headers.contains { $0.name == "X-Trace" && $0.value == "t-1" })
            #expect(!received.headers.contains { $0.name.lowercased() == "x-kagami-repeat-of" })
        }
    }

    /// An https exchange from a server whose certificate a private CA signed: refused (and the
    /// command fails) until that CA is trusted with --upstream-ca, or checking is turned off.
    @Test func repeatOfHTTPSTrustsTheUpstreamCAItIsGivenAndFailsWithoutIt() async throws {
        let originCA = try TestCertificates.make()
        let origin = try await OriginServer.start(tls: originCA.serverIdentity(for: "127.0.0.1"))
        defer { Task { try? await origin.stop() } }
        let path = try TemporaryFolder.path("repeat-https", "session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        let flow = Flow(
            mode: .forward,
            request: FlowRequest(
                method: "GET", scheme: "https", host: "127.0.0.1", port: origin.port, target: "/echo?tls=1",
                headers: HeaderFields([("Host", "127.0.0.1:\(origin.port)")])),
            response: FlowResponse(status: 200),
            timings: FlowTimings(start: Date(), end: Date()))
        store.record(flow)
        try await store.flush()
        let caDir = try TemporaryFolder.make("repeat-https-ca").path
        let base = ["--session", path, flow.id.uuidString, "--ca-dir", caDir]

        do {
            try await RepeatCommand.parse(base).run()
            Issue.record("a repeat the proxy could not deliver exited 0")
        } catch let exit as ExitCode {
            #expect(exit == .failure)
        }
        #expect(origin.received.isEmpty)
        try await RepeatCommand.parse(base + ["--upstream-ca", originCA.caPath]).run()
        #expect(origin.received.count == 1)
        try await RepeatCommand.parse(base + ["--insecure-upstream"]).run()
        #expect(origin.received.count == 2)

        let repeats = try await SQLiteFlowStore(path: path).repeats(of: flow.id).sorted { $0.timings.start < $1.timings.start }
        #expect(repeats.map { $0.response?.status } == [502, 200, 200])
        #expect(repeats.first?.error?.kind == .tlsFailure)
        #expect(repeats.first?.response?.headers.values(for: "Proxy-Status") == ["kagami; error=tls_protocol_error"])
        #expect(repeats.last?.tls?.upstreamVerificationDisabled == true)

        // A running proxy checks servers by its own options: refused before anything is sent.
        #expect(throws: (any Error).self) {
            try RepeatCommand.parse(base + ["--proxy", "http://127.0.0.1:9", "--insecure-upstream"])
        }
    }

    @Test func repeatRefusesBadOptionsAndUnknownExchanges() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let (path, flow) = try await Self.session(origin: origin)
        await #expect(throws: ValidationError.self) {
            try await RepeatCommand.parse(["--session", path, flow.id.uuidString, "--concurrency", "65"]).run()
        }
        do {
            try await RepeatCommand.parse(["--session", path, flow.id.uuidString, "--count", "0"]).run()
            Issue.record("--count 0 was accepted")
        } catch let error as ValidationError {
            #expect(error.message == "--count must be between 1 and 10000, not 0")
        }
        await #expect(throws: ValidationError.self) {
            try await RepeatCommand.parse(["--session", path, UUID().uuidString]).run()
        }
        #expect(origin.received.isEmpty)
    }
}
