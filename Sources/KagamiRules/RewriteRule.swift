import Foundation
import KagamiFlow

/// The eleven kinds of change Charles's Rewrite tool knows.
public enum RewriteRuleType: String, Sendable, Hashable, Codable, CaseIterable {
    case addHeader = "Add Header"
    case modifyHeader = "Modify Header"
    case removeHeader = "Remove Header"
    case host = "Host"
    case path = "Path"
    case url = "URL"
    case addQueryParam = "Add Query Param"
    case modifyQueryParam = "Modify Query Param"
    case removeQueryParam = "Remove Query Param"
    case responseStatus = "Response Status"
    case body = "Body"

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        // "Add Header", "add header" and "addHeader" all name the same type.
        let key = text.lowercased().filter { $0 != " " && $0 != "-" && $0 != "_" }
        guard let type = Self.allCases.first(where: { $0.rawValue.lowercased().filter { $0 != " " } == key }) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown rule type \"\(text)\"")
        }
        self = type
    }

    /// Which parts of an exchange the type can change at all.
    var allowedTargets: Set<RewriteTarget> {
        switch self {
        case .host, .path, .url, .addQueryParam, .modifyQueryParam, .removeQueryParam: [.request]
        case .responseStatus: [.response]
        case .addHeader, .modifyHeader, .removeHeader, .body: [.request, .response, .both]
        }
    }

    /// The parts it can change, in the order an editor offers them (request first).
    public var targets: [RewriteTarget] { RewriteTarget.allCases.filter(allowedTargets.contains) }

    /// Acts on a header or query parameter by name: match and replace have a name as well as a value.
    public var isNamed: Bool {
        switch self {
        case .addHeader, .modifyHeader, .removeHeader, .addQueryParam, .modifyQueryParam, .removeQueryParam: true
        case .host, .path, .url, .responseStatus, .body: false
        }
    }

    /// Looks for something to change; Add rules only add, so their `match` means nothing.
    public var matches: Bool { self != .addHeader && self != .addQueryParam }

    /// Puts something in place; Remove rules only remove, so their `replace` means nothing.
    public var replaces: Bool { self != .removeHeader && self != .removeQueryParam }
}

/// Whether a Rewrite rule acts on the request, the response or both.
public enum RewriteTarget: String, Sendable, Hashable, Codable, CaseIterable {
    case request, response, both

    var includesRequest: Bool { self != .response }
    var includesResponse: Bool { self != .request }
}

public struct RewriteMatch: Sendable, Hashable, Codable {
    /// Header or query parameter name; plain names compare ignoring case. Blank: any.
    public var name: String
    /// Blank: any. Plain values match anywhere inside unless `wholeValue`.
    public var value: String
    public var regex: Bool
    public var wholeValue: Bool

    public init(name: String = "", value: String = "", regex: Bool = false, wholeValue: Bool = false) {
        self.name = name
        self.value = value
        self.regex = regex
        self.wholeValue = wholeValue
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, value, regex, wholeValue
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        value = try container.decode(.value, default: "")
        regex = try container.decode(.regex, default: false)
        wholeValue = try container.decode(.wholeValue, default: false)
        for (key, source) in [(CodingKeys.name, name), (.value, value)] where regex {
            do {
                _ = try TextPattern(source, regex: true, wholeValue: false, caseInsensitive: false)
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "invalid regular expression \"\(error.pattern)\": \(error.reason)")
            }
        }
    }
}

public struct RewriteReplacement: Sendable, Hashable, Codable {
    /// Blank keeps the matched name.
    public var name: String
    /// Blank keeps the matched value, except for Add rules. `$1`… name regex groups.
    public var value: String

    public init(name: String = "", value: String = "") {
        self.name = name
        self.value = value
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, value
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        value = try container.decode(.value, default: "")
    }
}

/// One change inside a Rewrite set.
public struct RewriteRule: Sendable, Hashable, Codable {
    public var type: RewriteRuleType
    public var isEnabled: Bool
    public var target: RewriteTarget
    public var match: RewriteMatch
    public var replace: RewriteReplacement
    /// Replace every match instead of the first.
    public var replaceAll: Bool

    public init(
        _ type: RewriteRuleType, isEnabled: Bool = true, target: RewriteTarget? = nil,
        match: RewriteMatch = RewriteMatch(), replace: RewriteReplacement = RewriteReplacement(), replaceAll: Bool = false
    ) {
        self.type = type
        self.isEnabled = isEnabled
        self.target = target ?? Self.defaultTarget(for: type)
        self.match = match
        self.replace = replace
        self.replaceAll = replaceAll
    }

    static func defaultTarget(for type: RewriteRuleType) -> RewriteTarget {
        type == .responseStatus ? .response : .request
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, isEnabled = "enabled", target = "where", match, replace, replaceAll
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(RewriteRuleType.self, forKey: .type)
        isEnabled = try container.decode(.isEnabled, default: true)
        target = try container.decode(.target, default: Self.defaultTarget(for: type))
        match = try container.decode(.match, default: RewriteMatch())
        replace = try container.decode(.replace, default: RewriteReplacement())
        replaceAll = try container.decode(.replaceAll, default: false)
        guard type.allowedTargets.contains(target) else {
            throw DecodingError.dataCorruptedError(
                forKey: .target, in: container,
                debugDescription: "a \(type.rawValue) rule can't act on the \(target.rawValue)")
        }
        if [.addHeader, .addQueryParam].contains(type), replace.name.isEmpty {
            throw DecodingError.dataCorruptedError(
                forKey: .replace, in: container, debugDescription: "\(type.rawValue) needs replace.name")
        }
    }
}

/// Charles's Rewrite set: a name, an on/off switch, the locations it covers and its rules, run
/// in order.
public struct RewriteSet: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    /// Empty: every request.
    public var locations: [Location]
    public var rules: [RewriteRule]

    public init(name: String, isEnabled: Bool = true, locations: [Location] = [], rules: [RewriteRule]) {
        self.name = name
        self.isEnabled = isEnabled
        self.locations = locations
        self.rules = rules
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", locations, rules
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        locations = try container.decode(.locations, default: [])
        rules = try container.decode([RewriteRule].self, forKey: .rules)
    }
}
