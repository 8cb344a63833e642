/// Why a template could not be parsed or expanded, and where.
public struct URITemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case unclosedExpression
        case unmatchedClosingBrace
        case invalidLiteralCharacter
        case invalidPercentEncoding
        case emptyExpression
        case reservedOperator
        case invalidVariableName
        case invalidModifier
        /// Expansion: `{var:3}` given a list or associative value (RFC 6570 section 2.4.1).
        case prefixOfCompositeValue
    }

    public let kind: Kind
    /// The template as written.
    public let template: String
    /// 1-based character position in `template`.
    public let position: Int
    /// What is wrong, without the position.
    public let reason: String

    public init(_ kind: Kind, template: String, position: Int, reason: String) {
        self.kind = kind
        self.template = template
        self.position = position
        self.reason = reason
    }

    public var description: String {
        "\(reason) at character \(position) of \"\(template)\""
    }
}
