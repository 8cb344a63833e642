// Scenarios in a test: the file read at start (the recordings of its recorded states too), one
// scenario in force for a closure, and the requests its loading states hold released.
import Foundation
import KagamiControl
import KagamiFlow
import KagamiRecordingProxy
import KagamiScenarios

extension ActiveScenario {
    /// The scenario file at `path`, none in force, its recorded states' recordings read (HAR or
    /// session files, beside the file); no file: every operation as-is.
    static func loaded(from path: String?) async throws(KagamiSetupError) -> ActiveScenario {
        guard let path else { return ActiveScenario() }
        do {
            return try await ActiveScenario.load(path: path, reader: readRecording)
        } catch {
            throw KagamiSetupError(error.description)
        }
    }

    /// A recorded state's recording: an HTTP Archive (`.har`), else a session file, as
    /// `kagami proxy` and `kagami mock` read them.
    static let readRecording: RecordingReader = Recordings.reader()

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

extension Breakpoints {
    /// The requests a loading state holds now, oldest first.
    var loadingRequests: [FlowRequest] {
        held.filter { $0.reason != nil }.map(\.request)
    }

    /// Lets every request a loading state holds go on as it came; how many went.
    func releaseLoading() -> Int {
        var released = 0
        for held in held where held.reason != nil {
            // Gone meanwhile (its client left, its seconds passed): nothing to release.
            if (try? resolve(held.id, with: .cancel)) != nil { released += 1 }
        }
        return released
    }
}
