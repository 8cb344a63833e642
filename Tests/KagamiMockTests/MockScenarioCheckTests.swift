// A mock serving a description alone refuses a scenario whose operation the description hasn't,
// at start and on reload, and keeps the scenario in force when a reload is refused.
import Foundation
import KagamiMock
import KagamiScenarios
import KagamiTesting
import Testing

@Suite struct MockScenarioCheckTests {
    static let description = """
        openapi: 3.1.0
        info: {title: Notes, version: "1"}
        paths:
          /notes:
            get:
              responses:
                "200": {description: the notes, content: {application/json: {example: [{"id": 1}]}}}
          /notes/{id}:
            get:
              parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
              responses:
                "200": {description: a note, content: {application/json: {example: {"id": 1}}}}
        """

    static func scenarios(_ operation: String) -> String {
        "scenarios:\n  - name: down\n    states:\n      - operation: GET /notes/{noteId}\n        state: error\n        status: 503\n"
            + "      - operation: \(operation)\n        state: empty\n"
    }

    @Test func anOperationTheDescriptionHasntIsRefusedAtStartAndOnReload() async throws {
        let folder = try TemporaryFolder.make("mock-scenario-check").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/scenarios.yaml"

        try Self.scenarios("GET /notez").write(toFile: path, atomically: true, encoding: .utf8)
        await #expect {
            _ = try await MockServer.start(text: Self.description, configuration: .init(scenarios: try ActiveScenario(path: path)))
        } throws: { error in
            "\(error)" == "scenarios.yaml:7:9: scenarios[0].states[1].operation: GET /notez is not an operation of the description (closest: GET /notes, GET /notes/{id})"
        }
        try Self.scenarios("POST /notes").write(toFile: path, atomically: true, encoding: .utf8)
        await #expect {
            _ = try await MockServer.start(text: Self.description, configuration: .init(scenarios: try ActiveScenario(path: path)))
        } throws: { error in
            "\(error)" == "scenarios.yaml:7:9: scenarios[0].states[1].operation: POST /notes is not an operation of the description (/notes answers GET)"
        }

        // Variables named otherwise and a query part still name the described operation.
        try Self.scenarios("GET /notes{?page}").write(toFile: path, atomically: true, encoding: .utf8)
        let scenarios = try ActiveScenario(path: path, active: "down")
        let mock = try await MockServer.start(text: Self.description, configuration: .init(scenarios: scenarios))
        defer { Task { try await mock.stop() } }
        #expect(await mock.respond(to: MockRequest(method: "GET", target: "/notes/7")).status == 503)

        // A running mock keeps the scenario in force when the edited file names an unknown operation.
        try Self.scenarios("DELETE /notes/{id}").write(toFile: path, atomically: true, encoding: .utf8)
        await #expect {
            try await scenarios.reload()
        } throws: { error in
            "\(error)" == "scenarios.yaml:7:9: scenarios[0].states[1].operation: DELETE /notes/{id} is not an operation of the description (/notes/{id} answers GET)"
        }
        #expect(scenarios.current?.rules.count == 2 && scenarios.current?.rules.last?.selector.pathTemplate == "/notes{?page}")
        #expect(await mock.respond(to: MockRequest(method: "GET", target: "/notes/7")).status == 503)
    }
}
