/// Ordering of templates for routing: when two templates match the same request, the more
/// specific one wins (`/users/me` over `/users/{id}`).
extension URITemplate {
    public struct Specificity: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// What one path segment holds, least specific first.
        public enum Segment: Int, Sendable, Hashable, Comparable {
            /// `{+path}`, `{/parts*}`, `{/a,b}`: may cover any number of segments.
            case spanning
            /// Only variables: `{id}`.
            case variable
            /// Literal text and variables: `{id}.json`, `v{version}`.
            case mixed
            /// Only literal text: `users`.
            case literal

            public static func < (lhs: Segment, rhs: Segment) -> Bool { lhs.rawValue < rhs.rawValue }
        }

        /// The path part's segments, in order.
        public let segments: [Segment]
        /// Characters of literal text in the path part.
        public let literalCharacters: Int
        /// Variables in the path part.
        public let variableCount: Int

        /// Segments compare position by position and the first difference decides; when one
        /// list is a prefix of the other (or they are equal), more literal characters win,
        /// then fewer variables.
        public static func < (lhs: Specificity, rhs: Specificity) -> Bool {
            for (l, r) in zip(lhs.segments, rhs.segments) where l != r { return l < r }
            if lhs.literalCharacters != rhs.literalCharacters { return lhs.literalCharacters < rhs.literalCharacters }
            if lhs.variableCount != rhs.variableCount { return lhs.variableCount > rhs.variableCount }
            return lhs.segments.count < rhs.segments.count
        }

        public var description: String {
            segments.map { "\($0)" }.joined(separator: "/") + " (\(literalCharacters) literal, \(variableCount) variables)"
        }
    }

    /// How specific the path part is; a router tries templates from most to least specific.
    public var specificity: Specificity {
        var segments: [Specificity.Segment] = []
        var current: (literal: Bool, variable: Bool, spanning: Bool)?
        var literalCharacters = 0
        var variableCount = 0
        func close() {
            guard let segment = current else { return }
            segments.append(segment.spanning ? .spanning
                : segment.variable ? (segment.literal ? .mixed : .variable) : .literal)
        }
        for component in pathTemplate.components {
            switch component {
            case .literal(let literal):
                for c in literal {
                    if c == "/" {
                        close()
                        current = (false, false, false)
                    } else {
                        literalCharacters += 1
                        current = (true, current?.variable ?? false, current?.spanning ?? false)
                    }
                }
            case .expression(let expression):
                variableCount += expression.variables.count
                switch expression.operator {
                case .pathSegment:
                    close()
                    let spans = expression.variables.count > 1 || expression.variables.contains { $0.modifier == .explode }
                    current = (false, true, spans)
                case .reserved, .fragment:
                    current = (current?.literal ?? false, true, true)
                default:
                    current = (current?.literal ?? false, true, current?.spanning ?? false)
                }
            }
        }
        close()
        return Specificity(segments: segments, literalCharacters: literalCharacters, variableCount: variableCount)
    }

    /// Whether this template should be tried before `other` when both could match.
    public func isMoreSpecific(than other: URITemplate) -> Bool {
        specificity > other.specificity
    }
}
