// The mock on an OpenAPI description: the servers' base path, `default` responses, numeric
// formats, and the status for each kind of bad request; curl is the client.
import KagamiFlow
import Foundation
import KagamiContractCheck
import KagamiDescription
import KagamiJSON
@testable import KagamiMock
import Testing

@Suite struct OpenAPIMockTests {
    static var petstore: String { MockClient.fixtures.appendingPathComponent("petstore.yaml").path }

    @Test func routesUnderTheServersBasePathAndWithout() async throws {
        let server = try await MockServer.start(path: Self.petstore)
        defer { Task { try await server.stop() } }
        let based = try await MockClient.curl("GET", server.url + "/v1/pets")
        #expect(based.status == 200)
        #expect(based.json?.arrayValue != nil, "\(based.body)")
        let pet = try await MockClient.curl("GET", server.url + "/v1/pets/7")
        #expect(pet.status == 200)
        #expect(pet.json?["name"]?.stringValue != nil, "\(pet.body)")
        let bare = try await MockClient.curl("GET", server.url + "/pets")
        #expect(bare.status == 200)
        let elsewhere = try await MockClient.curl("GET", server.url + "/v2/pets")
        #expect(elsewhere.status == 404)
        // The docs page shows the typed client's line for this mock, base path included.
        let docs = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(docs.body.contains(MarkupText.escaped("Client(serverURL: URL(string: \"\(server.url)/v1\")!")), "\(docs.body.prefix(2000))")
    }

    /// The docs page lists the headers each response declares: required, deprecated, the
    /// schema (a `$ref` to `components/headers` followed) and the description.
    @Test func docsPageShowsDeclaredResponseHeaders() async throws {
        let headers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("KagamiContractCheckTests/Fixtures/headers.yaml").path
        let text = try String(contentsOfFile: headers, encoding: .utf8).replacingOccurrences(
            of: "            X-Mode:\n", with: "            X-Mode:\n              deprecated: true\n")
        let server = try await MockServer.start(text: text, format: .openAPI)
        defer { Task { try await server.stop() } }
        let docs = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(docs.status == 200)
        let page = docs.body
        let table = try #require(page.range(of: "<table class=\"headers\">").map { String(page[$0.lowerBound...]) })
        // The list's headers, X-Total-Count with its schema's minimum and its description.
        #expect(table.contains("<code>X-Total-Count</code></td><td>no</td>"), "\(table.prefix(800))")
        #expect(table.contains("How many items there are"))
        #expect(page.contains("<code>X-Rate-Limit-Remaining</code></td><td>yes</td>"), "the components' header, required")
        #expect(page.contains("Calls left in this window"))
        #expect(page.contains("<code>Location</code></td><td>yes</td>"))
        #expect(page.contains("<code>X-Mode</code> <span class=\"deprecated\">deprecated</span>"))
        #expect(page.contains("uri-reference"), "Location's schema")
        // The schema is shown: X-Page-Sizes is an array of integers.
        let pageSizes = try #require(page.range(of: "<code>X-Page-Sizes</code>"))
        let row = page[pageSizes.lowerBound...].prefix(600)
        #expect(row.contains("array") && row.contains("integer"), "\(row)")
    }

    @Test func defaultResponseAnswersUndocumentedStatuses() async throws {
        let server = try await MockServer.start(path: Self.petstore)
        defer { Task { try await server.stop() } }
        let missing = try await MockClient.curl("GET", server.url + "/v1/pets/7", headers: ["Prefer: code=404"])
        #expect(missing.status == 404)
        // The `default` response's Error shape.
        #expect(missing.json?["code"]?.doubleValue != nil, "\(missing.body)")
        #expect(missing.json?["message"]?.stringValue != nil, "\(missing.body)")
        #expect(missing.header("Content-Type") == "application/json")
    }

    @Test func integerFormatsAreBounds() async throws {
        let server = try await MockServer.start(path: Self.petstore)
        defer { Task { try await server.stop() } }
        let tooLarge = try await MockClient.curl("GET", server.url + "/v1/pets?limit=-3000000000")
        #expect(tooLarge.status == 422)
        // The operation's `default` response, with the status of the refusal.
        #expect(tooLarge.json?["message"]?.stringValue != nil, "\(tooLarge.body)")
        let age = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"],
            body: #"{"id": 1, "name": "Tom", "age": 4294967296}"#)
        #expect(age.status == 422)
        let id = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"],
            body: #"{"id": 9007199254740993, "name": "Tom", "age": 3}"#)
        #expect(id.status == 201)
        let weight = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"],
            body: #"{"id": 1, "name": "Tom", "weight": 1e39}"#)
        #expect(weight.status == 422)
    }

