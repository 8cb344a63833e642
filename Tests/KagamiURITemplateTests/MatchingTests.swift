import KagamiURITemplate
import Testing

@Suite struct MatchingTests {
    func variables(_ template: String, _ target: String) throws -> [String: URITemplate.Value]? {
        guard let match = try URITemplate(template).match(target) else { return nil }
        return Dictionary(uniqueKeysWithValues: match.variables.map { ($0.key, $0.value) })
    }

    @Test func simpleVariableMatchesOneSegment() throws {
        #expect(try variables("/users/{id}", "/users/42") == ["id": .string("42")])
        #expect(try variables("/users/{id}", "/users/42/posts") == nil)
        #expect(try variables("/users/{id}", "/users/") == nil, "an empty segment is no id")
        #expect(try variables("/users/{id}", "/people/42") == nil)
        #expect(try variables("/users/{id}/posts/{post}", "/users/7/posts/x-1") == ["id": .string("7"), "post": .string("x-1")])
    }

    @Test func valuesArePercentDecodedButEncodedSlashesDoNotSplitSegments() throws {
        #expect(try variables("/users/{id}", "/users/a%2Fb") == ["id": .string("a/b")])
        #expect(try variables("/tags/{tag}", "/tags/caf%C3%A9%20au%20lait") == ["tag": .string("café au lait")])
        #expect(try variables("/tags/{tag}", "/tags/café") == ["tag": .string("café")])
    }

    @Test func literalsCompareAfterNormalisation() throws {
        // Triplets of unreserved characters are the characters; hex case does not matter.
        #expect(try variables("/~user/{x}", "/%7Euser/1") == ["x": .string("1")])
        #expect(try variables("/caf%C3%A9/{x}", "/caf%c3%a9/1") == ["x": .string("1")])
        #expect(try variables("/café/{x}", "/caf%C3%A9/1") == ["x": .string("1")])
        // But an encoded slash is not a slash, and case of letters counts.
        #expect(try variables("/a/b", "/a%2Fb") == nil)
        #expect(try variables("/Users/{x}", "/users/1") == nil)
    }

    @Test func reservedAndFragmentExpressionsSpanSlashes() throws {
        #expect(try variables("/files/{+path}", "/files/a/b/c.txt") == ["path": .string("a/b/c.txt")])
        #expect(try variables("/files/{+path}/raw", "/files/a/raw/b/raw") == ["path": .string("a/raw/b")])
        #expect(try variables("/docs{#section}", "/docs#intro/part") == ["section": .string("intro/part")])
        #expect(try variables("/files/{path}", "/files/a/b") == nil)
    }

    @Test func explodedPathSegmentsMatchIntoAList() throws {
        #expect(try variables("/tree{/parts*}", "/tree/a/b/c") == ["parts": .list(["a", "b", "c"])])
        #expect(try variables("/tree{/parts*}/leaf", "/tree/a/leaf") == ["parts": .list(["a"])])
        #expect(try variables("/list/{items*}", "/list/red,green") == ["items": .list(["red", "green"])])
        #expect(try variables("/x{.parts*}", "/x.tar.gz") == ["parts": .list(["tar", "gz"])])
    }

    @Test func prefixedExpressionsAreOptional() throws {
        #expect(try variables("/users{/id}", "/users") == [:])
        #expect(try variables("/users{/id}", "/users/5") == ["id": .string("5")])
        #expect(try variables("/users{/id,action}", "/users/5") == ["id": .string("5")])
        #expect(try variables("/users{/id,action}", "/users/5/edit") == ["id": .string("5"), "action": .string("edit")])
        #expect(try variables("/report{.format}", "/report.csv") == ["format": .string("csv")])
        #expect(try variables("/report{.format}", "/report") == [:])
    }

    @Test func pathParameters() throws {
        #expect(try variables("/map{;x,y}", "/map;x=1;y=2") == ["x": .string("1"), "y": .string("2")])
        #expect(try variables("/map{;x,y}", "/map;x=1") == ["x": .string("1")])
        #expect(try variables("/map{;x}", "/map;x") == ["x": .string("")])
        #expect(try variables("/map{;x}", "/map;y=1") == nil)
        #expect(try variables("/map{;list*}", "/map;list=a;list=b") == ["list": .list(["a", "b"])])
    }

