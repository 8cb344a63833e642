/// The rules document's `redaction` section: what `kagami proxy` (into a session file or a
/// shared store) and `kagami push` replace by a marker before anything is written. It changes
/// no traffic; the store applies it (`FlowRedaction`).
///
///     redaction:
///       headers: [Authorization, Cookie, Set-Cookie, X-Api-Key]   # default: the credentials
///       query: [token, api_key]
///       jsonFields: [password, /user/ssn]   # a member name at any depth, or a JSON pointer
public struct RedactionSettings: Sendable, Hashable, Codable {
    /// Header names; nil: Authorization, Proxy-Authorization, Cookie, Set-Cookie.
    public var headers: [String]?
    /// Query parameter (and form field) names.
    public var query: [String]
    /// JSON body fields: a member name, or a JSON pointer starting with `/`.
    public var jsonFields: [String]

    public init(headers: [String]? = nil, query: [String] = [], jsonFields: [String] = []) {
        self.headers = headers
        self.query = query
        self.jsonFields = jsonFields
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case headers, query, jsonFields
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        headers = try container.decodeIfPresent([String].self, forKey: .headers)
        query = try container.decode(.query, default: [])
        jsonFields = try container.decode(.jsonFields, default: [])
        for (key, names) in [(CodingKeys.headers, headers ?? []), (.query, query), (.jsonFields, jsonFields)] {
            if let index = names.firstIndex(where: \.isEmpty) {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: decoder.codingPath + [key, AnyCodingKey(intValue: index) ?? AnyCodingKey(stringValue: "\(index)")],
                    debugDescription: "an empty name redacts nothing: give a name" + (key == .jsonFields ? " or a JSON pointer (/user/password)" : "")))
            }
        }
    }
}
