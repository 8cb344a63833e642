import Foundation
import KagamiBlueprint
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiJSON
import KagamiJSONSchema
@testable import KagamiOpenAPI
import Testing

/// An OpenAPI response's `headers` read into the contract (3.0 and 3.1, both readers alike):
/// each declared header with `required`, its schema (a `$ref` to `components/headers` and to a
/// component schema followed), and an example line that reads valid against that schema; and
/// what `convert` to API Blueprint keeps of them and says it can't.
@Suite struct ResponseHeaderReadingTests {
    static let fixture = OpenAPIValuesReaderTests.file("Tests/KagamiContractCheckTests/Fixtures/headers.yaml")

    static func text(version: String) -> String {
        fixture.replacingOccurrences(of: "openapi: 3.0.3", with: "openapi: \(version)")
    }

    static func response(_ contract: APIContract, _ method: String, _ status: Int) throws -> Response {
        let action = try #require(contract.actions.first { $0.method == method })
        return try #require(action.examples.first?.responses.first { $0.status == status })
    }

    /// The example line of each declared header reads, in the simple style, as a value its schema accepts.
    static func expectExampleLinesValid(_ response: Response) {
        for header in response.declaredHeaders {
            guard let line = response.payload.header(header.name) else {
                Issue.record("\(header.name) has no example line")
                continue
            }
            guard let schema = header.schema, let compiled = try? JSONSchema(compiling: schema, options: .init(assertsFormat: true, direction: .response)) else { continue }
            let value = header.value(of: line)
            #expect(value.map { compiled.validate($0).isValid } == true, "\(header.name): \(line) against \(schema.serialized())")
        }
    }

    @Test(arguments: ["3.0.3", "3.1.0"]) func declaredHeadersAreRead(_ version: String) throws {
        let text = Self.text(version: version)
        OpenAPIValuesReaderTests.expectSameBothWays(text, "headers \(version)", readFromValues: true)
        let contract = OpenAPIReader.parse(text)
        #expect(contract.errors.isEmpty, "\(contract.errors)")

        let list = try Self.response(contract, "GET", 200)
        // `Content-Type` is left out, as OpenAPI says.
        #expect(list.declaredHeaders.map(\.name) == ["X-Total-Count", "X-Rate-Limit-Remaining", "Link", "X-Page-Sizes"])
        #expect(list.payload.headers.filter { $0.name == "Content-Type" }.map(\.value) == ["application/json"])
        let total = try #require(list.declaredHeaders.first)
        #expect(!total.required && total.description == "How many items there are")
        #expect(total.schema?["type"] == "integer" && total.schema?["minimum"] == 0)
        #expect(total.schemaPointer == "/paths/~1items/get/responses/200/headers/X-Total-Count/schema")
        #expect(total.sourceLocation?.line == ConversionLossTests.line(of: "X-Total-Count:", in: text))
        // A `$ref` to the components, whose schema is a `$ref` to a component schema.
        let remaining = list.declaredHeaders[1]
        #expect(remaining.required && remaining.description == "Calls left in this window")
        #expect(remaining.schema?["type"] == "integer" && remaining.schema?["minimum"] == 0)
        #expect(remaining.schemaPointer == "/components/headers/RateLimitRemaining/schema")
        Self.expectExampleLinesValid(list)

        let created = try Self.response(contract, "POST", 201)
        #expect(created.declaredHeaders.map(\.name) == ["Location", "X-Request-Id"])
        #expect(created.declaredHeaders.map(\.required) == [true, false])
        // The example as written; a value written from the schema where there is none.
        #expect(created.payload.header("Location") == "/v1/items/7")
        Self.expectExampleLinesValid(created)
        // A response of `components/responses`.
        let tooMany = try Self.response(contract, "POST", 429)
        #expect(tooMany.declaredHeaders.map(\.name) == ["Retry-After"] && tooMany.declaredHeaders.first?.required == true)
        #expect(tooMany.declaredHeaders.first?.schemaPointer == "/components/responses/TooMany/headers/Retry-After/schema")
        Self.expectExampleLinesValid(tooMany)
        let deleted = try Self.response(contract, "DELETE", 204)
        Self.expectExampleLinesValid(deleted)
        #expect(deleted.payload.header("X-Mode") == "soft")

        // The contract's JSON names them.
        let json = contract.jsonValue
        let responses = json["groups"]?[0]?["resources"]?[0]?["actions"]?[1]?["examples"]?[0]?["responses"]
        #expect(responses?[0]?["declaredHeaders"]?[0]?["name"] == "Location")
        #expect(responses?[0]?["declaredHeaders"]?[0]?["required"] == true)
    }

