import Foundation
import KagamiFlow

/// Charles's Breakpoint Settings: on or off, and a list of locations that pause exchanges at the
/// request, at the response, or at both. Read from its own document (`--breakpoints FILE`) or
/// replaced through the admin API while the proxy runs.
public struct BreakpointSettings: Sendable, Hashable, Codable {
    public var isEnabled: Bool
    public var breakpoints: [Breakpoint]
    /// Seconds after which a held exchange continues unchanged; nil waits for a decision forever.
    public var autoContinueSeconds: Double?

    public init(isEnabled: Bool = true, breakpoints: [Breakpoint] = [], autoContinueSeconds: Double? = nil) {
        self.isEnabled = isEnabled
        self.breakpoints = breakpoints
        self.autoContinueSeconds = autoContinueSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case isEnabled = "enabled", breakpoints, autoContinueSeconds = "autoContinue"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isEnabled = try container.decode(.isEnabled, default: true)
        breakpoints = try container.decode(.breakpoints, default: [])
        autoContinueSeconds = try container.decodeIfPresent(Double.self, forKey: .autoContinueSeconds)
        if let seconds = autoContinueSeconds, !(seconds > 0 && seconds <= 86_400) {
            throw DecodingError.dataCorruptedError(
                forKey: .autoContinueSeconds, in: container,
                debugDescription: "autoContinue must be a number of seconds above 0 and at most 86400, not \(seconds)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(isEnabled, forKey: .isEnabled)
        try container.encode(breakpoints, forKey: .breakpoints)
        try container.encodeIfPresent(autoContinueSeconds, forKey: .autoContinueSeconds)
    }

    /// Reads a breakpoints document, YAML or JSON; `file` names it in errors.
    public init(parsing text: String, file: String = "breakpoints") throws(RuleDocumentError) {
        self = try RuleDocumentReader.decode(BreakpointSettings.self, from: text, file: file)
    }

    public init(contentsOf path: String) throws(RuleDocumentError) {
        let name = (path as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw RuleDocumentError(file: name, line: nil, column: nil, field: "", message: "can't read \(path) as UTF-8 text")
        }
        try self.init(parsing: text, file: name)
    }

    /// Where `request` stops, merged over every enabled breakpoint that matches it; nil when
    /// it doesn't stop at all.
    public func stops(for request: FlowRequest) -> BreakpointStops? {
        guard isEnabled else { return nil }
        var stops = BreakpointStops(request: false, response: false, locations: [])
        for breakpoint in breakpoints where breakpoint.isEnabled && (breakpoint.request || breakpoint.response) {
            guard breakpoint.matcher.matches(request) else { continue }
            stops.request = stops.request || breakpoint.request
            stops.response = stops.response || breakpoint.response
            stops.locations.append(breakpoint.location)
        }
        return stops.locations.isEmpty ? nil : stops
    }
}

/// One breakpoint: a location, and whether it pauses the request, the response, or both.
public struct Breakpoint: Sendable, Hashable, Codable {
    public var location: Location
    public var request: Bool
    public var response: Bool
    public var isEnabled: Bool
    let matcher: LocationMatcher

    public init(location: Location, request: Bool = true, response: Bool = false, isEnabled: Bool = true) {
        self.location = location
        self.request = request
        self.response = response
        self.isEnabled = isEnabled
        matcher = LocationMatcher(location)
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case location, request, response, isEnabled = "enabled"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            location: try container.decode(Location.self, forKey: .location),
            request: try container.decode(.request, default: true),
            response: try container.decode(.response, default: false),
            isEnabled: try container.decode(.isEnabled, default: true))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(location, forKey: .location)
        try container.encode(request, forKey: .request)
        try container.encode(response, forKey: .response)
        try container.encode(isEnabled, forKey: .isEnabled)
    }

    public static func == (lhs: Breakpoint, rhs: Breakpoint) -> Bool {
        lhs.location == rhs.location && lhs.request == rhs.request && lhs.response == rhs.response && lhs.isEnabled == rhs.isEnabled
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(location)
        hasher.combine(request)
        hasher.combine(response)
        hasher.combine(isEnabled)
    }
}

/// Where one exchange pauses, and the locations that made it.
public struct BreakpointStops: Sendable, Hashable {
    public var request: Bool
    public var response: Bool
    public var locations: [Location]
}
