import KagamiFlow

/// Charles's No Caching: strips validators so every request reaches the server and every
/// response is fresh. Requests lose If-Modified-Since and If-None-Match and gain
/// `Pragma: no-cache` and `Cache-Control: no-cache`; responses lose Expires, Last-Modified and
/// ETag and gain `Expires: 0` and `Cache-Control: no-cache`.
public struct NoCachingRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    /// Empty: every request.
    public var locations: [Location]

    public init(name: String, isEnabled: Bool = true, locations: [Location] = []) {
        self.name = name
        self.isEnabled = isEnabled
        self.locations = locations
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", locations
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        locations = try container.decode(.locations, default: [])
    }

    /// The request half; returns what changed, in words.
    static func strip(_ headers: inout HeaderFields) -> String {
        var removed: [String] = []
        for name in ["If-Modified-Since", "If-None-Match"] where headers.contains(name) {
            headers.remove(name)
            removed.append(name)
        }
        headers.set("Pragma", "no-cache")
        headers.set("Cache-Control", "no-cache")
        return describe(removed: removed, added: ["Pragma: no-cache", "Cache-Control: no-cache"])
    }

    static func stripResponse(_ headers: inout HeaderFields) -> String {
        var removed: [String] = []
        for name in ["Expires", "Last-Modified", "ETag"] where headers.contains(name) {
            headers.remove(name)
            removed.append(name)
        }
        headers.set("Expires", "0")
        headers.set("Cache-Control", "no-cache")
        return describe(removed: removed, added: ["Expires: 0", "Cache-Control: no-cache"])
    }

    private static func describe(removed: [String], added: [String]) -> String {
        let additions = "set " + added.joined(separator: ", ")
        return removed.isEmpty ? additions : "removed \(removed.joined(separator: ", ")); \(additions)"
    }
}
