import Foundation
import KagamiBlueprint
import KagamiContract
import Testing

/// The official API Blueprint examples: each parses without errors (but the mistakes listed in
/// `expectedErrors`, reported where they are), and the actions (method,
/// URI template) and response statuses the mock would serve are the ones the files describe.
@Suite struct BlueprintExamplesTests {
    static let expected: [String: [String]] = [
        "01. Simplest API.md": ["GET /message 200"],
        "02. Resource and Actions.md": ["GET /message 200", "PUT /message 204"],
        "03. Named Resource and Actions.md": ["GET /message 200", "PUT /message 204"],
        "04. Grouping Resources.md": ["GET /message 200", "PUT /message 204"],
        "05. Responses.md": ["GET /message 200,200", "PUT /message 204"],
        "06. Requests.md": ["GET /message 200,200", "PUT /message 204"],
        "07. Parameters.md": ["GET /message/{id} 200,200", "PUT /message/{id} 204", "GET /messages{?limit} 200"],
        "08. Attributes.md": ["GET /coupons/{id} 200"],
        "09. Advanced Attributes.md": ["GET /coupons/{id} 200", "GET /coupons{?limit} 200", "POST /coupons{?limit} 200"],
        "10. Data Structures.md": ["GET /coupons/{id} 200", "GET /coupons{?limit} 200", "POST /coupons{?limit} 200"],
        "11. Resource Model.md": ["GET /message 200", "PUT /message 204"],
        "12. Advanced Action.md": ["GET /tasks/tasks{?status,priority} 200", "GET /task/{id} 200", "DELETE /task/{id} 204"],
        "13. Named Endpoints.md": ["POST /messages 201", "POST /tasks 201"],
        "14. JSON Schema.md": ["GET /notes/{id} 200", "PATCH /notes/{id} 204"],
        "15. Advanced JSON Schema.md": ["GET /notes/{id} 200", "PATCH /notes/{id} 204"],
        "Gist Fox API.md": [
            "GET / 200", "GET /gists/{id} 200", "PATCH /gists/{id} 200", "DELETE /gists/{id} 204",
            "GET /gists{?since} 200", "POST /gists{?since} 201", "PUT /gists/{id}/star 204",
            "DELETE /gists/{id}/star 204", "GET /gists/{id}/star 200",
        ],
        "Polls API.md": [
            "GET / 200", "GET /questions/{question_id} 200", "POST /questions/{question_id}/choices/{choice_id} 201",
            "GET /questions{?page} 200", "POST /questions{?page} 201",
        ],
        "README.md": [],
    ]

