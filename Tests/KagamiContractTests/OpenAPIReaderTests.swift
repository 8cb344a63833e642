import Foundation
import KagamiContract
import KagamiJSON
import KagamiOpenAPI
import KagamiTesting
import Synchronization
import Testing

@Suite struct OpenAPIReaderTests {
    static func fixture(_ name: String) -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    @Test func yaml30DocumentBecomesActionsWithParametersAndExamples() throws {
        let contract = OpenAPIReader.parse(Self.fixture("petstore-3.0.yaml"))
        #expect(contract.errors.isEmpty, "\(contract.errors)")
        #expect(contract.format == .openAPI30)
        #expect(contract.name == "Pet Store")
        #expect(contract.servers == [Server(url: "https://api.example.com/v1", description: "production")])
        #expect(contract.actions.map { "\($0.method) \($0.uriTemplate) \($0.name)" } == [
            "GET /pets{?limit} listPets", "POST /pets createPet", "GET /pets/{petId} showPet",
        ])
        let list = contract.actions[0]
        #expect(list.parameters.map { "\($0.name) \($0.location.rawValue) \($0.required)" } == ["limit query false", "X-Trace-Id header true"])
        #expect(list.parameters[0].defaultValue == "20")
        #expect(list.parameters[1].members == ["a", "b"])
        let ok = try #require(list.defaultResponse)
        #expect(ok.status == 200)
        #expect(ok.payload.header("X-Next") == "/pets?page=2")
        #expect(ok.payload.bodySource == .body)
        #expect(ok.payload.bodyJSON?[0]?["name"]?.stringValue == "Rex")
        // `$ref` to Pet is inlined; Pet's reference to itself stays a `$ref` into `$defs`.
        let items = try #require(ok.payload.schema?["items"])
        #expect(items["required"] == ["id", "name"])
        #expect(items["properties"]?["parent"]?["$ref"]?.stringValue == "#/$defs/Pet")
        #expect(ok.payload.schema?["$defs"]?["Pet"]?["type"]?.stringValue == "object")
        // The `default` response: status 0, body made from the schema.
        let fallback = try #require(list.examples.first?.responses.last)
        #expect(fallback.status == 0)
        #expect(fallback.payload.bodySource == .schema)
        #expect(fallback.payload.bodyJSON?["code"]?.intValue == 404)

        let create = contract.actions[1]
        let request = try #require(create.examples.first?.requests.first)
        #expect(request.name == "rex")
        #expect(request.payload.bodyJSON?["id"]?.intValue == 1)
        #expect(create.defaultResponse?.status == 201)

        let show = contract.actions[2]
        #expect(show.parameters.map { "\($0.name) \($0.location.rawValue)" } == ["petId path", "session cookie"])
        #expect(show.examples.first?.responses.map(\.status) == [200, 404])
        #expect(show.sourceLocation?.line == 68)
    }

    @Test func json31DocumentKeepsNamedExamplesAndDialect() throws {
        let contract = OpenAPIReader.parse(Self.fixture("notes-3.1.json"))
        #expect(contract.errors.isEmpty, "\(contract.errors)")
        #expect(contract.format == .openAPI31)
        let get = try #require(contract.actions.first)
        #expect(get.name == "getNote")
        #expect(get.parameters.first?.example == "7")
        let responses = try #require(get.examples.first?.responses)
        #expect(responses.map(\.name) == ["short", "long"])
        #expect(responses[1].payload.bodyJSON?["text"]?.stringValue == "a longer note")
        #expect(responses[0].payload.schemaDialect == OpenAPIReader.schemaDialect)
        #expect(responses[0].payload.schema?["properties"]?["text"]?["type"] == ["string", "null"])
        #expect(contract.actions[1].defaultResponse?.status == 204)
        #expect(contract.actions[1].defaultResponse?.payload.body == nil)
    }

    @Test func brokenDocumentsGiveErrorsWithPositions() {
        let badJSON = OpenAPIReader.parse("{\n  \"openapi\": \"3.1.0\",\n  \"info\": {\"title\": }\n}")
        #expect(badJSON.errors.first?.sourceLocation?.line == 3)
        let notOpenAPI = OpenAPIReader.parse("swagger: '1.2'\ninfo: {title: x}\n")
        #expect(notOpenAPI.errors.first?.message.contains("OpenAPI 3.0 or 3.1") == true)
        let neither = OpenAPIReader.parse("info: {title: x}\npaths: {}\n")
        #expect(neither.errors.first?.message.contains("no 'openapi' or 'swagger' field") == true)
        // Swagger 2.0 is read (SwaggerReadingTests); one without paths says so.
        #expect(!OpenAPIReader.parse("swagger: '2.0'\ninfo: {title: x}\n").errors.isEmpty)
        let missingInfo = OpenAPIReader.parse("openapi: 3.1.0\npaths: {}\n")
        #expect(!missingInfo.errors.isEmpty)
    }

    /// Path items decoded apart (as a large description's are) give the contract and the
    /// problems decoding the whole document gives, a broken path or a security requirement
    /// naming no scheme included.
    @Test func pathItemsDecodedApartGiveTheSameContract() {
        let petstore = Self.fixture("petstore-3.0.yaml")
        let documents = [
            petstore, Self.fixture("notes-3.1.json"),
            petstore.replacingOccurrences(of: "operationId: showPet", with: "operationId: showPet\n      bogus: 1"),
            petstore.replacingOccurrences(of: "operationId: showPet", with: "operationId: showPet\n      security: [{missing: []}]"),
            petstore.replacingOccurrences(of: "operationId: showPet", with: "operationId: listPets"),
        ]
        #expect(documents.allSatisfy { !$0.isEmpty })
        for (index, text) in documents.enumerated() {
            let whole = OpenAPIReader.parse(text, minimumPathsApart: .max)
            let apart = OpenAPIReader.parse(text, minimumPathsApart: 0)
            #expect(apart == whole, "document \(index)")
            #expect(index < 2 || !whole.annotations.isEmpty, "document \(index)")
        }
    }

    /// A large description says how far reading has got, counted in paths (and, through
    /// OpenAPIKit, in paths and component schemas decoded).
    @Test(arguments: [OpenAPIReader.PathReading.fromValues, .throughOpenAPIKit])
    func readingReportsItsProgress(reading: OpenAPIReader.PathReading) {
        let paths = (0..<700).map { "  /things/t\($0): {get: {responses: {'204': {description: none}}}}" }
        let text = (["openapi: 3.1.0", "info: {title: many, version: '1'}", "paths:"] + paths
            + ["components:", "  schemas:", "    Thing: {type: object}"]).joined(separator: "\n")
        let reports = Mutex<[ReadingProgress]>([])
        let contract = OpenAPIReader.parse(text, reading: reading) { progress in reports.withLock { $0.append(progress) } }
        #expect(contract.actions.count == 700)
        let counted = reports.withLock { $0 }.filter { $0.stage == (reading == .fromValues ? "operations" : "decoding") }
        let total = reading == .fromValues ? 700 : 701
        #expect(counted.contains { $0.done == 500 && $0.total == total }, "\(counted)")
        #expect(counted.allSatisfy { $0.done <= $0.total })
    }

    /// A description whose aliases stand for a billion values is refused, not expanded.
    @Test func aliasBombsAreRefused() {
        let levels = (1..<9).map { level -> String in
            "  l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ") + "]"
        }
        let text = (["openapi: 3.1.0", "info: {title: bomb, version: '1'}", "x-bomb:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + levels + ["paths: {x-all: *l8}"]).joined(separator: "\n")
        let contract = OpenAPIReader.parse(text)
        #expect(contract.actions.isEmpty)
        #expect(contract.errors.first?.message.contains("once its aliases (*name) are expanded") == true, "\(contract.errors)")
    }
}

/// Mutated OpenAPI (and Swagger 2.0) documents never crash the reader, and the errors it
/// reports have positions.
@Suite struct OpenAPIFuzzTests {
    @Test func mutatedDocumentsNeverCrash() {
        let inputs = ["petstore-3.0.yaml", "notes-3.1.json", "petstore-2.0.json", "uploads-2.0.yaml"].map { Array(OpenAPIReaderTests.fixture($0).utf8) }
        var generator = SeededGenerator(state: 0x5DEE_CE66_D1CE_4E5B)
        var unpositioned: [String] = []
        let iterations = 2000
        for iteration in 0..<iterations {
            let text = String(decoding: BlueprintFuzzTests.mutate(inputs[iteration % inputs.count], using: &generator), as: UTF8.self)
            let contract = OpenAPIReader.parse(text)
            unpositioned += contract.errors.filter { $0.sourceLocation == nil }.map(\.message)
        }
        print("openapi fuzz: \(iterations) documents read, \(unpositioned.count) errors without a position")
        for message in unpositioned.prefix(5) { print("  \(message)") }
        #expect(unpositioned.isEmpty)
    }
}
