// Scenarios in a test: the file read at start, one scenario in force for a closure.
import KagamiScenarios

extension ActiveScenario {
    /// The scenario file at `path`, none in force; no file: every operation as-is.
    static func loaded(from path: String?) throws(KagamiSetupError) -> ActiveScenario {
        guard let path else { return ActiveScenario() }
        do {
            return try ActiveScenario(path: path)
        } catch {
            throw KagamiSetupError(error.description)
        }
    }

    /// `with(_:_:)`, its unknown name said as KagamiKit says a setting it can't use.
    func kitScope<Result: Sendable>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        guard let file = snapshot.file else {
            throw KagamiSetupError("no scenario file: start the server with scenarios: FILE to use scenario \"\(name)\"")
        }
        guard file.scenario(named: name) != nil else {
            throw KagamiSetupError(ScenarioSwitchError.unknownScenario(name, known: file.scenarios.map(\.name)).description)
        }
        return try await with(name, body)
    }
}
