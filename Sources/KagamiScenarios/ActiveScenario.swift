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

/// What a server's API descriptions say about an operation, for the states that answer as the
/// description does.
public protocol OperationDocumentation: Sendable {
    /// The response documented for `status` on the request's operation; nil when none is.
    func response(status: Int, to request: FlowRequest) -> FlowResponse?
    /// The empty state's answer to the request, made from `response` as the operation's
    /// description shapes it; nil when the operation is not described (or its answer is not one
    /// the description can shape).
    func emptied(_ response: FlowResponse, to request: FlowRequest) -> FlowResponse?
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
    /// Reads the recordings of recorded states, again on each reload; nil refuses them.
    private let reader: RecordingReader?
    /// What the server applying the scenarios refuses in a file (a mock: operations its
    /// description hasn't), run on each reload too.
    private let requirement = Mutex<(@Sendable (ScenarioFile) -> RuleDocumentError?)?>(nil)
    /// What the server's descriptions document for an operation (`answersDocumented(by:)`).
    private let documentation = Mutex<(any OperationDocumentation)?>(nil)

    /// Error and empty states answer from what `documentation` documents (the proxy's contract
    /// check descriptions).
    public func answersDocumented(by documentation: any OperationDocumentation) {
        self.documentation.withLock { $0 = documentation }
    }

    /// An `error` state's answer: its own body, else the documented one, else a problem
    /// document naming the scenario.
    public func errorAnswer(status: Int, body: String?, contentType: String?, scenario: String, request: FlowRequest) -> FlowResponse {
        if body == nil, let documented = documentation.withLock({ $0 })?.response(status: status, to: request) { return documented }
        return ScenarioAnswers.error(status: status, body: body, contentType: contentType, scenario: scenario, request: request)
    }

    /// The `empty` state's answer made from the real one: as the operation's description says
    /// an empty answer looks when it is described, else with its collections emptied
    /// (`ScenarioAnswers.emptied`).
    public func emptyAnswer(_ response: FlowResponse, request: FlowRequest) -> FlowResponse {
        documentation.withLock({ $0 })?.emptied(response, to: request) ?? ScenarioAnswers.emptied(response)
    }

    /// No scenario file: every operation as-is until one is loaded.
    public init() {
        box = Mutex(Snapshot())
        reader = nil
    }

    /// The file at `path`, with `active` in force (nil: none yet). A file with recorded
    /// states needs `load(path:active:reader:)`, which reads their recordings.
    public convenience init(path: String, active: String? = nil) throws(ScenarioSwitchError) {
        let file: ScenarioFile
        do {
            file = try ScenarioFile(contentsOf: path)
        } catch {
            throw .unreadable(error)
        }
        if let replay = file.recordings.first { throw Self.unread(replay, in: file, at: path) }
        try self.init(file: file, path: path, active: active)
    }

    /// The file at `path` with the recordings of its recorded states read by `reader` (paths
    /// relative to the file's folder), and `active` in force.
    public static func load(path: String, active: String? = nil, reader: @escaping RecordingReader) async throws(ScenarioSwitchError) -> ActiveScenario {
        try ActiveScenario(file: try await read(path: path, reader: reader), path: path, active: active, reader: reader)
    }

    /// `file` whose recordings are read (or have none); `reader` reads them again on reload.
    public init(file: ScenarioFile, path: String? = nil, active: String? = nil, reader: RecordingReader? = nil) throws(ScenarioSwitchError) {
        self.reader = reader
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

    /// From now on a file `check` finds an error in is refused, on reload as at start: the file
    /// in force is checked now (its error thrown), and a reload that fails it changes nothing.
    public func require(_ check: @escaping @Sendable (ScenarioFile) -> RuleDocumentError?) throws(ScenarioSwitchError) {
        let current = snapshot
        if let file = current.file, let error = check(file) {
            throw .unreadable(current.path.map { Self.placed(error, at: $0) } ?? error)
        }
        requirement.withLock { $0 = check }
    }

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
    public func reload() async throws(ScenarioSwitchError) {
        guard let path = snapshot.path else { throw .noScenarioFile }
        let file = try await Self.read(path: path, reader: reader)
        if let check = requirement.withLock({ $0 }), let error = check(file) { throw .unreadable(Self.placed(error, at: path)) }
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
    /// when it is as-is (a recorded state whose recording hasn't the call is too).
    public func state(for request: FlowRequest) -> (scenario: String, rule: OperationStateRule)? {
        guard let scenario = current, let rule = scenario.state(for: request), rule.state != .asIs else { return nil }
        if case .recorded(let replay) = rule.state, !replay.answers(request) { return nil }
        return (scenario.name, rule)
    }

    /// The file at `path` with its recordings read; an error names the file and the field.
    static func read(path: String, reader: RecordingReader?) async throws(ScenarioSwitchError) -> ScenarioFile {
        let file: ScenarioFile
        do {
            file = try ScenarioFile(contentsOf: path)
        } catch {
            throw .unreadable(error)
        }
        let folder = (path as NSString).deletingLastPathComponent
        for replay in file.recordings {
            guard let reader else { throw unread(replay, in: file, at: path) }
            let source = replay.source.hasPrefix("/") || folder.isEmpty ? replay.source : (folder as NSString).appendingPathComponent(replay.source)
            do {
                try replay.load(try await reader(source))
            } catch {
                throw .unreadable(placed(RuleDocumentError(file: file.name, line: nil, column: nil, field: replay.field, message: "\(error)"), at: path))
            }
        }
        return file
    }

    static func unread(_ replay: RecordedReplay, in file: ScenarioFile, at path: String) -> ScenarioSwitchError {
        .unreadable(placed(RuleDocumentError(
            file: file.name, line: nil, column: nil, field: replay.field,
            message: "a recorded state answers from its recording, which kagami proxy, kagami mock and KagamiKit read (--scenarios FILE)"), at: path))
    }

    /// `error` with its field's line and column in the scenario file at `path`.
    static func placed(_ error: RuleDocumentError, at path: String) -> RuleDocumentError {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return error }
        return RuleDocumentReader.placed(error, in: text)
    }

    /// How an exchange a scenario touched is marked in the session and the UI.
    public static func mark(scenario: String, rule: OperationStateRule) -> RuleApplication {
        .scenario(scenario, operation: rule.selector.displayString, state: rule.state.summary)
    }
}