    @Test func prefixModifierLimitsTheLength() throws {
        #expect(try variables("/codes/{code:3}", "/codes/abc") == ["code": .string("abc")])
        #expect(try variables("/codes/{code:3}", "/codes/abcd") == nil)
        #expect(try variables("/codes/{code:1}", "/codes/%C3%A9") == ["code": .string("é")])
        #expect(try variables("/s{?q:2}", "/s?q=abc") == nil)
    }

    @Test func aVariableUsedTwiceMustAgree() throws {
        #expect(try variables("/{id}/copy/{id}", "/1/copy/1") == ["id": .string("1")])
        #expect(try variables("/{id}/copy/{id}", "/1/copy/2") == nil)
    }

    @Test func queryParametersMatchInAnyOrderAndAreOptional() throws {
        let template = try URITemplate("/search{?q,lang}")
        let match = try #require(template.match("/search?lang=en&x=1&q=cats+and%20dogs"))
        #expect(match.variables == ["q": .string("cats and dogs"), "lang": .string("en")])
        #expect(match.unmatchedQueryParameters == [.init(name: "x", value: "1")])
        #expect(template.match("/search")?.variables == [:])
        #expect(template.match("/search?")?.variables == [:])
        #expect(template.match("/search?q")?.variables == ["q": .string("")])
        #expect(template.match("/search/more?q=1") == nil)
    }

    @Test func queryContinuationAndExplodedQueryParameters() throws {
        #expect(try variables("/s?fixed=yes{&page}", "/s?page=2&fixed=yes") == ["page": .string("2")])
        #expect(try variables("/s?fixed=yes{&page}", "/s?page=2") == nil, "a literal parameter is required")
        #expect(try variables("/s?fixed=yes{&page}", "/s?fixed=no") == nil)
        #expect(try variables("/s{?tag*}", "/s?tag=a&other=1&tag=b") == ["tag": .list(["a", "b"])])
        #expect(try variables("/s{?list}", "/s?list=red,green") == ["list": .string("red,green")])
        #expect(try variables("/s?q={q}", "/s?q=x%26y") == ["q": .string("x&y")])
        #expect(try variables("/s?q={q}", "/s") == nil, "q= is written in the template")
        let repeated = try #require(try URITemplate("/s{?a}").match("/s?a=1&a=2"))
        #expect(repeated.variables == ["a": .string("1")])
        #expect(repeated.unmatchedQueryParameters == [.init(name: "a", value: "2")])
    }

    @Test func preparedTargetsMatchManyTemplates() throws {
        let target = URITemplate.Target(path: "/users/me", query: "verbose")
        #expect(try URITemplate("/users/{id}").match(target)?.variables == ["id": .string("me")])
        #expect(try URITemplate("/users/me{?verbose}").match(target)?.variables == ["verbose": .string("")])
    }

    // The ambiguity rule: variables are settled from left to right; each takes the shortest
    // value that lets the rest of the template match (and is present rather than absent
    // when both work).
    @Test func ambiguousMatchesGiveEarlierVariablesTheShortestValue() throws {
        #expect(try variables("/{+a}/{+b}", "/x/y/z") == ["a": .string("x"), "b": .string("y/z")])
        #expect(try variables("/{a}{b}", "/abc") == ["a": .string("a"), "b": .string("bc")])
        #expect(try variables("/{x,y}", "/a,b,c") == ["x": .string("a"), "y": .string("b,c")])
        #expect(try variables("/{x,y}", "/a") == nil, "simple expressions need every variable")
        #expect(try variables("/{a}-{b}", "/x-y-z") == ["a": .string("x"), "b": .string("y-z")])
        #expect(try variables("{/a}{/b}", "/x") == ["a": .string("x")], "present wins over absent")
        // Label values stop at '.', so the last dot starts the extension.
        #expect(try variables("/files/{name}{.ext}", "/files/archive.tar.gz") == ["name": .string("archive.tar"), "ext": .string("gz")])
    }

    @Test func longTargetsDoNotBlowUp() throws {
        let template = try URITemplate("/{+a}/{+b}/{+c}/{+d}/end")
        let path = "/" + Array(repeating: "x", count: 600).joined(separator: "/")
        #expect(template.match(path) == nil)
        #expect(template.match(path + "/end")?.variables["a"] == .string("x"))
    }

    @Test func matchAsJSON() throws {
        let match = try #require(try URITemplate("/t{/parts*}{?q}").match("/t/a/b?q=1"))
        #expect(match.json.serialized() == #"{"parts":["a","b"],"q":"1"}"#)
    }
}
