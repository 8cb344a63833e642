// schemathesis (PyPI) against the mock on the OpenAPI petstore descriptions: generated valid
// and invalid requests, every response checked against the description. Bounded: a fixed seed,
// 25 cases per operation, one worker, and a time limit on the whole run; 127.0.0.1 only.
import Foundation
@testable import KagamiMock
import KagamiTesting
import Testing

@Suite struct SchemathesisTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The checks a stateless mock cannot pass: they need a created resource to exist later
    /// (or a deleted one to be gone). docs/MOCK.md lists them.
    static let statefulChecks = ["use_after_free", "ensure_resource_availability"]

    /// Description, base path, and whether it documents an error response for every operation.
    /// Where it doesn't, the mock's refusal of an invalid request (400, 415, 422) is a status
    /// the description doesn't list, which `status_code_conformance` reports by design: that
    /// check is left out there, and only there.
    static let descriptions = [
        ("Tests/KagamiMockTests/Fixtures/petstore.yaml", "/v1", true),
        ("Tests/KagamiMockTests/Fixtures/pets.yaml", "", false),
        ("Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml", "/v1", false),
    ]

    @Test(arguments: descriptions) func noFailuresApartFromStatefulOnes(_ description: (String, String, Bool)) async throws {
        let schemathesis = Self.root.appendingPathComponent(".venv-tests/bin/schemathesis").path
        try #require(FileManager.default.isExecutableFile(atPath: schemathesis), "schemathesis is not installed: scripts/test.sh creates .venv-tests with it")
        let path = Self.root.appendingPathComponent(description.0).path
        let server = try await MockServer.start(path: path, configuration: .init(host: "127.0.0.1", port: 0, reloadInterval: nil))
        defer { Task { try await server.stop() } }
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-schemathesis-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        // Run from the report folder: schemathesis keeps a `.schemathesis` cache where it runs.
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        let result = try await CommandLineClient("/bin/sh").run(["-c", "cd \"$0\" && exec \"$@\"", reports.path,
            "/usr/bin/timeout",
            "300", schemathesis, "run", path,
            "--url", server.url + description.1,
            "--checks", "all",
            "--exclude-checks", (Self.statefulChecks + (description.2 ? [] : ["status_code_conformance"])).joined(separator: ","),
            "--phases", "examples,coverage,fuzzing",
            "--max-examples", "25", "--seed", "1", "--workers", "1",
            "--generation-database", "none", "--request-timeout", "10",
            "--no-color",
        ], environment: ["SCHEMATHESIS_HOOKS": "", "NO_COLOR": "1", "HOME": NSTemporaryDirectory(), "PATH": "/usr/bin:/bin"])
        let output = result.stdoutText
        let summary = output.split(separator: "\n").filter { $0.contains("passed") || $0.contains("failed") || $0.contains("error") }.suffix(3)
        print("schemathesis \(description.0): \(summary.joined(separator: " | "))")
        #expect(result.status == 0, "\(output.suffix(6000))\n\(result.stderr.suffix(2000))")
    }
}
