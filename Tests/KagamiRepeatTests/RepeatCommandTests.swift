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
