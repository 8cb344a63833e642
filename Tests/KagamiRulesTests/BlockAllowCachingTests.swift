import KagamiFlow
import Testing
@testable import KagamiRules

@Suite struct BlockAndAllowTests {
    @Test func dropVersus403() throws {
        let rules = try pipeline("""
            blockList:
              - {name: ads, locations: [{host: "ads.*"}], action: drop}
              - {name: tracking, locations: [{path: "/track/*"}], action: "403"}
            """)
        let dropped = rules.processRequest(request("http://ads.example/banner"))
        #expect(dropped.blocked == .dropConnection)
        #expect(dropped.applications == [RuleApplication(name: "Block List 'ads'", description: "dropped the connection")])
        let forbidden = rules.processRequest(request("http://site.example/track/click"))
        #expect(forbidden.blocked == .forbidden)
        #expect(forbidden.applications.first?.description == "answered 403 Forbidden")
        #expect(RulePipeline.forbiddenResponse.status == 403)
        #expect(RulePipeline.forbiddenResponse.headers["Content-Length"] == String(RulePipeline.forbiddenResponse.body.size))
        #expect(rules.processRequest(request("http://site.example/page")).forwarded != nil)
    }

    @Test func allowListAndBlockPrecedence() throws {
        let rules = try pipeline("""
            allowList:
              - {name: ours, locations: [{host: "*.example.com"}]}
            blockList:
              - {name: no admin, locations: [{host: admin.example.com}], action: drop}
            """)
        #expect(rules.processRequest(request("https://api.example.com/")).forwarded != nil)
        let outside = rules.processRequest(request("https://elsewhere.org/"))
        #expect(outside.blocked == .forbidden)
        #expect(outside.applications.first?.name == "Allow List 'ours'")
        #expect(rules.processRequest(request("https://admin.example.com/")).blocked == .dropConnection)
    }

    @Test func disabledListsDoNothing() throws {
        let rules = try pipeline("""
            allowList:
              - {name: ours, enabled: false, locations: [{host: only.example}]}
            blockList:
              - {name: all, enabled: false, locations: [{}]}
            """)
        #expect(rules.processRequest(request("http://anything.example/")).forwarded != nil)
    }
}

@Suite struct NoCachingTests {
    @Test func requestAndResponseHeaders() throws {
        let rules = try pipeline("""
            noCaching:
              - name: fresh
            """)
        let original = request("http://a/", headers: [
            ("If-Modified-Since", "Wed, 21 Oct 2015 07:28:00 GMT"), ("If-None-Match", "\"abc\""), ("Cache-Control", "max-age=60"),
        ])
        let verdict = rules.processRequest(original)
        let forwarded = try #require(verdict.forwarded)
        #expect(!forwarded.headers.contains("If-Modified-Since"))
        #expect(!forwarded.headers.contains("If-None-Match"))
        #expect(forwarded.headers["Pragma"] == "no-cache")
        #expect(forwarded.headers.values(for: "Cache-Control") == ["no-cache"])
        #expect(verdict.applications.first?.description
            == "removed If-Modified-Since, If-None-Match; set Pragma: no-cache, Cache-Control: no-cache")

        let answered = rules.processResponse(response(headers: [
            ("ETag", "\"abc\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"), ("Expires", "Thu, 01 Dec 2033 16:00:00 GMT"),
            ("Cache-Control", "public, max-age=3600"), ("Content-Type", "text/plain"),
        ]), for: original).response
        #expect(!answered.headers.contains("ETag"))
        #expect(!answered.headers.contains("Last-Modified"))
        #expect(answered.headers["Expires"] == "0")
        #expect(answered.headers["Cache-Control"] == "no-cache")
        #expect(answered.headers["Content-Type"] == "text/plain")
    }

    @Test func onlyForSelectedLocations() throws {
        let rules = try pipeline("""
            noCaching:
              - name: api only
                locations: [{host: api.example}]
            """)
        #expect(rules.processRequest(request("http://api.example/")).forwarded?.headers["Pragma"] == "no-cache")
        let other = rules.processRequest(request("http://cdn.example/", headers: [("If-None-Match", "x")]))
        #expect(other.forwarded?.headers["If-None-Match"] == "x")
        #expect(other.applications.isEmpty)
        #expect(rules.processResponse(response(headers: [("ETag", "x")]), for: request("http://cdn.example/")).response.headers["ETag"] == "x")
    }
}
