// A mock server run inside the caller's process: a description (API Blueprint or OpenAPI)
// served on port 0, recording what it was sent.
import Foundation
import KagamiDescription
@_exported import KagamiFlow
import KagamiMock
import KagamiRecording
import KagamiScenarios

/// A Kagami mock server running in this process: it answers requests with the examples of a
/// description, and a 4xx naming the problem for requests the description doesn't allow.
///
/// Start one with ``withKagamiMock(description:port:scenarios:_:)`` (shut down when the closure returns or
/// throws) or with ``start(description:port:validatesRequests:)`` and ``shutdown()``. Send
/// requests to ``baseURL``; every exchange is recorded in ``flows``.
public final class KagamiMockServer: Sendable {
    /// `http://127.0.0.1:PORT`
    public let baseURL: URL
    /// The port it listens on.
    public let port: Int
    private let server: MockServer
    private let recording: Recording
    private let memory: FlowMemory

    private init(baseURL: URL, server: MockServer, recording: Recording, memory: FlowMemory) {
        self.baseURL = baseURL
        self.port = server.port
        self.server = server
        self.recording = recording
        self.memory = memory
    }

    /// Serves the description in the file at `path` (API Blueprint or OpenAPI, detected) on
    /// `port` of 127.0.0.1 (0 picks a free one). With `validatesRequests`, requests are checked
    /// against parameters and body schemas and answered 422 (or 400) when they don't match.
    /// `scenarios` is a scenario file (`docs/SCENARIOS.md`) whose scenarios
    /// ``withScenario(_:_:)`` puts in force.
    /// Throws ``KagamiSetupError`` with the description's errors (`file:line:column: message`).
    public static func start(
        description path: String, port: Int = 0, validatesRequests: Bool = true, scenarios: String? = nil
    ) async throws -> KagamiMockServer {
        try await start(port: port, validatesRequests: validatesRequests, scenarios: scenarios) { configuration, sink in
            try await MockServer.start(path: path, configuration: configuration, sink: sink)
        }
    }

    /// Serves a description given as text (API Blueprint or OpenAPI, detected).
    public static func start(
        descriptionText text: String, port: Int = 0, validatesRequests: Bool = true, scenarios: String? = nil
    ) async throws -> KagamiMockServer {
        try await start(port: port, validatesRequests: validatesRequests, scenarios: scenarios) { configuration, sink in
            try await MockServer.start(text: text, configuration: configuration, sink: sink)
        }
    }

    private static func start(
        port: Int, validatesRequests: Bool, scenarios: String?,
        _ serve: (MockServer.Configuration, any FlowSink) async throws -> MockServer
    ) async throws -> KagamiMockServer {
        let active = try await ActiveScenario.loaded(from: scenarios)
        let recorder = try FlowRecorder(recording: .memory)
        let recording = recorder.recording()
        // A test's description doesn't change under it: no file watching, so no timer task.
        let configuration = MockServer.Configuration(port: port, validates: validatesRequests, reloadInterval: nil, scenarios: active)
        let server: MockServer
        do {
            server = try await serve(configuration, recording.chain)
        } catch let error as MockServerError {
            throw KagamiSetupError(error.description)
        }
        guard let url = httpURL(host: configuration.host, port: server.port) else {
            try await server.stop()
            throw KagamiSetupError("the mock listens on port \(server.port), which makes no http URL")
        }
        return KagamiMockServer(baseURL: url, server: server, recording: recording, memory: recorder.memory)
    }

    /// Every exchange the mock has answered, oldest first.
    public var flows: [Flow] { memory.flows }

    /// The exchanges answered from now on; the sequence ends when the mock shuts down.
    public var newFlows: AsyncStream<Flow> { memory.subscribe() }

    /// Waits until at least `count` exchanges have been recorded; throws ``FlowWaitTimeout``
    /// after `timeout`.
    public func flows(count: Int, timeout: Duration = .seconds(10)) async throws -> [Flow] {
        try await memory.flows(count: count, timeout: timeout)
    }

    /// The scenario in force, nil when none is.
    public var scenario: String? { server.scenarios.current?.name }

    /// Runs `body` with the scenario `name` of the mock's scenario file in force (its
    /// operations empty, loading, in error, offline), then puts back the one in force before.
    /// The mock is shared by whatever runs meanwhile: give each test its own mock to run tests
    /// in parallel. Throws ``KagamiSetupError`` for a name the file doesn't have.
    public func withScenario<Result: Sendable>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        try await server.scenarios.kitScope(name, body)
    }

    /// The requests a scenario's loading state holds now, oldest first: a test waits for its
    /// request to be here, looks at the app's loading screen, then releases it.
    public var loadingRequests: [FlowRequest] { server.holds.loadingRequests }

    /// Lets every request a loading state holds go on as it came (the client gets the real
    /// answer), as Release does in the web UI; returns how many went. A timed loading state
    /// also ends by itself.
    @discardableResult
    public func releaseLoading() -> Int { server.holds.releaseLoading() }

    /// Stops listening and ends ``newFlows`` sequences.
    public func shutdown() async throws {
        try await server.stop()
        try await recording.flush()
        memory.finish()
    }
}

/// Runs `body` with a mock of the description at `path` started for it on `port` (0: a free
/// one), and shuts the mock down when `body` returns or throws.
public func withKagamiMock<Result: Sendable>(
    description path: String, port: Int = 0, scenarios: String? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (KagamiMockServer) async throws -> Result
) async throws -> Result {
    let mock = try await KagamiMockServer.start(description: path, port: port, scenarios: scenarios)
    let result: Result
    do {
        result = try await body(mock)
    } catch {
        try? await mock.shutdown()
        throw error
    }
    try await mock.shutdown()
    return result
}
