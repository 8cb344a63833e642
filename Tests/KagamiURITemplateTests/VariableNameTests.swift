import KagamiURITemplate
import Testing

/// Names from formats that allow any parameter name, as template variables.
@Suite struct VariableNameTests {
    @Test(arguments: [
        ("id", "id"), ("page-size", "page%2Dsize"), ("a.b_c9", "a.b_c9"), ("filter[name]", "filter%5Bname%5D"),
        ("naïve", "na%C3%AFve"), ("already%2Dencoded", "already%2Dencoded"), ("50%", "50%25"), ("x y", "x%20y"),
    ])
    func encodesWhatAVarnameCannotHold(name: String, expected: String) throws {
        #expect(URITemplate.variableName(name) == expected)
        // It parses, and matching a query decodes it back to the parameter's key.
        let template = try URITemplate("/items{?\(URITemplate.variableName(name))}")
        #expect(template.match(path: "/items", query: "") != nil)
    }

    @Test func aQueryKeyWithAHyphenIsCaptured() throws {
        let template = try URITemplate("/items/{item%2Did}{?page%2Dsize}")
        let match = try #require(template.match(path: "/items/7", query: "page-size=20"))
        #expect(match.variables["item%2Did"] == .string("7"))
        #expect(match.variables["page%2Dsize"] == .string("20"))
    }
}
