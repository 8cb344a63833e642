/// An RFC 6570 URI template, parsed once and then expanded into URIs or matched against
/// request targets (the mock server routes with `match`).
public struct URITemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    public let text: String
    /// Literal text and expressions in template order.
    public let components: [Component]

    /// Compiled once because the mock server matches every request against every route.
    let pathPattern: PathPattern
    let queryPattern: QueryPattern
    /// Where the query part starts: the component index and, for a literal, the offset of
    /// its `?` in characters. `nil` when the template has no query part.
    let queryStart: (component: Int, characterOffset: Int)?

    public enum Component: Sendable, Hashable {
        case literal(String)
        case expression(Expression)
    }

    /// One `{…}` expression.
    public struct Expression: Sendable, Hashable {
        public let `operator`: Operator
        public let variables: [Variable]
        /// 1-based character position of the `{` in the template.
        public let position: Int
    }

    /// A variable of an expression with its modifier (a `varspec` in the RFC).
    public struct Variable: Sendable, Hashable {
        /// The name as written, pct-encoded triplets included (`{user%2Did}` → `user%2Did`).
        public let name: String
        public let modifier: Modifier
        /// 1-based character position of the name's first character.
        public let position: Int
    }

    public enum Modifier: Sendable, Hashable {
        case none
        /// `{var:3}`: at most that many characters of a string value.
        case prefix(Int)
        /// `{var*}`: each list item or (key, value) pair expanded on its own.
        case explode
    }

    /// The expression operators of RFC 6570 section 2.2 with the expansion table of appendix A.
    public enum Operator: Sendable, Hashable, CaseIterable {
        case simple, reserved, fragment, label, pathSegment, pathParameter, query, queryContinuation

        public var symbol: String {
            switch self {
            case .simple: ""
            case .reserved: "+"
            case .fragment: "#"
            case .label: "."
            case .pathSegment: "/"
            case .pathParameter: ";"
            case .query: "?"
            case .queryContinuation: "&"
            }
        }

        init?(symbol: Character) {
            switch symbol {
            case "+": self = .reserved
            case "#": self = .fragment
            case ".": self = .label
            case "/": self = .pathSegment
            case ";": self = .pathParameter
            case "?": self = .query
            case "&": self = .queryContinuation
            default: return nil
            }
        }

        /// Written before the first defined variable.
        var first: String {
            switch self {
            case .simple, .reserved: ""
            case .queryContinuation: "&"
            default: symbol
            }
        }

        /// Written between defined variables.
        var separator: String {
            switch self {
            case .simple, .reserved, .fragment: ","
            case .query, .queryContinuation: "&"
            default: symbol
            }
        }

        /// Whether each value is written as `name=value`.
        var isNamed: Bool {
            switch self {
            case .pathParameter, .query, .queryContinuation: true
            default: false
            }
        }

        /// What follows a name when the value is empty (`;x` but `?x=`).
        var ifEmpty: String {
            switch self {
            case .query, .queryContinuation: "="
            default: ""
            }
        }

        /// `+` and `#` keep reserved characters and pct-encoded triplets as they are.
        var allowsReserved: Bool { self == .reserved || self == .fragment }
    }

    public var description: String { text }

    public static func == (lhs: URITemplate, rhs: URITemplate) -> Bool { lhs.text == rhs.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Every variable of every expression, in template order.
    public var variables: [Variable] {
        components.flatMap { component -> [Variable] in
            if case .expression(let expression) = component { expression.variables } else { [] }
        }
    }
}

extension URITemplate.Expression: CustomStringConvertible {
    public var description: String {
        "{" + self.operator.symbol + variables.map(\.description).joined(separator: ",") + "}"
    }
}

extension URITemplate.Variable: CustomStringConvertible {
    /// The prefix modifier's length, if it has one.
    public var maxLength: Int? {
        if case .prefix(let length) = modifier { length } else { nil }
    }

    public var description: String {
        switch modifier {
        case .none: name
        case .prefix(let length): "\(name):\(length)"
        case .explode: "\(name)*"
        }
    }
}
