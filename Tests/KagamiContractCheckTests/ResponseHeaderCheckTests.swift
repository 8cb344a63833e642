import Foundation
import KagamiContractCheck
import KagamiDescription
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing

/// The headers an OpenAPI response declares, checked in the traffic: cases written from the
/// specification's Header Object (`required`, `schema`, a `$ref` to `components/headers`,
/// `Content-Type` ignored) and its `simple` style, in a 3.0 and a 3.1 document.
@Suite struct ResponseHeaderCheckTests {
    static let versions = ["3.0.3", "3.1.0"]

    static func check(version: String) throws -> ContractCheck {
        let text = try String(contentsOfFile: ContractCheckTests.fixture("headers.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "openapi: 3.0.3", with: "openapi: \(version)")
        return try ContractCheck(file: DescriptionFile(text: text, format: .openAPI), baseURL: ContractCheckTests.base)
    }

    static let validListHeaders: [(String, String)] = [
        ("Content-Type", "application/json"), ("X-Total-Count", "12"), ("X-Rate-Limit-Remaining", "5"),
        ("Link", "</v1/items?page=2>; rel=\"next\""), ("X-Page-Sizes", "10,20"),
    ]

    static func list(_ headers: [(String, String)]) -> Flow {
        ContractCheckTests.flow("GET", "/v1/items", status: 200, headers: headers, body: #"[{"id":1,"name":"a"}]"#)
    }

    static func violations(_ check: ContractCheck, _ flow: Flow) throws -> [ContractViolation] {
        try #require(check.check(flow)).violations
    }

    /// Replaces (or, with nil, removes) one header of the valid list answer.
    static func listWith(_ name: String, _ value: String?) -> Flow {
        var headers = validListHeaders.filter { $0.0 != name }
        if let value { headers.append((name, value)) }
        return list(headers)
    }

    @Test(arguments: versions) func validHeadersHaveNoFinding(_ version: String) throws {
        let check = try Self.check(version: version)
        #expect(try Self.violations(check, Self.list(Self.validListHeaders)) == [])
        // Optional headers may be left out; two lines of a list are one list.
        #expect(try Self.violations(check, Self.list([("Content-Type", "application/json"), ("X-Rate-Limit-Remaining", "0"),
                                                      ("X-Page-Sizes", "10"), ("X-Page-Sizes", "20")])) == [])
        let created = ContractCheckTests.flow(
            "POST", "/v1/items", requestHeaders: [("Content-Type", "application/json")], requestBody: #"{"name":"a"}"#, status: 201,
            headers: [("Content-Type", "application/json"), ("Location", "/v1/items/7"), ("X-Request-Id", "0b7f5b52-4f0e-4a8e-9d52-5f1c1a0e7a11")],
            body: #"{"id":7,"name":"a"}"#)
        #expect(try Self.violations(check, created) == [])
        let deleted = ContractCheckTests.flow("DELETE", "/v1/items/7", status: 204, headers: [("X-Deleted-At", "2026-11-29T06:00:00Z"), ("X-Mode", "soft")])
        #expect(try Self.violations(check, deleted) == [])
    }

