import KagamiURITemplate
import Testing

@Suite struct ParsingTests {
    @Test func parsesEveryOperatorAndModifier() throws {
        let template = try URITemplate("/a{b}{+c}{#d}{.e}{/f*}{;g:3}{?h,i}{&j}")
        let expressions = template.components.compactMap { component -> URITemplate.Expression? in
            if case .expression(let e) = component { e } else { nil }
        }
        #expect(expressions.map(\.operator) == [.simple, .reserved, .fragment, .label, .pathSegment, .pathParameter, .query, .queryContinuation])
        #expect(template.variables.map(\.name) == ["b", "c", "d", "e", "f", "g", "h", "i", "j"])
        #expect(template.variables[4].modifier == .explode)
        #expect(template.variables[5].modifier == .prefix(3))
        #expect(expressions[1].position == 6)
        #expect(template.components.first == .literal("/a"))
    }

    @Test func variableNamesWithDotsUnderscoresAndTriplets() throws {
        let template = try URITemplate("/{user.id}/{page_size}/{ticket%2Did}")
        #expect(template.variables.map(\.name) == ["user.id", "page_size", "ticket%2Did"])
        #expect(try template.expand(["ticket%2Did": .string("7"), "user.id": .string("u")]) == "/u//7")
    }

    @Test(arguments: [
        ("/users/{id", 8, URITemplateError.Kind.unclosedExpression, "unclosed expression starting at character 8 of \"/users/{id\""),
        ("/users/id}", 10, .unmatchedClosingBrace, "'}' without a matching '{'"),
        ("/a b", 3, .invalidLiteralCharacter, "character ' ' is not allowed"),
        ("/50%", 4, .invalidPercentEncoding, "'%' must be followed by two hexadecimal digits"),
        ("{}", 2, .emptyExpression, "expected a variable name"),
        ("/x/{=path}", 5, .reservedOperator, "operator '=' is reserved"),
        ("{with space}", 6, .invalidVariableName, "character ' ' is not allowed in a variable name"),
        ("{a,}", 4, .invalidVariableName, "expected a variable name before '}'"),
        ("{x.}", 3, .invalidVariableName, "'.' in a variable name must be followed"),
        ("{.x..y}", 4, .invalidVariableName, "'.' in a variable name must be followed"),
        ("{var:0}", 6, .invalidModifier, "from 1 to 9999"),
        ("{var:10000}", 6, .invalidModifier, "at most 9999"),
        ("{var:}", 6, .invalidModifier, "expected a prefix length"),
        ("{hello:2*}", 9, .invalidModifier, "both a prefix and '*'"),
        ("{%2x}", 2, .invalidPercentEncoding, "two hexadecimal digits"),
        ("/ok/{a}/{b{c}", 11, .invalidVariableName, "character '{' is not allowed in a variable name"),
    ])
    func errorsSayWhereAndWhy(template: String, position: Int, kind: URITemplateError.Kind, message: String) {
        do {
            let parsed = try URITemplate(template)
            Issue.record("\(template) parsed as \(parsed.components)")
        } catch {
            #expect(error.position == position, "\(error)")
            #expect(error.kind == kind, "\(error)")
            #expect(error.template == template)
            #expect(error.description.contains(message), "\(error)")
            #expect(error.description.hasSuffix("at character \(position) of \"\(template)\""), "\(error)")
        }
    }

    @Test func positionsCountCharactersNotBytes() {
        #expect(throws: URITemplateError.self) { try URITemplate("/café/{x") }
        do {
            _ = try URITemplate("/café/{x")
        } catch {
            #expect(error.position == 7)
        }
    }
}
