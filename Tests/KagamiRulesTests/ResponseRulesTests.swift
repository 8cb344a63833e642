import Foundation
import KagamiFlow
import Testing

@testable import KagamiRules

/// `hasResponseRules(for:)` lets the engine skip the response side: it must say yes whenever
/// `processResponse` would change the response or record an application, and no otherwise.
@Suite struct ResponseRulesTests {
    static let documents = [
        "",
        """
        rewrite:
          - name: request only
            locations: [{host: api.example}]
            rules: [{type: Add Header, where: request, replace: {name: X-A, value: "1"}}]
        """,
        """
        rewrite:
          - name: both
            locations: [{host: "*.example", path: /v1/*}]
            rules: [{type: Add Header, where: both, replace: {name: X-B, value: "2"}}]
        """,
        """
        rewrite:
          - name: response header
            rules: [{type: Modify Header, where: response, match: {name: Server}, replace: {value: kagami}}]
        """,
        """
        noCaching:
          - name: fresh
            locations: [{host: cdn.example}]
        """,
        """
        blockList:
          - {name: block, locations: [{host: ads.example}], action: "403"}
        mapRemote:
          - {name: remote, from: {host: old.example}, to: {host: new.example}}
        """,
    ]

    static let requests = [
        request("http://api.example/v1/users"), request("http://api.example/other"), request("http://cdn.example/app.js"),
        request("http://ads.example/"), request("http://old.example/x"), request("http://unrelated.test/"),
    ]

    /// Each document, with how many of `requests` its response side acts on.
    @Test(arguments: zip(documents, [0, 0, 1, 6, 1, 0]))
    func saysYesExactlyWhenTheResponseSideWouldAct(document: String, acting: Int) throws {
        let rules = try pipeline(document)
        #expect(Self.requests.filter { rules.hasResponseRules(for: $0) }.count == acting)
        let original = response(headers: [("Server", "nginx"), ("ETag", "\"v1\""), ("Cache-Control", "max-age=60")], body: "{}")
        for request in Self.requests {
            let verdict = rules.processResponse(original, for: request)
            let acts = verdict.response != original || !verdict.applications.isEmpty
            #expect(rules.hasResponseRules(for: request) == acts, "\(request.url)")
        }
    }
}
