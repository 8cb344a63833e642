// A scenario file (YAML or JSON, meant for git): named sets of operation states.
import Foundation
import KagamiRules

/// The scenarios a file holds, in the file's order.
///
/// ```yaml
/// scenarios:
///   - name: empty-feed
///     states:
///       - operation: GET /feed
///         state: empty
///   - name: checkout-fails
///     states:
///       - operation: POST /checkout
///         state: error
///         status: 503
/// ```
public struct ScenarioFile: Sendable, Hashable {
    /// The file's name, as errors and the admin API give it.
    public var name: String
    public var scenarios: [Scenario]

    public init(name: String, scenarios: [Scenario]) {
        self.name = name
        self.scenarios = scenarios
    }

    public func scenario(named name: String) -> Scenario? {
        scenarios.first { $0.name == name }
    }

    /// The recordings the file's recorded states answer from, in the file's order.
    public var recordings: [RecordedReplay] {
        scenarios.flatMap(\.rules).compactMap { rule in
            if case .recorded(let replay) = rule.state { replay } else { nil }
        }
    }

    /// Reads a scenario document; `file` names it in errors (`scenarios.yaml:7:9:
    /// scenarios[1].states[0].state: unknown state "broken"`).
    public init(parsing text: String, file: String = "scenarios") throws(RuleDocumentError) {
        let document = try RuleDocumentReader.decode(ScenarioDocument.self, from: text, file: file)
        self.init(name: file, scenarios: document.scenarios.map(\.scenario))
    }

    public init(contentsOf path: String) throws(RuleDocumentError) {
        let document = try RuleDocumentReader.text(contentsOf: path)
        try self.init(parsing: document.text, file: document.file)
    }
}

/// The document as written; each part refuses what it can't read, so the reader's error points
/// at the field.
struct ScenarioDocument: Decodable {
    var scenarios: [ScenarioEntry]

    enum CodingKeys: String, CodingKey, CaseIterable { case scenarios }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scenarios = try container.decode([ScenarioEntry].self, forKey: .scenarios)
        var seen: Set<String> = []
        var list = try container.nestedUnkeyedContainer(forKey: .scenarios)
        for entry in scenarios {
            let element = try list.nestedContainer(keyedBy: ScenarioEntry.CodingKeys.self)
            if !seen.insert(entry.scenario.name).inserted {
                throw DecodingError.dataCorruptedError(
                    forKey: .name, in: element, debugDescription: "a second scenario named \"\(entry.scenario.name)\"")
            }
        }
    }
}

struct ScenarioEntry: Decodable {
    var scenario: Scenario

    enum CodingKeys: String, CodingKey, CaseIterable { case name, states }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        if name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw DecodingError.dataCorruptedError(
                forKey: .name, in: container, debugDescription: "a scenario's name is one word without spaces or \"/\", not \"\(name)\"")
        }
        let states = try container.decode([StateEntry].self, forKey: .states)
        scenario = Scenario(name: name, rules: states.map(\.rule))
    }
}

struct StateEntry: Decodable {
    var rule: OperationStateRule

    enum CodingKeys: String, CodingKey, CaseIterable {
        case operation, host, location, method, state, seconds, status, body, contentType, offline, profile, recording
    }

    static let states = ["as-is", "empty", "loading", "error", "offline", "slow", "recorded"]

    init(from decoder: any Decoder) throws {
        // A typo such as `stat:` must not leave an operation silently as-is.
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let selector: OperationSelector
        if let operation = try container.decodeIfPresent(String.self, forKey: .operation) {
            if container.contains(.location) {
                throw DecodingError.dataCorruptedError(
                    forKey: .location, in: container, debugDescription: "give an operation or a location, not both")
            }
            do {
                selector = try OperationSelector(operation: operation, host: container.decodeIfPresent(String.self, forKey: .host))
            } catch let error as OperationSelectorError {
                throw DecodingError.dataCorruptedError(forKey: .operation, in: container, debugDescription: error.description)
            }
        } else if let location = try container.decodeIfPresent(Location.self, forKey: .location) {
            selector = OperationSelector(location: location, method: try container.decodeIfPresent(String.self, forKey: .method))
        } else {
            throw DecodingError.keyNotFound(
                CodingKeys.operation, DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "an operation or a location"))
        }
        let word = try container.decode(String.self, forKey: .state)
        let state: OperationState
        switch word {
        case "as-is":
            state = .asIs
        case "empty":
            state = .empty
        case "loading":
            if let seconds = try container.decodeIfPresent(Double.self, forKey: .seconds) {
                guard seconds >= 0, seconds <= 86_400 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .seconds, in: container, debugDescription: "seconds is between 0 and 86400, not \(seconds)")
                }
                state = .loading(.milliseconds(Int64((seconds * 1000).rounded())))
            } else {
                state = .loading(nil)
            }
        case "error":
            let status = try container.decodeIfPresent(Int.self, forKey: .status) ?? 500
            guard (400...599).contains(status) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .status, in: container, debugDescription: "an error's status is from 400 to 599, not \(status)")
            }
            state = .error(
                status: status, body: try container.decodeIfPresent(String.self, forKey: .body),
                contentType: try container.decodeIfPresent(String.self, forKey: .contentType))
        case "offline":
            let kindWord = try container.decodeIfPresent(String.self, forKey: .offline) ?? OfflineKind.reset.rawValue
            guard let kind = OfflineKind(rawValue: kindWord) else {
                let kinds = OfflineKind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw DecodingError.dataCorruptedError(
                    forKey: .offline, in: container, debugDescription: "unknown way to be offline \"\(kindWord)\" (one of \(kinds))")
            }
            state = .offline(kind)
        case "slow":
            state = .slow(try Self.profile(in: container))
        case "recorded":
            let source = try container.decode(String.self, forKey: .recording)
            guard !source.isEmpty else {
                throw DecodingError.dataCorruptedError(
                    forKey: .recording, in: container, debugDescription: "a recorded state names its recording: a session file or a .har")
            }
            state = .recorded(RecordedReplay(source: source, field: RuleDocumentReader.fieldName(container.codingPath + [CodingKeys.recording as any CodingKey])))
        default:
            let known = Self.states.map { "\"\($0)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                forKey: .state, in: container, debugDescription: "unknown state \"\(word)\" (one of \(known))")
        }
        rule = OperationStateRule(selector: selector, state: state)
    }

    /// `profile: 3G` (a throttling preset, by name) or `profile: {downloadKbps: 64, uploadKbps:
    /// 32, latencyMs: 300}` (the fields of a throttling profile, as the rules write one).
    static func profile(in container: KeyedDecodingContainer<CodingKeys>) throws -> ThrottleProfile {
        let presets = ThrottleProfile.builtInPresets.map { "\"\($0.name)\"" }.joined(separator: ", ")
        guard container.contains(.profile) else {
            throw DecodingError.dataCorruptedError(
                forKey: .state, in: container,
                debugDescription: "a slow state names its network in profile: a preset (\(presets)) or {downloadKbps, uploadKbps, latencyMs}")
        }
        if let name = try? container.decode(String.self, forKey: .profile) {
            guard let preset = ThrottleProfile.builtInPresets.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .profile, in: container, debugDescription: "unknown throttling preset \"\(name)\" (one of \(presets))")
            }
            return preset
        }
        return try container.decode(ThrottleProfile.self, forKey: .profile)
    }
}
