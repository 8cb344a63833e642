import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import Testing

/// The API Blueprint specification's Attributes section: where a payload's example and schema
/// come from when Body, Schema and Attributes meet, which attributes a request inherits, and
/// what an Attributes section without a type describes.
@Suite struct BlueprintAttributesTests {
    static func response(_ text: String, action index: Int = 0) throws -> MessagePayload {
        let contract = BlueprintParser.parse(text)
        #expect(contract.errors.isEmpty, "\(contract.errors.map(\.message))")
        let action = try #require(contract.actions.dropFirst(index).first)
        return try #require(action.defaultResponse).payload
    }

    static func compiled(_ payload: MessagePayload) throws -> JSONSchema {
        try JSONSchema(compiling: try #require(payload.schema))
    }

    @Test func bodyIsTheExampleAndAttributesTheSchema() throws {
        let payload = try Self.response("""
        # API

        # GET /coupon

        + Response 200 (application/json)
            + Attributes
                + id: 250FF (string, required)
            + Body

                    {"id": "from-the-body"}

        """)
        #expect(payload.bodySource == .body)
        #expect(payload.bodyJSON == ["id": "from-the-body"])
        #expect(payload.schemaSource == .attributes)
        let schema = try Self.compiled(payload)
        #expect(schema.isValid(["id": "X"]))
        #expect(!schema.isValid([:]))
    }

    @Test func schemaSectionWinsOverAttributes() throws {
        let payload = try Self.response("""
        # API

        # GET /coupon

        + Response 200 (application/json)
            + Attributes
                + id: 250FF (string)
            + Schema

                    {"type": "object", "required": ["percent"]}

        """)
        #expect(payload.schemaSource == .schema)
        #expect(payload.bodySource == .attributes)
        #expect(payload.bodyJSON == ["id": "250FF"])
        let schema = try Self.compiled(payload)
        #expect(!schema.isValid(["id": "250FF"]))
        #expect(schema.isValid(["percent": 5]))
    }

    @Test func attributesWithoutATypeDescribeAnObject() throws {
        let payload = try Self.response("""
        # API

        # GET /coupon

        + Response 200 (application/json)
            + Attributes
                + percent: 25 (number)

        """)
        #expect(payload.bodyJSON == ["percent": 25])
        let schema = try Self.compiled(payload)
        #expect(!schema.isValid([25]))
        #expect(!schema.isValid(["percent": "25"]))
    }

    @Test func namedResourceAttributesAreATypeOthersUse() throws {
        let payload = try Self.response("""
        # API

        # Blog Post [/posts/{id}]

        + Attributes
            + id: 1 (number)
            + message: Hello (string)

        ## Read [GET]

        + Response 200 (application/json)
            + Attributes (Blog Post)

        # Blog Posts [/posts]

        ## List [GET]

        + Response 200 (application/json)
            + Attributes (array[Blog Post])

        """, action: 1)
        #expect(payload.bodyJSON == [["id": 1, "message": "Hello"]])
        let schema = try Self.compiled(payload)
        #expect(schema.isValid([]))
        #expect(!schema.isValid(["id": 1]))
    }

    @Test func requestsInheritTheActionsAttributes() throws {
        let contract = BlueprintParser.parse("""
        # API

        # POST /coupons

        + Attributes
            + percent: 25 (number, required)

        + Request (application/json)

        + Response 201

        """)
        #expect(contract.errors.isEmpty, "\(contract.errors.map(\.message))")
        let request = try #require(contract.actions.first?.examples.first?.requests.first)
        #expect(request.payload.bodyJSON == ["percent": 25])
        let schema = try Self.compiled(request.payload)
        #expect(!schema.isValid([:]))
        #expect(schema.isValid(["percent": 10]))
    }
}
