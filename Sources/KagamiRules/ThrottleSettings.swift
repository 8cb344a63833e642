import Foundation
import KagamiFlow

/// Charles's Throttle Settings: on or off, which profile, only for some hosts, and the custom
/// presets next to the built-in ones.
public struct ThrottleSettings: Sendable, Hashable, Codable {
    public var isEnabled: Bool
    /// Name of the preset in use (built-in or custom), unless `profile` is given.
    public var preset: String?
    /// A profile given in place, without a preset name.
    public var profile: ThrottleProfile?
    /// Empty: every request is throttled.
    public var onlyFor: [Location]
    /// Presets the user added; names must differ from the built-in ones.
    public var customPresets: [ThrottleProfile]

    public init(
        isEnabled: Bool = false, preset: String? = nil, profile: ThrottleProfile? = nil,
        onlyFor: [Location] = [], customPresets: [ThrottleProfile] = []
    ) {
        self.isEnabled = isEnabled
        self.preset = preset
        self.profile = profile
        self.onlyFor = onlyFor
        self.customPresets = customPresets
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case isEnabled = "enabled", preset, profile, onlyFor, customPresets = "presets"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isEnabled = try container.decode(.isEnabled, default: false)
        preset = try container.decodeIfPresent(String.self, forKey: .preset)
        profile = try container.decodeIfPresent(ThrottleProfile.self, forKey: .profile)
        onlyFor = try container.decode(.onlyFor, default: [])
        customPresets = try container.decode(.customPresets, default: [])
        for preset in customPresets where Self.builtInNames.contains(preset.name) {
            throw DecodingError.dataCorruptedError(
                forKey: .customPresets, in: container,
                debugDescription: "preset \"\(preset.name)\" is built in; give the custom one another name")
        }
        if let preset, self.preset(named: preset) == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .preset, in: container,
                debugDescription: "no preset named \"\(preset)\" (known: \(allPresets.map(\.name).joined(separator: ", ")))")
        }
        if isEnabled, preset == nil, profile == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .isEnabled, in: container, debugDescription: "throttling is enabled but names no preset or profile")
        }
    }

    static let builtInNames = Set(ThrottleProfile.builtInPresets.map(\.name))

    /// Built-in presets first, then the custom ones.
    public var allPresets: [ThrottleProfile] { ThrottleProfile.builtInPresets + customPresets }

    public func preset(named name: String) -> ThrottleProfile? {
        allPresets.first { $0.name == name }
    }

    /// The profile in force, whether given in place or by name.
    public var activeProfile: ThrottleProfile? {
        guard isEnabled else { return nil }
        return profile ?? preset.flatMap { preset(named: $0) }
    }

    /// Adds or replaces a custom preset.
    public mutating func savePreset(_ profile: ThrottleProfile) throws(ThrottlePresetError) {
        guard !Self.builtInNames.contains(profile.name) else { throw .builtIn(profile.name) }
        if let index = customPresets.firstIndex(where: { $0.name == profile.name }) {
            customPresets[index] = profile
        } else {
            customPresets.append(profile)
        }
    }

    public mutating func deletePreset(named name: String) throws(ThrottlePresetError) {
        guard !Self.builtInNames.contains(name) else { throw .builtIn(name) }
        guard let index = customPresets.firstIndex(where: { $0.name == name }) else { throw .unknown(name) }
        customPresets.remove(at: index)
        if preset == name { preset = nil }
    }

    /// The custom presets as a JSON document another installation can import.
    public func exportedPresets() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(ThrottlePresetDocument(presets: customPresets))
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads presets exported by `exportedPresets()` (JSON or YAML) and saves each one.
    @discardableResult
    public mutating func importPresets(from text: String, file: String) throws(RuleDocumentError) -> [ThrottleProfile] {
        let document = try RuleDocumentReader.decode(ThrottlePresetDocument.self, from: text, file: file)
        for (index, profile) in document.presets.enumerated() {
            do {
                try savePreset(profile)
            } catch {
                throw RuleDocumentError(file: file, line: nil, column: nil, field: "presets[\(index)].name", message: error.description)
            }
        }
        return document.presets
    }
}

/// The file format of exported presets.
struct ThrottlePresetDocument: Codable {
    var presets: [ThrottleProfile]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case presets
    }

    init(presets: [ThrottleProfile]) {
        self.presets = presets
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        presets = try decoder.container(keyedBy: CodingKeys.self).decode([ThrottleProfile].self, forKey: .presets)
    }
}

public enum ThrottlePresetError: Error, Sendable, Hashable, CustomStringConvertible {
    case builtIn(String)
    case unknown(String)

    public var description: String {
        switch self {
        case .builtIn(let name): "preset \"\(name)\" is built in and can't be changed or deleted"
        case .unknown(let name): "no custom preset named \"\(name)\""
        }
    }
}
