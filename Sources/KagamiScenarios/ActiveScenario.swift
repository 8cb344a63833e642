// The scenario a running proxy or mock applies now, switched live from the admin API and CLI.
import Foundation
import KagamiFlow
import KagamiRules
import Synchronization

public enum ScenarioSwitchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No scenario file was given (`--scenarios FILE`).
    case noScenarioFile
    case unknownScenario(String, known: [String])
    /// The file could not be read again; the scenario in force stays.
    case unreadable(RuleDocumentError)

    public var description: String {
        switch self {
        case .noScenarioFile:
            "no scenario file is loaded (start with --scenarios FILE)"
        case .unknownScenario(let name, let known):
            "no scenario named \"\(name)\"" + (known.isEmpty ? "" : " (the file has \(known.map { "\"\($0)\"" }.joined(separator: ", ")))")
        case .unreadable(let error):
            error.description
        }
    }
}

/// The scenario file and which of its scenarios is in force. Switching takes effect with the
/// next request; a request already under a state finishes under it.
public final class ActiveScenario: Sendable {
    public struct Snapshot: Sendable, Hashable {
        /// The file's path as given, to read it again.
        public var path: String?
        public var file: ScenarioFile?
        public var active: Scenario?
    }

    private let box: Mutex<Snapshot>

    /// No scenario file: every operation as-is until one is loaded.
    public init() {
        box = Mutex(Snapshot())
    }

    /// The file at `path`, with `active` in force (nil: none yet).
    public convenience init(path: String, active: String? = nil) throws(ScenarioSwitchError) {
        let file: ScenarioFile
        do {
            file = try ScenarioFile(contentsOf: path)
        } catch {
            throw .unreadable(error)
        }
        try self.init(file: file, path: path, active: active)
    }

    public init(file: ScenarioFile, path: String? = nil, active: String? = nil) throws(ScenarioSwitchError) {
        var snapshot = Snapshot(path: path, file: file)
        if let active {
            guard let scenario = file.scenario(named: active) else {
                throw .unknownScenario(active, known: file.scenarios.map(\.name))
            }
            snapshot.active = scenario
        }
        box = Mutex(snapshot)
    }

    public var snapshot: Snapshot { box.withLock { $0 } }

    public var current: Scenario? { box.withLock { $0.active } }

    /// Puts the file's scenario `name` in force; an unknown name leaves the one in force.
    @discardableResult
    public func use(_ name: String) throws(ScenarioSwitchError) -> Scenario {
        let result: Result<Scenario, ScenarioSwitchError> = box.withLock { snapshot in
            guard let file = snapshot.file else { return .failure(.noScenarioFile) }
            guard let scenario = file.scenario(named: name) else {
                return .failure(.unknownScenario(name, known: file.scenarios.map(\.name)))
            }
            snapshot.active = scenario
            return .success(scenario)
        }
        return try result.get()
    }

    /// Every operation as-is again.
    public func off() {
        box.withLock { $0.active = nil }
    }

    /// Runs `body` with the scenario `name` in force, then puts back the one in force before
    /// (or none), however `body` ends. An unknown name throws before `body` runs.
    public func with<Result>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        let before = current?.name
        try use(name)
        defer {
            if let before {
                // It is gone only when the file was reloaded without it meanwhile.
                do { try use(before) } catch { off() }
            } else {
                off()
            }
        }
        return try await body()
    }

    /// Reads the file again (it changed in git, or by hand). The scenario in force is the new
    /// version of the same name; when the file doesn't read, or no longer has that name, nothing
    /// changes and the error says why.
    public func reload() throws(ScenarioSwitchError) {
        guard let path = snapshot.path else { throw .noScenarioFile }
        let file: ScenarioFile
        do {
            file = try ScenarioFile(contentsOf: path)
        } catch {
            throw .unreadable(error)
        }
        let failure: ScenarioSwitchError? = box.withLock { snapshot in
            var fresh = snapshot
            fresh.file = file
            if let name = snapshot.active?.name {
                guard let scenario = file.scenario(named: name) else {
                    return .unknownScenario(name, known: file.scenarios.map(\.name))
                }
                fresh.active = scenario
            }
            snapshot = fresh
            return nil
        }
        if let failure { throw failure }
    }

    /// The state `request` is in under the scenario in force, with the scenario's name; nil
    /// when it is as-is.
    public func state(for request: FlowRequest) -> (scenario: String, rule: OperationStateRule)? {
        guard let scenario = current, let rule = scenario.state(for: request), rule.state != .asIs else { return nil }
        return (scenario.name, rule)
    }

    /// How an exchange a scenario touched is marked in the session and the UI.
    public static func mark(scenario: String, rule: OperationStateRule) -> RuleApplication {
        .scenario(scenario, operation: rule.selector.displayString, state: rule.state.summary)
    }
}