    /// Mistakes in the examples themselves, reported where they are.
    static let expectedErrors: [String: [String]] = [
        // A missing comma after `"content": "This is the note content."`.
        "14. JSON Schema.md": [#"30: the body is declared application/json but is not valid JSON: expected ',' or '}' in object, found '"'"#],
    ]

    @Test func everyExampleParsesWithItsActionsAndStatuses() {
        let files = ConformanceSuite.files(in: "api-blueprint/examples", withExtension: "md")
        var passed = 0
        var failures: [String] = []
        for file in files {
            let name = file.lastPathComponent
            let contract = BlueprintParser.parse(ConformanceSuite.text(file))
            let found = contract.actions.map { action in
                "\(action.method) \(action.uriTemplate) " + action.examples.flatMap { $0.responses.map { String($0.status) } }.joined(separator: ",")
            }
            let errors = contract.errors.map { "\($0.sourceLocation?.line ?? 0): \($0.message)" }
            if errors == Self.expectedErrors[name, default: []], found == Self.expected[name] {
                passed += 1
            } else {
                failures.append("\(name): errors \(errors), actions \(found)")
            }
        }
        print("apib examples: \(passed) passed, \(failures.count) failed")
        for failure in failures { print("  FAIL \(failure)") }
        #expect(files.count == Self.expected.count)
        #expect(failures.isEmpty)
    }

    @Test func resourceModelIsUsedWhereReferenced() throws {
        let file = ConformanceSuite.directory.appendingPathComponent("api-blueprint/examples/11. Resource Model.md")
        let contract = BlueprintParser.parse(ConformanceSuite.text(file))
        let get = try #require(contract.actions.first { $0.method == "GET" })
        let response = try #require(get.defaultResponse)
        #expect(response.payload.header("Content-Type") == "application/vnd.siren+json")
        #expect(response.payload.header("Location") == "http://api.acme.com/message")
        #expect(response.payload.bodyJSON?["properties"]?["message"]?.stringValue == "Hello World!")
        #expect(response.payload.schemaSource == .body)
        #expect(response.payload.schema?["type"]?.stringValue == "object")
    }

    @Test func attributesRenderBodyAndSchema() throws {
        let file = ConformanceSuite.directory.appendingPathComponent("api-blueprint/examples/10. Data Structures.md")
        let contract = BlueprintParser.parse(ConformanceSuite.text(file))
        let get = try #require(contract.actions.first { $0.uriTemplate == "/coupons/{id}" })
        let payload = try #require(get.defaultResponse?.payload)
        #expect(payload.bodySource == .attributes)
        #expect(payload.schemaSource == .attributes)
        let body = try #require(payload.bodyJSON)
        #expect(body["id"]?.stringValue == "250FF")
        #expect(body["percent_off"]?.intValue == 25)
        let required = payload.schema?["required"]?.arrayValue?.compactMap(\.stringValue)
        #expect(required == ["id"])
        let parameter = try #require(get.parameters.first)
        #expect(parameter.name == "id")
        #expect(parameter.location == .path)

        // `Coupons` is `array[Coupon]`: its example holds one rendered coupon.
        let list = try #require(contract.actions.first { $0.uriTemplate == "/coupons{?limit}" && $0.method == "GET" })
        #expect(list.defaultResponse?.payload.bodyJSON?[0]?["id"]?.stringValue == "250FF")
        let limit = try #require(list.parameters.first)
        #expect(limit.required == false)
        #expect(limit.defaultValue == "10")
        #expect(limit.location == .query)
        // Action attributes describe the request body.
        let create = try #require(contract.actions.first { $0.method == "POST" })
        #expect(create.examples.first?.requests.first?.payload.bodyJSON?["percent_off"]?.intValue == 25)
    }

    @Test func actionWithItsOwnURIKeepsOnlyParametersItUses() throws {
        let file = ConformanceSuite.directory.appendingPathComponent("api-blueprint/examples/12. Advanced Action.md")
        let contract = BlueprintParser.parse(ConformanceSuite.text(file))
        #expect(contract.actions.map { $0.parameters.map(\.name) } == [["status", "priority"], ["id"], ["id"]])
        #expect(contract.actions[0].parameters.map(\.location) == [.query, .query])
    }

    @Test func problemsCarryLineAndColumn() throws {
        let text = """
        # API

        ## Note [/notes/{id}]

        ### Get [GET]

        + Parameters
            + id: 1 (number)

        + Response 200 (application/json)
            + Attributes (Missing)

        ## Broken [/a b]
        """
        let contract = BlueprintParser.parse(text)
        let error = try #require(contract.errors.first)
        #expect(error.message == "base type 'Missing' is not defined in the document")
        #expect(error.sourceLocation?.line == 11)
        #expect(error.sourceLocation?.column == 5)
        let warning = try #require(contract.warnings.first { $0.message.contains("disallowed character ' '") })
        #expect(warning.sourceLocation?.line == 13)
    }

    @Test func setextHeadersAreHeaders() throws {
        let contract = BlueprintParser.parse("""
        Notes API
        =========

        Notes [/notes]
        --------------

        ### List [GET]

        + Response 200 (application/json)
            + Attributes (array[Note])

        ---

        Data Structures
        ===============

        Note (object)
        -------------
        - title: Groceries
        """)
        #expect(contract.errors.isEmpty, "\(contract.errors.map(\.message))")
        #expect(contract.name == "Notes API")
        let action = try #require(contract.actions.first)
        #expect(contract.resources.first?.name == "Notes")
        #expect(action.defaultResponse?.payload.bodyJSON == [["title": "Groceries"]])
    }
}
