import KagamiFlow

/// A named list of locations with what to do to requests: Charles's Block List (matched
/// requests are blocked) and Allow List (unmatched requests are blocked) share this shape.
public struct LocationListRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    public var locations: [Location]
    /// What blocked requests get.
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
