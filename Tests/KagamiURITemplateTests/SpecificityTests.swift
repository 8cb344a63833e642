import KagamiURITemplate
import Testing

@Suite struct SpecificityTests {
    @Test(arguments: [
        ("/users/me", "/users/{id}"),
        ("/users/{id}", "/{collection}/{id}"),
        ("/users/{id}.json", "/users/{id}"),
        ("/files/{name}", "/files/{+path}"),
        ("/files/{+path}/raw", "/files/{+path}"),
        ("/users", "/users{/id}"),
        ("/tree/a{/rest*}", "/tree{/parts*}"),
        ("/users/me{?fields}", "/users/{id}{?fields}"),
    ])
    func moreSpecificFirst(specific: String, general: String) throws {
        let a = try URITemplate(specific)
        let b = try URITemplate(general)
        #expect(a.isMoreSpecific(than: b), "\(a.specificity) vs \(b.specificity)")
        #expect(!b.isMoreSpecific(than: a))
    }

    @Test func routesSortMostSpecificFirst() throws {
        let routes = try ["/{a}/{b}", "/users/{id}", "/users/me", "/users/{id}/posts", "/{+rest}"].map { try URITemplate($0) }
        let sorted = routes.sorted { $0.isMoreSpecific(than: $1) }.map(\.text)
        #expect(sorted == ["/users/me", "/users/{id}/posts", "/users/{id}", "/{a}/{b}", "/{+rest}"])
    }

    @Test func pathTemplateDropsTheQueryPart() throws {
        #expect(try URITemplate("/users/{id}{?fields,expand}").pathTemplate.text == "/users/{id}")
        #expect(try URITemplate("/search?type=user{&q}").pathTemplate.text == "/search")
        #expect(try URITemplate("/a/{b}").pathTemplate.text == "/a/{b}")
        #expect(try URITemplate("/a/{b}").hasQuery == false)
        #expect(try URITemplate("{?q}").pathTemplate.text == "")
    }
}