    @Test(arguments: versions) func aRequiredLocationMissingOnA201IsAnError(_ version: String) throws {
        let check = try Self.check(version: version)
        let created = ContractCheckTests.flow(
            "POST", "/v1/items", requestHeaders: [("Content-Type", "application/json")], requestBody: #"{"name":"a"}"#, status: 201,
            body: #"{"id":7,"name":"a"}"#)
        let found = try Self.violations(check, created)
        #expect(found.count == 1)
        let missing = try #require(found.first)
        #expect(missing.kind == .missing && missing.severity == .error && missing.side == .response)
        #expect(missing.location == .header && missing.name == "Location" && missing.keyword == "required")
        #expect(missing.expected == "present" && missing.actual == "absent")
        #expect(missing.schemaPointer == "/paths/~1items/post/responses/201/headers/Location/required")
        #expect(missing.place == "header.Location")
    }

    @Test(arguments: versions) func aTotalCountThatIsNotAnIntegerIsAnError(_ version: String) throws {
        let check = try Self.check(version: version)
        let found = try Self.violations(check, Self.listWith("X-Total-Count", "abc"))
        #expect(found.count == 1)
        let wrong = try #require(found.first)
        #expect(wrong.kind == .schema && wrong.severity == .error && wrong.location == .header && wrong.name == "X-Total-Count")
        #expect(wrong.keyword == "type" && wrong.expected == "integer" && wrong.actual == #"string "abc""#)
        #expect(wrong.schemaPointer == "/paths/~1items/get/responses/200/headers/X-Total-Count/schema/type")
        #expect(wrong.instancePointer == nil)
        // A number, but below the minimum.
        let below = try Self.violations(check, Self.listWith("X-Total-Count", "-1"))
        #expect(below.map(\.keyword) == ["minimum"] && below.first?.actual == "-1")
    }

    @Test(arguments: versions) func aHeaderOfTheComponentsIsFollowed(_ version: String) throws {
        let check = try Self.check(version: version)
        let missing = try Self.violations(check, Self.listWith("X-Rate-Limit-Remaining", nil))
        #expect(missing.map(\.kind) == [.missing] && missing.first?.name == "X-Rate-Limit-Remaining")
        #expect(missing.first?.schemaPointer == "/components/headers/RateLimitRemaining/required")
        // Its schema is itself a `$ref` to a component schema.
        let negative = try Self.violations(check, Self.listWith("X-Rate-Limit-Remaining", "-3"))
        #expect(negative.map(\.keyword) == ["minimum"])
        #expect(negative.first?.schemaPointer == "/components/headers/RateLimitRemaining/schema/minimum")
        // A response that is a `$ref` to `components/responses` declares its headers too.
        let tooMany = ContractCheckTests.flow("POST", "/v1/items", requestHeaders: [("Content-Type", "application/json")],
                                              requestBody: #"{"name":"a"}"#, status: 429, headers: [("Retry-After", "soon")])
        let retry = try Self.violations(check, tooMany)
        #expect(retry.map(\.keyword) == ["type"] && retry.first?.name == "Retry-After")
        #expect(retry.first?.schemaPointer == "/components/responses/TooMany/headers/Retry-After/schema/type")
        let none = ContractCheckTests.flow("POST", "/v1/items", requestHeaders: [("Content-Type", "application/json")],
                                           requestBody: #"{"name":"a"}"#, status: 429, headers: [])
        #expect(try Self.violations(check, none).map(\.kind) == [.missing])
    }

    @Test(arguments: versions) func valuesAreReadAsTheirSchemasSay(_ version: String) throws {
        let check = try Self.check(version: version)
        // An array of integers, comma-separated: the second item is not one.
        let items = try Self.violations(check, Self.listWith("X-Page-Sizes", "10,x"))
        #expect(items.map(\.keyword) == ["type"] && items.first?.instancePointer == "/1")
        // Two lines of a list are read as one.
        let lines = try Self.violations(check, Self.list(Self.validListHeaders.filter { $0.0 != "X-Page-Sizes" } + [("X-Page-Sizes", "10"), ("X-Page-Sizes", "ten")]))
        #expect(lines.map(\.keyword) == ["type"] && lines.first?.instancePointer == "/1")
        // A pattern.
        let link = try Self.violations(check, Self.listWith("Link", "</v1/items?page=2>"))
        #expect(link.map(\.keyword) == ["pattern"])
        // An enumeration and a format.
        let deleted = ContractCheckTests.flow("DELETE", "/v1/items/7", status: 204, headers: [("X-Deleted-At", "yesterday"), ("X-Mode", "gone")])
        let found = try Self.violations(check, deleted)
        #expect(Set(found.compactMap(\.keyword)) == ["format", "enum"])
        #expect(found.first { $0.keyword == "enum" }?.actual == #""gone""#)
        // A declared `Content-Type` is ignored, as OpenAPI says: the body's type is the content's.
        #expect(try Self.violations(check, Self.list(Self.validListHeaders)).isEmpty)
    }

    @Test func formatsAreAssertedUnlessTurnedOff() throws {
        let text = try String(contentsOfFile: ContractCheckTests.fixture("headers.yaml"), encoding: .utf8)
        let relaxed = try ContractCheck(file: DescriptionFile(text: text, format: .openAPI), baseURL: ContractCheckTests.base, assertsFormat: false)
        let deleted = ContractCheckTests.flow("DELETE", "/v1/items/7", status: 204, headers: [("X-Deleted-At", "yesterday")])
        #expect(try Self.violations(relaxed, deleted) == [])
        #expect(try Self.violations(Self.check(version: "3.0.3"), deleted).map(\.keyword) == ["format"])
    }

    /// Request parameters are read by the same reading: an array's items along `items`.
    @Test func aQueryArraysItemsAreReadAlongTheirSchema() throws {
        let yaml = """
        openapi: 3.1.0
        info: {title: Things, version: "1"}
        paths:
          /things:
            get:
              parameters:
                - name: ids
                  in: query
                  schema: {type: array, items: {type: integer}}
              responses:
                '204': {description: none}
        """
        let check = try ContractCheck(file: DescriptionFile(text: yaml, format: .openAPI), baseURL: "http://127.0.0.1:5000")
        #expect(try Self.violations(check, ContractCheckTests.flow("GET", "/things?ids=1,2", status: 204, headers: [])) == [])
        #expect(try Self.violations(check, ContractCheckTests.flow("GET", "/things?ids=1&ids=2", status: 204, headers: [])) == [])
        let wrong = try Self.violations(check, ContractCheckTests.flow("GET", "/things?ids=1,x", status: 204, headers: []))
        #expect(wrong.map(\.place) == ["query.ids"] && wrong.first?.keyword == "type")
    }

    /// A header the response declares `deprecated` is a warning when it is sent (clients
    /// should stop relying on it), at the `deprecated` keyword; left out, nothing is said.
    @Test(arguments: versions) func aDeprecatedHeaderSentIsAWarning(_ version: String) throws {
        let text = """
        openapi: \(version)
        info: {title: Legacy, version: "1"}
        servers: [{url: http://127.0.0.1:5000/v1}]
        paths:
          /things:
            get:
              responses:
                '200':
                  description: ok
                  headers:
                    X-Old-Total:
                      deprecated: true
                      schema: {type: integer}
                    X-Total:
                      schema: {type: integer}
        """
        let check = try ContractCheck(file: DescriptionFile(text: text, format: .openAPI), baseURL: ContractCheckTests.base)
        let sent = try Self.violations(check, ContractCheckTests.flow("GET", "/v1/things", status: 200, headers: [("X-Old-Total", "3"), ("X-Total", "3")]))
        #expect(sent.count == 1, "\(sent)")
        let deprecated = try #require(sent.first)
        #expect(deprecated.kind == .deprecated && deprecated.severity == .warning && deprecated.side == .response)
        #expect(deprecated.place == "header.X-Old-Total" && deprecated.keyword == "deprecated" && deprecated.actual == "3")
        #expect(deprecated.schemaPointer == "/paths/~1things/get/responses/200/headers/X-Old-Total/deprecated")
        #expect(deprecated.message == "the header X-Old-Total is deprecated in the description")
        // Also when its value is wrong: both are said.
        let wrong = try Self.violations(check, ContractCheckTests.flow("GET", "/v1/things", status: 200, headers: [("X-Old-Total", "many")]))
        #expect(wrong.map(\.kind) == [.deprecated, .schema], "\(wrong)")
        #expect(try Self.violations(check, ContractCheckTests.flow("GET", "/v1/things", status: 200, headers: [("X-Total", "3")])) == [])
        // A warning fails a report only with --fail-on warnings.
        var report = ContractReport(ContractSet([check]))
        report.add(ContractCheckTests.flow("GET", "/v1/things", status: 200, headers: [("X-Old-Total", "3")]))
        #expect(report.exitCode(failOn: []) == 0)
        #expect(report.exitCode(failOn: .warnings) == 1)
    }

    /// The same findings in the JSON and JUnit reports `kagami validate` writes.
    @Test func theReportsCarryTheFindings() throws {
        var report = ContractReport(ContractSet([try Self.check(version: "3.1.0")]))
        report.add(Self.listWith("X-Total-Count", "abc"))
        report.add(ContractCheckTests.flow(
            "POST", "/v1/items", requestHeaders: [("Content-Type", "application/json")], requestBody: #"{"name":"a"}"#, status: 201,
            body: #"{"id":7,"name":"a"}"#))
        #expect(report.exitCode(failOn: []) == 1)
        let json = report.json()
        let violations = json["violations"]?.arrayValue ?? []
        let places = violations.map { "\($0["location"]?.stringValue ?? "").\($0["name"]?.stringValue ?? "") \($0["keyword"]?.stringValue ?? "")" }
        #expect(places.sorted() == ["header.Location required", "header.X-Total-Count type"], "\(json.serialized())")
        let junit = report.junit()
        #expect(junit.contains(#"<failure message="response header.X-Total-Count: "#), "\(junit)")
        #expect(junit.contains(#"<failure message="response header.Location: the required header Location is missing" type="missing">"#), "\(junit)")
    }
}

/// Through the proxy: curl against a small origin on 127.0.0.1:0 whose answers keep or break
/// the headers the description declares; the proxy's check stores what it finds with each flow.
@Suite("Declared response headers through the proxy", .serialized)
struct ResponseHeadersThroughProxyTests {
    static let items = #"[{"id":1,"name":"a"}]"#

    static let script: ScriptedOrigin.Script = { request in
        let json = ("Content-Type", "application/json")
        switch (request.method, request.uri) {
        case ("GET", "/v1/items?page=1"):
            return ScriptedOrigin.Reply(status: 200, headers: [json, ("X-Total-Count", "2"), ("X-Rate-Limit-Remaining", "9")], body: Array(items.utf8))
        case ("GET", "/v1/items?page=2"):
            return ScriptedOrigin.Reply(status: 200, headers: [json, ("X-Total-Count", "abc"), ("X-Rate-Limit-Remaining", "8")], body: Array(items.utf8))
        case ("POST", "/v1/items"):
            return ScriptedOrigin.Reply(status: 201, headers: [json], body: Array(#"{"id":7,"name":"a"}"#.utf8))
        case ("DELETE", "/v1/items/1"):
            return ScriptedOrigin.Reply(status: 204, headers: [("X-Deleted-At", "2026-11-29T06:00:00Z"), ("X-Mode", "soft")])
        default:
            return ScriptedOrigin.Reply(status: 418)
        }
    }

    @Test func findingsAreStoredWithTheirFlows() async throws {
        try await ContractProxyHarness.with(description: "headers.yaml", script: Self.script) { h in
            let base = "\(h.origin.baseURL)/v1"
            _ = try await h.curl(["\(base)/items?page=1"])
            _ = try await h.curl(["\(base)/items?page=2"])
            _ = try await h.curl(["-X", "POST", "-H", "Content-Type: application/json", "--data", #"{"name":"a"}"#, "\(base)/items"])
            let deleted = try await h.curl(["-X", "DELETE", "-o", "/dev/null", "-w", "%{http_code}", "\(base)/items/1"])
            #expect(deleted.stdoutText == "204")
            let flows = try await h.checkedFlows(count: 4)
            #expect(flows.count == 4)
            var byTarget: [String: [ContractViolation]] = [:]
            for flow in flows { byTarget["\(flow.request.method) \(flow.request.target)", default: []] += flow.violations }
            #expect(byTarget["GET /v1/items?page=1"] == [], "\(byTarget)")
            #expect(byTarget["DELETE /v1/items/1"] == [], "\(byTarget)")
            let count = try #require(byTarget["GET /v1/items?page=2"])
            #expect(count.map(\.place) == ["header.X-Total-Count"] && count.first?.keyword == "type" && count.first?.side == .response)
            let created = try #require(byTarget["POST /v1/items"])
            #expect(created.map(\.place) == ["header.Location"] && created.first?.kind == .missing && created.first?.severity == .error)
        }
    }
}
