import Foundation
import KagamiContentCoding
import KagamiFlow
import Testing
@testable import KagamiRules

@Suite struct RewriteTests {
    /// A pipeline with one Rewrite set holding `rules` (YAML list items, indented 6).
    func rewrite(_ rules: String, locations: String = "[]", enabled: Bool = true) throws -> RulePipeline {
        try pipeline("""
            rewrite:
              - name: test
                enabled: \(enabled)
                locations: \(locations)
                rules:
            \(rules)
            """)
    }

    @Test func addHeaderOnRequestAndResponse() throws {
        let rules = try rewrite("""
                  - type: Add Header
                    where: both
                    replace: {name: X-Debug, value: "1"}
            """)
        let verdict = rules.processRequest(request("http://api.example/a"))
        #expect(verdict.forwarded?.headers["X-Debug"] == "1")
        #expect(verdict.applications == [RuleApplication(name: "Rewrite 'test'", description: "added request header X-Debug")])
        let answered = rules.processResponse(response(), for: request("http://api.example/a"))
        #expect(answered.response.headers["x-debug"] == "1")
    }

    @Test func modifyHeaderWithRegexGroups() throws {
        let rules = try rewrite("""
                  - type: Modify Header
                    match: {name: "authorization", value: "Bearer (\\\\w+)\\\\.(\\\\w+)", regex: true}
                    replace: {value: "Token $2-$1"}
            """)
        let forwarded = rules.processRequest(request("http://a/x", headers: [("Authorization", "Bearer abc.def")])).forwarded
        #expect(forwarded?.headers["Authorization"] == "Token def-abc")
    }

    @Test func modifyHeaderNameAndPlainPartialValue() throws {
        let rules = try rewrite("""
                  - type: Modify Header
                    where: response
                    match: {name: x-old, value: beta}
                    replace: {name: X-New, value: gamma}
            """)
        let answered = rules.processResponse(response(headers: [("X-Old", "alpha beta beta")]), for: request("http://a/"))
        #expect(answered.response.headers.fields == [HeaderFields.Field(name: "X-New", value: "alpha gamma beta")])
        #expect(answered.applications.first?.description == "modified response header X-New")
    }

    @Test func replaceFirstVersusAll() throws {
        let first = try rewrite("""
                  - type: Body
                    where: response
                    match: {value: "cat"}
                    replace: {value: "dog"}
            """)
        let all = try rewrite("""
                  - type: Body
                    where: response
                    match: {value: "c(a)t", regex: true}
                    replace: {value: "d$1g"}
                    replaceAll: true
            """)
        let original = response(headers: [("Content-Length", "11")], body: "cat cat cat")
        #expect(String(decoding: first.processResponse(original, for: request("http://a/")).response.body.data, as: UTF8.self) == "dog cat cat")
        let rewritten = all.processResponse(original, for: request("http://a/")).response
        #expect(String(decoding: rewritten.body.data, as: UTF8.self) == "dag dag dag")
        #expect(rewritten.headers["Content-Length"] == "11")
    }

    @Test func matchWholeValue() throws {
        let rules = try rewrite("""
                  - type: Modify Header
                    match: {name: Accept, value: json, wholeValue: true}
                    replace: {value: text/plain}
            """)
        #expect(rules.processRequest(request("http://a/", headers: [("Accept", "application/json")])).forwarded?.headers["Accept"] == "application/json")
        #expect(rules.processRequest(request("http://a/", headers: [("Accept", "json")])).forwarded?.headers["Accept"] == "text/plain")
    }

    @Test func removeHeaderOnBothSides() throws {
        let rules = try rewrite("""
                  - type: Remove Header
                    where: both
                    match: {name: "x-trace-.*", regex: true}
            """)
        let forwarded = rules.processRequest(request("http://a/", headers: [("X-Trace-Id", "1"), ("X-Trace-Span", "2"), ("Accept", "*/*")])).forwarded
        #expect(forwarded?.headers.contains("X-Trace-Id") == false)
        #expect(forwarded?.headers.contains("X-Trace-Span") == false)
        #expect(forwarded?.headers["Accept"] == "*/*")
        let answered = rules.processResponse(response(headers: [("x-trace-id", "9")]), for: request("http://a/"))
        #expect(answered.response.headers.isEmpty)
    }