    /// A header declared with `content` (its value JSON text) or with named `examples`: read
    /// through OpenAPIKit, alike.
    @Test func contentAndNamedExamplesAreRead() throws {
        let text = Self.text(version: "3.1.0").replacingOccurrences(of: """
                    X-Request-Id:
                      schema:
                        type: string
                        format: uuid
        """, with: """
                    X-Request-Id:
                      schema:
                        type: string
                        format: uuid
                      examples:
                        first:
                          value: 0b7f5b52-4f0e-4a8e-9d52-5f1c1a0e7a11
                    X-Trace:
                      content:
                        application/json:
                          schema:
                            type: object
                            required: [span]
                            properties:
                              span:
                                type: integer
        """)
        #expect(text.contains("X-Trace"))
        OpenAPIValuesReaderTests.expectSameBothWays(text, "content and examples", readFromValues: false)
        let created = try Self.response(OpenAPIReader.parse(text), "POST", 201)
        #expect(created.payload.header("X-Request-Id") == "0b7f5b52-4f0e-4a8e-9d52-5f1c1a0e7a11")
        let trace = try #require(created.declaredHeaders.first { $0.name == "X-Trace" })
        #expect(trace.mediaType == "application/json" && trace.schema?["required"] == ["span"])
        #expect(trace.schemaPointer == "/paths/~1items/post/responses/201/headers/X-Trace/content/application~1json/schema")
        #expect(trace.value(of: #"{"span":3}"#) == ["span": 3])
        #expect(trace.value(of: "span,3") == nil)
        let line = try #require(created.payload.header("X-Trace"))
        #expect((try? JSONValue(parsing: line))?["span"]?.intValue != nil, "\(line)")
        Self.expectExampleLinesValid(created)
    }

    /// `convert` to API Blueprint: each declared header's example value as a header line,
    /// and what a Blueprint can't say of it (schema, required, description) named at its line.
    @Test func convertKeepsTheExampleAndNamesWhatItCannotCarry() throws {
        let path = try DescriptionCommandsTests.write(Self.fixture, named: "headers.yaml")
        let source = try DescriptionFile(path: path)
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: source.contract, notes: &notes)
        #expect(blueprint.contains("Location: /v1/items/7"), "\(blueprint)")
        #expect(blueprint.contains("X-Rate-Limit-Remaining: 0"), "\(blueprint)")
        #expect(blueprint.contains("Retry-After: 1"), "\(blueprint)")
        #expect(!blueprint.contains("Content-Type: text/plain"), "\(blueprint)")
        notes += OpenAPIReader.blueprintNotes(Self.fixture)
        let lines = ConvertCommand.lines(notes, file: path)
        func expectNote(at marker: String, containing words: String) {
            let line = ConversionLossTests.line(of: marker, in: Self.fixture)
            #expect(lines.contains { $0.hasPrefix("\(path):\(line):") && $0.contains(words) }, "\(marker) (line \(line)) → \(words)\n\(lines.joined(separator: "\n"))")
        }
        expectNote(at: "Location:", containing: "response header 'Location': a Blueprint shows it as a value; its schema and whether it is required are left out")
        expectNote(at: "X-Total-Count:", containing: "its schema and its description")
        // A `$ref` to `components/headers` is followed for what it declares.
        expectNote(at: "X-Rate-Limit-Remaining:", containing: "its schema, whether it is required and its description are left out")
        expectNote(at: "Retry-After:", containing: "whether it is required")
        // Converted back, the Blueprint's header lines are read as example lines again.
        let back = BlueprintParser.parse(blueprint)
        let created = try #require(back.actions.first { $0.method == "POST" }?.examples.first?.responses.first { $0.status == 201 })
        #expect(created.payload.header("Location") == "/v1/items/7")
        #expect(created.declaredHeaders.isEmpty)
    }
}

extension ResponseHeaderReadingTests {
    /// `convert` to OpenAPI writes each declared header as declared: read back, the same
    /// names, `required` flags and schemas' types, and example lines.
    @Test func convertToOpenAPIKeepsTheDeclarations() throws {
        let contract = OpenAPIReader.parse(Self.fixture)
        var notes: [ConversionNote] = []
        let written = OpenAPIWriter.document(for: contract, serverURL: "http://127.0.0.1:5000/v1", notes: &notes)
        let back = OpenAPIReader.parse(written.serialized(.prettyPrinted))
        #expect(back.errors.isEmpty, "\(back.errors)")
        for (method, status) in [("GET", 200), ("POST", 201), ("POST", 429), ("DELETE", 204)] {
            let before = try Self.response(contract, method, status)
            let after = try Self.response(back, method, status)
            #expect(after.declaredHeaders.map(\.name) == before.declaredHeaders.map(\.name), "\(method) \(status)")
            #expect(after.declaredHeaders.map(\.required) == before.declaredHeaders.map(\.required), "\(method) \(status)")
            #expect(after.declaredHeaders.map { $0.schema?["type"] } == before.declaredHeaders.map { $0.schema?["type"] }, "\(method) \(status)")
            #expect(after.declaredHeaders.map(\.description) == before.declaredHeaders.map(\.description), "\(method) \(status)")
            for header in before.declaredHeaders {
                #expect(after.payload.header(header.name) == before.payload.header(header.name), "\(method) \(status) \(header.name)")
            }
        }
    }
}
