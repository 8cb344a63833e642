import KagamiFlow

/// Charles's Map Remote: requests to `from` are sent to `to` instead. Blank destination fields
/// keep the request's own; a destination path ending in `*` takes the part of the path left after
/// the source's trailing `*` (directory to directory), any other path replaces it (file to file).
public struct MapRemoteRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    public var from: Location
    public var to: Location
    /// Keep the client's Host header instead of naming the new destination.
    public var preserveHost: Bool

    public init(name: String, isEnabled: Bool = true, from: Location, to: Location, preserveHost: Bool = false) {
        self.name = name
        self.isEnabled = isEnabled
        self.from = from
        self.to = to
        self.preserveHost = preserveHost
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", from, to, preserveHost
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        from = try container.decode(Location.self, forKey: .from)
        to = try container.decode(Location.self, forKey: .to)
        preserveHost = try container.decode(.preserveHost, default: false)
    }

    /// The request as it goes to the new destination.
    func mapped(_ request: FlowRequest, source: LocationMatcher) -> FlowRequest {
        var mapped = request
        let scheme = to.protocol.isEmpty ? request.scheme : to.protocol.lowercased()
        mapped.scheme = scheme
        if !to.host.isEmpty { mapped.host = to.host }
        if let port = to.port {
            mapped.port = port
        } else if request.port == FlowRequest.defaultPort(for: request.scheme) {
            mapped.port = FlowRequest.defaultPort(for: scheme)
        }
        var path = request.path
        if to.path.hasSuffix("*") {
            path = String(to.path.dropLast()) + (source.remainingPath(of: request) ?? "")
        } else if !to.path.isEmpty {
            path = to.path
        }
        let query = to.query.isEmpty ? request.query : to.query
        mapped.target = query.map { "\(path)?\($0)" } ?? path
        if !preserveHost {
            mapped.headers.set("Host", mapped.authority)
        }
        return mapped
    }
}