    @Test func hostPathAndURL() throws {
        let rules = try rewrite("""
                  - type: Host
                    match: {value: "api.example.com"}
                    replace: {value: "staging.example.com"}
                  - type: Path
                    match: {value: "^/v1/", regex: true}
                    replace: {value: "/v2/"}
            """)
        let forwarded = try #require(rules.processRequest(request("http://api.example.com/v1/users?page=2")).forwarded)
        #expect(forwarded.host == "staging.example.com")
        #expect(forwarded.headers["Host"] == "staging.example.com")
        #expect(forwarded.target == "/v2/users?page=2")

        let url = try rewrite("""
                  - type: URL
                    match: {value: "http://old.example/(.*)", regex: true}
                    replace: {value: "https://new.example:8443/$1"}
            """)
        let moved = try #require(url.processRequest(request("http://old.example/a/b?c=d")).forwarded)
        #expect(moved.url == "https://new.example:8443/a/b?c=d")
        #expect(moved.headers["Host"] == "new.example:8443")
    }

    @Test func queryParameters() throws {
        let rules = try rewrite("""
                  - type: Add Query Param
                    replace: {name: debug, value: "1"}
                  - type: Modify Query Param
                    match: {name: page, value: "([0-9]+)", regex: true}
                    replace: {name: p, value: "$1$1"}
                  - type: Remove Query Param
                    match: {name: token}
            """)
        let forwarded = rules.processRequest(request("http://a/list?page=3&token=secret&sort=asc")).forwarded
        #expect(forwarded?.target == "/list?p=33&sort=asc&debug=1")
        let descriptions = rules.processRequest(request("http://a/list?page=3&token=x")).applications.map(\.description)
        #expect(descriptions == ["added query parameter debug", "modified query parameter p", "removed query parameter token"])
    }

    @Test func responseStatus() throws {
        let rules = try rewrite("""
                  - type: Response Status
                    match: {value: "200"}
                    replace: {value: "503"}
            """)
        let answered = rules.processResponse(response(status: 200), for: request("http://a/"))
        #expect(answered.response.status == 503)
        #expect(answered.response.reason == "Service Unavailable")
        #expect(rules.processResponse(response(status: 404), for: request("http://a/")).response.status == 404)
        let custom = try rewrite("""
                  - type: Response Status
                    replace: {value: "299 Fine Really"}
            """)
        let fine = custom.processResponse(response(status: 500), for: request("http://a/")).response
        #expect(fine.status == 299 && fine.reason == "Fine Really")
    }

    @Test func requestBody() throws {
        let rules = try rewrite("""
                  - type: Body
                    match: {value: "\\"admin\\": false"}
                    replace: {value: "\\"admin\\": true"}
            """)
        let original = request("http://a/login", method: "POST", headers: [("Content-Length", "16")], body: "{\"admin\": false}")
        #expect(rules.requestBodyNeeded(for: original))
        #expect(!rules.responseBodyNeeded(for: original))
        let forwarded = try #require(rules.processRequest(original).forwarded)
        #expect(String(decoding: forwarded.body.data, as: UTF8.self) == "{\"admin\": true}")
        #expect(forwarded.headers["Content-Length"] == "15")
    }

