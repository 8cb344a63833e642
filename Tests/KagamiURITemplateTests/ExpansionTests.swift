import KagamiJSON
import KagamiURITemplate
import Testing

@Suite struct ExpansionTests {
    @Test func undefinedVariablesAreSkipped() throws {
        let template = try URITemplate("/users{/id}{?fields,page}")
        #expect(try template.expand([:]) == "/users")
        #expect(try template.expand(["page": .string("2"), "fields": .list([])]) == "/users?page=2")
    }

    @Test func prefixOnACompositeValueIsAnError() throws {
        let template = try URITemplate("/x/{keys:1}")
        do {
            _ = try template.expand(["keys": .associative([.init("a", "b")])])
            Issue.record("expanded")
        } catch {
            #expect(error.kind == .prefixOfCompositeValue)
            #expect(error.position == 5)
            #expect(error.description.contains("'keys'"))
        }
    }

    /// A reserved expansion's prefix counts a triplet as one character and never cuts it.
    @Test func reservedExpansionKeepsTriplets() throws {
        #expect(try URITemplate("{+v:2}{v:2}").expand(["v": .string("%20ab")]) == "%20a%252")
        #expect(try URITemplate("{+v}").expand(["v": .string("50%25/%zz")]) == "50%25/%25zz")
    }

    @Test func valuesFromJSON() throws {
        let json = try JSONValue(parsing: #"{"n": 3, "ok": true, "pi": 2.5, "none": null, "tags": ["a", 1, null], "o": {"k": false, "z": null}}"#)
        let variables = URITemplate.variables(fromJSON: try #require(json.objectValue))
        #expect(variables["n"] == .string("3"))
        #expect(variables["ok"] == .string("true"))
        #expect(variables["pi"] == .string("2.5"))
        #expect(variables["none"] == nil)
        #expect(variables["tags"] == .list(["a", "1"]))
        #expect(variables["o"] == .associative([.init("k", "false")]))
        #expect(try URITemplate("/p/{n}{?ok,none,tags*}{&o*}").expand(variables) == "/p/3?ok=true&tags=a&tags=1&k=false")
    }

    @Test func nonASCIILiteralsAreEncoded() throws {
        #expect(try URITemplate("/café/{x}").expand(["x": .string("é")]) == "/caf%C3%A9/%C3%A9")
    }
}
