import KagamiJSON
import OrderedCollections

/// Reverse matching: which variables make the template expand to a given request target.
extension URITemplate {
    /// One `name=value` pair of a request's query, decoded (`+` reads as a space).
    public struct QueryParameter: Sendable, Hashable {
        public let name: String
        /// `nil` when the parameter has no `=` (`?flag`).
        public let value: String?

        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// A request target prepared once, so that a router can match it against many templates.
    public struct Target: Sendable {
        public let path: String
        public let query: String?
        let normalizedPath: [UInt8]
        /// The query decoded into name/value pairs, in request order.
        public let queryParameters: [QueryParameter]

        public init(path: String, query: String?) {
            self.path = path
            self.query = query
            self.normalizedPath = PercentEncoding.normalize(path)
            self.queryParameters = query.map(Self.parameters(of:)) ?? []
        }

        /// `/path?query`; the query starts at the first `?`.
        public init(_ target: String) {
            if let mark = target.firstIndex(of: "?") {
                self.init(path: String(target[..<mark]), query: String(target[target.index(after: mark)...]))
            } else {
                self.init(path: target, query: nil)
            }
        }

        static func parameters(of query: String) -> [QueryParameter] {
            let bytes = Array(query.utf8)
            return bytes.split(separator: UInt8(ascii: "&")).map { piece in
                guard let equals = piece.firstIndex(of: UInt8(ascii: "=")) else {
                    return QueryParameter(name: PercentEncoding.decode(piece, plusIsSpace: true), value: nil)
                }
                return QueryParameter(
                    name: PercentEncoding.decode(piece[..<equals], plusIsSpace: true),
                    value: PercentEncoding.decode(piece[(equals + 1)...], plusIsSpace: true))
            }
        }
    }

    /// The outcome of a successful match.
    public struct Match: Sendable, Equatable {
        /// Decoded values by variable name (as written in the template), in template order.
        /// Variables that matched nothing (absent optional ones) are not listed.
        public var variables: OrderedDictionary<String, Value>
        /// Query parameters that no part of the template names, in request order.
        public var unmatchedQueryParameters: [QueryParameter]
    }

    public func match(_ target: Target) -> Match? {
        guard let pathVariables = pathPattern.match(target.normalizedPath),
              let query = queryPattern.match(target.queryParameters)
        else { return nil }
        var variables = OrderedDictionary<String, Value>()
        for (name, value) in pathVariables + query.variables {
            // A variable used twice must capture the same value both times.
            if let earlier = variables[name], earlier != value { return nil }
            variables[name] = value
        }
        return Match(variables: variables, unmatchedQueryParameters: query.unmatched)
    }

    /// Matches `/path?query`.
    public func match(_ target: String) -> Match? {
        match(Target(target))
    }

    public func match(path: String, query: String?) -> Match? {
        match(Target(path: path, query: query))
    }

    /// The template without its query part: everything before the first `{?…}` or `{&…}`
    /// expression or literal `?` (`/users/{id}{?fields}` → `/users/{id}`).
    public var pathTemplate: URITemplate {
        guard queryStart != nil else { return self }
        let path = Self.split(components, at: queryStart).path
        let text = path.map { component in
            switch component {
            case .literal(let literal): literal
            case .expression(let expression): expression.description
            }
        }.joined()
        return URITemplate(text: text, components: path)
    }

    /// Whether the template has a query part (see `pathTemplate`).
    public var hasQuery: Bool { queryStart != nil }

    static func findQueryStart(_ components: [Component]) -> (component: Int, characterOffset: Int)? {
        for (index, component) in components.enumerated() {
            switch component {
            case .literal(let literal):
                if let mark = literal.firstIndex(of: "?") {
                    return (index, literal.distance(from: literal.startIndex, to: mark))
                }
            case .expression(let expression):
                if expression.operator == .query || expression.operator == .queryContinuation {
                    return (index, 0)
                }
            }
        }
        return nil
    }

    static func split(
        _ components: [Component], at start: (component: Int, characterOffset: Int)?
    ) -> (path: [Component], query: [Component]) {
        guard let start else { return (components, []) }
        var path = Array(components[..<start.component])
        var query = Array(components[(start.component + 1)...])
        switch components[start.component] {
        case .literal(let literal):
            let mark = literal.index(literal.startIndex, offsetBy: start.characterOffset)
            if mark > literal.startIndex { path.append(.literal(String(literal[..<mark]))) }
            query.insert(.literal(String(literal[mark...])), at: 0)
        case .expression:
            query.insert(components[start.component], at: 0)
        }
        return (path, query)
    }
}

extension URITemplate.Match {
    /// The variables as a JSON object (lists as arrays, associative arrays as objects).
    public var json: JSONValue {
        .object(JSONObject(uniqueKeysWithValues: variables.map { ($0.key, $0.value.json) }))
    }
}