    @Test func compressedBodiesAreRewrittenInTheirCodingAndTheRestSayWhyNot() throws {
        let rules = try rewrite("""
                  - type: Body
                    where: response
                    match: {value: a}
                    replace: {value: b}
                    replaceAll: true
            """)
        for coding in ["gzip", "deflate"] {
            var gzipped = response(headers: [("Content-Encoding", coding), ("Content-Length", "0")], body: "")
            gzipped.body = FlowBody(data: try ContentCoding.encode(Data("a cat and a bat".utf8), contentEncoding: coding))
            let rewritten = rules.processResponse(gzipped, for: request("http://a/"))
            #expect(rewritten.response.headers["Content-Encoding"] == coding)
            #expect(rewritten.response.headers["Content-Length"] == String(rewritten.response.body.size))
            let plain = try ContentCoding.decode(rewritten.response.body.data, contentEncoding: coding)
            #expect(String(decoding: plain, as: UTF8.self) == "b cbt bnd b bbt")
            #expect(rewritten.applications.map(\.description) == ["rewrote body (15 → 15 bytes (\(coding) decoded and encoded again))"])
        }
        let notReallyGzip = response(headers: [("Content-Encoding", "gzip")], body: "aaa")
        let refused = rules.processResponse(notReallyGzip, for: request("http://a/"))
        #expect(refused.response.body.data == Data("aaa".utf8))
        #expect(refused.applications.first?.description.hasPrefix("did not rewrite the body: it is gzip encoded and could not be decoded") == true)
        let brotli = rules.processResponse(response(headers: [("Content-Encoding", "br")], body: "aaa"), for: request("http://a/"))
        #expect(brotli.response.body.data == Data("aaa".utf8))
        #expect(brotli.applications.first?.description.contains("could not be decoded") == true)
        var truncated = response(body: "aaa")
        truncated.body.isTruncated = true
        let cut = rules.processResponse(truncated, for: request("http://a/"))
        #expect(cut.response.body.data == Data("aaa".utf8))
        #expect(cut.applications.map(\.description) == ["did not rewrite the body: only its first 3 bytes were kept"])
    }

    @Test func rulesRunInOrder() throws {
        let rules = try rewrite("""
                  - type: Add Header
                    replace: {name: X-Step, value: one}
                  - type: Modify Header
                    match: {name: X-Step, value: one}
                    replace: {value: two}
            """)
        #expect(rules.processRequest(request("http://a/")).forwarded?.headers["X-Step"] == "two")
        let reversed = try rewrite("""
                  - type: Modify Header
                    match: {name: X-Step, value: one}
                    replace: {value: two}
                  - type: Add Header
                    replace: {name: X-Step, value: one}
            """)
        #expect(reversed.processRequest(request("http://a/")).forwarded?.headers["X-Step"] == "one")
    }

    @Test func disabledSetsAndRulesAndLocations() throws {
        let rule = """
                  - type: Add Header
                    replace: {name: X-Hit, value: "1"}
            """
        #expect(try rewrite(rule, enabled: false).processRequest(request("http://a/")).forwarded?.headers.contains("X-Hit") == false)
        let disabledRule = try rewrite("""
                  - type: Add Header
                    enabled: false
                    replace: {name: X-Hit, value: "1"}
            """)
        #expect(disabledRule.processRequest(request("http://a/")).forwarded?.headers.contains("X-Hit") == false)
        let scoped = try rewrite(rule, locations: "[{host: api.example.com, path: /v1/*}]")
        #expect(scoped.processRequest(request("http://api.example.com/v1/x")).forwarded?.headers["X-Hit"] == "1")
        #expect(scoped.processRequest(request("http://api.example.com/v2/x")).forwarded?.headers.contains("X-Hit") == false)
    }

    @Test func responseRulesMatchTheClientsRequestAfterMapRemote() throws {
        let rules = try pipeline("""
            mapRemote:
              - name: staging
                from: {host: prod.example}
                to: {host: staging.example}
            rewrite:
              - name: mark
                locations: [{host: prod.example}]
                rules:
                  - {type: Add Header, where: response, replace: {name: X-Seen, value: prod}}
            """)
        let original = request("http://prod.example/")
        #expect(rules.processRequest(original).forwarded?.host == "staging.example")
        #expect(rules.processResponse(response(), for: original).response.headers["X-Seen"] == "prod")
    }
}