    @Test func badRequestsGetTheStatusForWhatIsWrong() async throws {
        let server = try await MockServer.start(path: Self.petstore)
        defer { Task { try await server.stop() } }
        let malformed = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"], body: #"{"id": 1,"#)
        #expect(malformed.status == 400)
        let wrongType = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: text/plain"], body: "Tom")
        #expect(wrongType.status == 415)
        let invalid = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"], body: #"{"id": "one"}"#)
        #expect(invalid.status == 422)
        let valid = try await MockClient.curl(
            "POST", server.url + "/v1/pets", headers: ["Content-Type: application/json"], body: #"{"id": 1, "name": "Tom"}"#)
        #expect(valid.status == 201)
    }
}

/// What real OpenAPI documents do that RFC 6570 alone would refuse or misread: parameter names
/// with `-`, repeated query parameters, an optional request body, a nullable `oneOf`.
@Suite struct OpenAPIParameterNameTests {
    static let document = """
        openapi: 3.1.0
        info: {title: Items, version: "1"}
        paths:
          /items/{item-id}:
            get:
              parameters:
                - {name: item-id, in: path, required: true, schema: {type: integer}}
                - {name: page-size, in: query, schema: {type: integer, maximum: 50}}
                - {name: tag, in: query, schema: {type: array, items: {type: string, enum: [red, blue]}}}
              responses:
                "200":
                  description: the item's label, or null
                  content:
                    application/json:
                      schema:
                        oneOf: [{type: string}, {type: "null"}]
                      example: "red kite"
            put:
              parameters:
                - {name: item-id, in: path, required: true, schema: {type: integer}}
              requestBody:
                content:
                  application/json:
                    schema: {type: object, required: [label], properties: {label: {type: string}}}
              responses:
                "204": {description: saved}
        """

    @Test func namesWithHyphensRouteAndAreChecked() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        #expect(try await MockClient.curl("GET", server.url + "/items/7?page-size=20").status == 200)
        let path = try await MockClient.curl("GET", server.url + "/items/seven")
        #expect(path.status == 422)
        #expect(path.body.contains("path.item-id"), "\(path.body)")
        let query = try await MockClient.curl("GET", server.url + "/items/7?page-size=99")
        #expect(query.status == 422)
        #expect(query.body.contains("query.page-size"), "\(query.body)")
    }

    @Test func everyValueOfARepeatedQueryParameterIsChecked() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        #expect(try await MockClient.curl("GET", server.url + "/items/7?tag=red&tag=blue").status == 200)
        #expect(try await MockClient.curl("GET", server.url + "/items/7?tag=red&tag=green").status == 422)
        #expect(try await MockClient.curl("GET", server.url + "/items/7?page-size=10&page-size=ten").status == 422)
    }

    @Test func anOptionalRequestBodyMayBeLeftOut() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        #expect(try await MockClient.curl("PUT", server.url + "/items/7").status == 204)
        let wrong = try await MockClient.curl("PUT", server.url + "/items/7", headers: ["Content-Type: application/json"], body: #"{"name": 1}"#)
        #expect(wrong.status == 422)
    }

    /// The documented example is a string: the `oneOf` with a null branch lets it through.
    @Test func aNullableOneOfAllowsItsBranches() {
        let file = DescriptionFile(text: Self.document, path: "items.yaml")
        let schema = file.contract.groups.flatMap(\.resources).flatMap(\.actions).first?.examples.first?.responses.first?.payload.schema
        #expect(schema?["type"] == nil, "\(String(describing: schema))")
        let problems = file.problems(routes: OperationRoutes(contract: file.contract))
        #expect(problems.isEmpty, "\(problems)")
    }
}

/// A type's keywords written beside a `oneOf` (`required`, `properties`) constrain a request as
/// much as the alternatives do: the mock refuses a body without the shared required member.
@Suite struct KeywordsBesideACombinationTests {
    static let document = """
        openapi: 3.0.3
        info: {title: Pets, version: "1"}
        paths:
          /pets:
            post:
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [name]
                      properties:
                        name: {type: string}
                      oneOf:
                        - {required: [bark], properties: {bark: {type: boolean}}}
                        - {required: [meow], properties: {meow: {type: boolean}}}
              responses:
                "204": {description: stored}
        """

    @Test func aSharedRequiredMemberIsChecked() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        let json = ["Content-Type: application/json"]
        #expect(try await MockClient.curl("POST", server.url + "/pets", headers: json, body: #"{"name": "Rex", "bark": true}"#).status == 204)
        let nameless = try await MockClient.curl("POST", server.url + "/pets", headers: json, body: #"{"bark": true}"#)
        #expect(nameless.status == 422)
        #expect(nameless.body.contains("name"), "\(nameless.body)")
        #expect(try await MockClient.curl("POST", server.url + "/pets", headers: json, body: #"{"name": 7, "meow": true}"#).status == 422)
        #expect(try await MockClient.curl("POST", server.url + "/pets", headers: json, body: #"{"name": "Tom"}"#).status == 422)
    }
}
