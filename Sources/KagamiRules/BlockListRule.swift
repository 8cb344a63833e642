import KagamiFlow

/// What a blocked request gets: the connection closed without a word, or a 403.
public enum BlockAction: String, Sendable, Hashable, Codable, CaseIterable {
    case dropConnection = "drop"
    case forbidden = "403"

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let action = BlockAction(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown block action \"\(text)\" (expected drop or 403)")
        }
        self = action
    }

    var summary: String {
        switch self {
        case .dropConnection: "dropped the connection"
        case .forbidden: "answered 403 Forbidden"
        }
    }
}

/// Charles's Block List: requests to these locations never reach the server.
public struct BlockListRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    public var locations: [Location]
    public var action: BlockAction

    public init(name: String, isEnabled: Bool = true, locations: [Location], action: BlockAction = .forbidden) {
        self.name = name
        self.isEnabled = isEnabled
        self.locations = locations
        self.action = action
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", locations, action
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        locations = try container.decode([Location].self, forKey: .locations)
        action = try container.decode(.action, default: .forbidden)
    }
}

/// Charles's Allow List: once any is enabled, only requests to their locations go through.
/// A Block List match still blocks an allowed request.
public struct AllowListRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    public var locations: [Location]
    /// What requests outside the list get.
    public var action: BlockAction

    public init(name: String, isEnabled: Bool = true, locations: [Location], action: BlockAction = .forbidden) {
        self.name = name
        self.isEnabled = isEnabled
        self.locations = locations
        self.action = action
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", locations, action
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        locations = try container.decode([Location].self, forKey: .locations)
        action = try container.decode(.action, default: .forbidden)
    }
}
