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
public typealias BlockListRule = LocationListRule
