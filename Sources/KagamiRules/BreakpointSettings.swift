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
        self.breakpoints = Self.named(breakpoints)
        self.autoContinueSeconds = autoContinueSeconds
    }

    /// Each breakpoint without a name given the text of its location (`*://api.example.com/users/*`),
    /// with ` (2)`, ` (3)`… after it when another breakpoint already has that name. Written
    /// back with the settings, so a name stays what it was first given.
    static func named(_ breakpoints: [Breakpoint]) -> [Breakpoint] {
        var taken = Set(breakpoints.map(\.name).filter { !$0.isEmpty })
        return breakpoints.map { breakpoint in
            guard breakpoint.name.isEmpty else { return breakpoint }
            var named = breakpoint
            let base = breakpoint.location.displayString
            var candidate = base
            var number = 2
            while taken.contains(candidate) {
                candidate = "\(base) (\(number))"
                number += 1
            }
            taken.insert(candidate)
            named.name = candidate
            return named
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case isEnabled = "enabled", breakpoints, autoContinueSeconds = "autoContinue"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isEnabled = try container.decode(.isEnabled, default: true)
        let given: [Breakpoint] = try container.decode(.breakpoints, default: [])
        var seen: [String: Int] = [:]
        for (index, breakpoint) in given.enumerated() where !breakpoint.name.isEmpty {
            if let first = seen[breakpoint.name] {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: container.codingPath + [CodingKeys.breakpoints, BreakpointIndex(index), Breakpoint.CodingKeys.name],
                    debugDescription: "the name \"\(breakpoint.name)\" is already that of breakpoints[\(first)]; each breakpoint needs a name of its own"))
            }
            seen[breakpoint.name] = index
        }
        breakpoints = Self.named(given)
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
        let document = try RuleDocumentReader.text(contentsOf: path)
        try self.init(parsing: document.text, file: document.file)
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

    /// The breakpoints that stop the WebSocket messages of a connection whose handshake was
    /// `request`; nil when none does.
    public func messageStops(for request: FlowRequest) -> MessageBreakpoints? {
        guard isEnabled else { return nil }
        let matching = breakpoints.filter { $0.isEnabled && $0.messages != nil && $0.matcher.matches(request) }
        return matching.isEmpty ? nil : MessageBreakpoints(breakpoints: matching)
    }
}

/// A position in the breakpoint list, for an error's coding path.
private struct BreakpointIndex: CodingKey {
    var intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// Which WebSocket messages a breakpoint stops.
public enum MessageDirections: String, Sendable, Hashable, Codable, CaseIterable {
    /// From the client to the server.
    case send
    /// From the server to the client.
    case receive
    case both

    func includes(_ direction: WebSocketMessage.Direction) -> Bool {
        switch self {
        case .both: true
        case .send: direction == .send
        case .receive: direction == .receive
        }
    }
}

/// The message breakpoints over one WebSocket connection.
public struct MessageBreakpoints: Sendable {
    let breakpoints: [Breakpoint]

    /// True when some message going that way may stop (its text decides).
    public func covers(_ direction: WebSocketMessage.Direction) -> Bool {
        breakpoints.contains { $0.messages?.includes(direction) == true }
    }

    /// The locations of the breakpoints that stop this data message; empty when none does.
    /// A breakpoint with message text stops only text messages that contain (or, as a regular
    /// expression, match) it.
    public func stops(_ opcode: WebSocketMessage.Opcode, text: String?, going direction: WebSocketMessage.Direction) -> [Location] {
        guard !opcode.isControl else { return [] }
        return breakpoints.filter { breakpoint in
            guard breakpoint.messages?.includes(direction) == true else { return false }
            guard let pattern = breakpoint.messagePattern else { return true }
            guard let text else { return false }
            return pattern.matches(text)
        }.map(\.location)
    }
}

/// One breakpoint: a location, and whether it pauses the request, the response, the
/// WebSocket messages going one way or both (those whose text matches `messageText`, when
/// given), or several of these.
public struct Breakpoint: Sendable, Hashable, Codable {
    /// What tools and the admin API call it by; unique in its list. Optional in a document:
    /// `BreakpointSettings` names those without one after their location.
    public var name: String
    public var location: Location
    public var request: Bool
    public var response: Bool
    /// The WebSocket messages it stops, on connections whose handshake matches the location.
    public var messages: MessageDirections?
    /// Stops only text messages containing this (blank: every data message).
    public var messageText: String
    /// `messageText` is a regular expression.
    public var messageRegex: Bool
    public var isEnabled: Bool
    let matcher: LocationMatcher
    let messagePattern: TextPattern?

    public init(
        name: String = "", location: Location, request: Bool = true, response: Bool = false,
        messages: MessageDirections? = nil, messageText: String = "", messageRegex: Bool = false, isEnabled: Bool = true
    ) {
        self.name = name
        self.location = location
        self.request = request
        self.response = response
        self.messages = messages
        self.messageText = messageText
        self.messageRegex = messageRegex
        self.isEnabled = isEnabled
        matcher = LocationMatcher(location)
        messagePattern = messageText.isEmpty
            ? nil
            : ((try? TextPattern(messageText, regex: messageRegex, wholeValue: false, caseInsensitive: false))
                ?? (try? TextPattern(messageText, regex: false, wholeValue: false, caseInsensitive: false)))
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, location, request, response, messages, messageText, messageRegex, isEnabled = "enabled"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let messages = try container.decodeIfPresent(MessageDirections.self, forKey: .messages)
        let messageText: String = try container.decode(.messageText, default: "")
        let messageRegex: Bool = try container.decode(.messageRegex, default: false)
        if messageRegex {
            do {
                _ = try TextPattern(messageText, regex: true, wholeValue: false, caseInsensitive: false)
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .messageText, in: container, debugDescription: "invalid regular expression \"\(error.pattern)\": \(error.reason)")
            }
        }
        self.init(
            name: try container.decode(.name, default: ""),
            location: try container.decode(Location.self, forKey: .location),
            // A breakpoint on messages alone pauses no request unless it says so.
            request: try container.decode(.request, default: messages == nil),
            response: try container.decode(.response, default: false),
            messages: messages, messageText: messageText, messageRegex: messageRegex,
            isEnabled: try container.decode(.isEnabled, default: true))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !name.isEmpty { try container.encode(name, forKey: .name) }
        try container.encode(location, forKey: .location)
        try container.encode(request, forKey: .request)
        try container.encode(response, forKey: .response)
        try container.encodeIfPresent(messages, forKey: .messages)
        if !messageText.isEmpty { try container.encode(messageText, forKey: .messageText) }
        if messageRegex { try container.encode(messageRegex, forKey: .messageRegex) }
        try container.encode(isEnabled, forKey: .isEnabled)
    }

    public static func == (lhs: Breakpoint, rhs: Breakpoint) -> Bool {
        lhs.name == rhs.name && lhs.location == rhs.location && lhs.request == rhs.request && lhs.response == rhs.response && lhs.messages == rhs.messages
            && lhs.messageText == rhs.messageText && lhs.messageRegex == rhs.messageRegex && lhs.isEnabled == rhs.isEnabled
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(location)
        hasher.combine(request)
        hasher.combine(response)
        hasher.combine(messages)
        hasher.combine(messageText)
        hasher.combine(isEnabled)
    }
}

/// Where one exchange pauses, and the locations that made it.
public struct BreakpointStops: Sendable, Hashable {
    public var request: Bool
    public var response: Bool
    public var locations: [Location]
}
