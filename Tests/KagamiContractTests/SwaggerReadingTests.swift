// Swagger 2.0 documents read as the OpenAPI 3.0 documents they describe: servers, bodies and
// forms, files, collection formats, references to each kind of component, and errors and
// notes at the lines of the 2.0 text.
import Foundation
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiJSON
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

@Suite struct SwaggerReadingTests {
    static func line(of marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return text[..<range.lowerBound].filter { $0 == "\n" }.count + 1
    }

    static func action(_ contract: APIContract, _ method: String, _ path: String) throws -> Action {
        try #require(contract.actions.first { $0.method == method && $0.uriTemplate.hasPrefix(path) && !$0.uriTemplate.dropFirst(path.count).hasPrefix("/") })
    }

    @Test func petstoreReadsAsItsOpenAPI3Form() throws {
        let text = OpenAPIReaderTests.fixture("petstore-2.0.json")
        let contract = OpenAPIReader.parse(text)
        #expect(contract.errors.isEmpty, "\(contract.errors)")
        #expect(contract.format == .swagger20)
        #expect(contract.metadata.contains(MetadataEntry(name: "swagger", value: "2.0")))
        #expect(contract.name == "Swagger Petstore")
        #expect(contract.servers.map(\.url) == ["http://petstore.swagger.io/api"])
        #expect(contract.actions.map { "\($0.method) \($0.uriTemplate) \($0.name)" } == [
            "GET /pets{?tags,limit} findPets", "POST /pets addPet", "GET /pets/{id} findPetById", "DELETE /pets/{id} deletePet",
        ])
        #expect(contract.readingNotes.isEmpty, "\(contract.readingNotes)")

        let find = contract.actions[0]
        let tags = try #require(find.parameters.first)
        #expect(tags.location == .query && tags.schema?["type"] == "array" && tags.schema?["items"]?["type"] == "string")
        #expect(find.parameters[1].schema?["maximum"] == 100)
        let ok = try #require(find.examples.first?.responses.first)
        #expect(ok.status == 200)
        // The response's `examples` entry is the body; the schema's $ref to a definition inlined.
        #expect(ok.payload.mediaType == "application/json")
        #expect(ok.payload.bodyJSON?[0]?["name"] == "Rex")
        #expect(ok.payload.schema?["items"]?["allOf"]?[1]?["required"] == ["id"])
        // A header of the response: its type as a schema.
        #expect(ok.declaredHeaders.map(\.name) == ["X-Rate-Limit-Limit"])
        #expect(ok.declaredHeaders.first?.schema?["type"] == "integer")
        // `default` from `#/responses/UnexpectedError`, its Error schema inlined.
        let fallback = try #require(find.examples.first?.responses.last)
        #expect(fallback.status == 0)
        #expect(fallback.payload.schema?["required"] == ["code", "message"])

        // The body parameter is the request body, in each media type of `consumes`.
        let add = contract.actions[1]
        let request = try #require(add.examples.first?.requests.first)
        #expect(request.payload.mediaType == "application/json")
        #expect(request.payload.schema?["required"] == ["name"])
        #expect(request.payload.description == "Pet to add to the store")
        // `x-nullable` is 3.0's `nullable`: a null tag is a pet.
        #expect(request.payload.schema?["properties"]?["tag"]?["type"] == ["string", "null"])
        #expect(add.requestBodyRequired == true)

        // The path's parameter, a `$ref` to `#/parameters/petId`.
        let show = contract.actions[2]
        #expect(show.parameters.map { "\($0.name) \($0.location.rawValue) \($0.required) \($0.type ?? "")" } == ["id path true integer"])
        #expect(show.examples.first?.responses.map(\.status) == [200, 404])
        #expect(show.examples.first?.responses.last?.payload.description == "Entity not found.")
        // Positions are those of the 2.0 text.
        #expect(show.sourceLocation?.line == Self.line(of: "\"description\": \"Returns a user based", in: text).map { $0 - 1 })
        #expect(contract.dataStructures.map(\.name) == ["Pet", "NewPet", "Error"])
        #expect(contract.dataStructures.first?.sourceLocation?.line == Self.line(of: "\"Pet\": {", in: text))
    }

    @Test func formsFilesCollectionFormatsAndReferences() throws {
        let text = OpenAPIReaderTests.fixture("uploads-2.0.yaml")
        let contract = OpenAPIReader.parse(text)
        #expect(contract.errors.isEmpty, "\(contract.errors)")
        #expect(contract.format == .swagger20)
        #expect(contract.servers.map(\.url) == ["/v2"])

        // formData with a file: a multipart form whose file field is a binary string.
        let upload = try Self.action(contract, "POST", "/pets/{petId}/photos")
        let form = try #require(upload.examples.first?.requests.first?.payload)
        #expect(form.mediaType == "multipart/form-data")
        #expect(form.schema?["type"] == "object")
        #expect(form.schema?["required"] == ["caption", "file"])
        #expect(form.schema?["properties"]?["file"]?["type"] == "string")
        #expect(form.schema?["properties"]?["file"]?["format"] == "binary")
        #expect(form.schema?["properties"]?["caption"]?["maxLength"] == 40)
        #expect(upload.requestBodyRequired == true)
        #expect(upload.parameters.map { "\($0.name) \($0.location.rawValue) \($0.type ?? "")" } == ["petId path integer"])
        // `#/responses/Created`, its schema a `$ref` to a definition with an example.
        let created = try #require(upload.defaultResponse)
        #expect(created.status == 201)
        #expect(created.payload.schema?["properties"]?["url"]?["type"] == "string")

        // An urlencoded form; a `multi` array field.
        let update = try Self.action(contract, "PUT", "/pets/{petId}")
        let fields = try #require(update.examples.first?.requests.first?.payload)
        #expect(fields.mediaType == "application/x-www-form-urlencoded")
        #expect(fields.schema?["properties"]?["status"]?["items"]?["enum"] == ["available", "sold"])
        #expect(update.requestBodyRequired != true)

        // Query arrays keep their item types; a header parameter from `#/parameters/trace`
        // with its `x-example`.
        let list = try Self.action(contract, "GET", "/pets")
        #expect(list.parameters.map { "\($0.name) \($0.location.rawValue)" } == [
            "ids query", "tags query", "sort query", "X-Trace header", "colors query", "sizes query",
        ])
        #expect(list.parameters.map(\.arrayDelimiter) == [nil, nil, nil, nil, "|", " "])
        #expect(list.parameters[0].schema?["items"]?["type"] == "integer")
        #expect(list.parameters[3].example == "abc")
        let listed = try #require(list.defaultResponse)
        #expect(listed.declaredHeaders.first?.schema?["minimum"] == 0)
        // The definition's string discriminator is an object; the schema still checks.
        #expect(listed.payload.schema?["items"]?["discriminator"]?["propertyName"] == "kind")

        // tsv has no 3.0 style: a note at the line of its collectionFormat.
        #expect(contract.readingNotes.count == 1, "\(contract.readingNotes)")
        let note = try #require(contract.readingNotes.first)
        #expect(note.message.contains("collectionFormat 'tsv'"))
        #expect(note.sourceLocation?.line == Self.line(of: "collectionFormat: tsv", in: text))
    }

    /// The translated document before it is read: style and explode of each collection format.
    @Test func collectionFormatsBecomeStyles() throws {
        let text = OpenAPIReaderTests.fixture("uploads-2.0.yaml")
        let document = try OpenAPISource.readAsOpenAPI3(text).value
        #expect(document["openapi"] == "3.0.3")
        let parameters = try #require(document["paths"]?["/pets"]?["get"]?["parameters"])
        #expect(parameters[0]?["style"] == "form" && parameters[0]?["explode"] == false)
        #expect(parameters[1]?["style"] == "form" && parameters[1]?["explode"] == true)
        #expect(parameters[3]?["$ref"] == "#/components/parameters/trace")
        #expect(parameters[4]?["style"] == "pipeDelimited" && parameters[4]?["explode"] == false)
        #expect(parameters[5]?["style"] == "spaceDelimited" && parameters[5]?["explode"] == false)
        let encoding = document["paths"]?["/pets/{petId}"]?["put"]?["requestBody"]?["content"]?["application/x-www-form-urlencoded"]?["encoding"]
        #expect(encoding?["status"]?["explode"] == true)
        #expect(document["components"]?["schemas"]?["Pet"]?["discriminator"] == ["propertyName": "kind"])
        #expect(document["components"]?["responses"]?["Created"]?["content"]?["application/json"]?["schema"]?["$ref"] == "#/components/schemas/Photo")
        // Path-level `#/parameters/petId` stays a reference, to the component.
        #expect(document["paths"]?["/pets/{petId}"]?["parameters"]?[0]?["$ref"] == "#/components/parameters/petId")
        let petstore = try OpenAPISource.readAsOpenAPI3(OpenAPIReaderTests.fixture("petstore-2.0.json")).value
        #expect(petstore["components"]?["securitySchemes"]?["petstore_auth"]?["flows"]?["implicit"]?["authorizationUrl"] == "http://swagger.io/api/oauth/dialog")
        #expect(petstore["components"]?["securitySchemes"]?["api_key"]?["in"] == "header")
    }

    @Test func mistakesAreNamedAtTheirLineOfThe20Text() throws {
        let text = """
        swagger: "2.0"
        info:
          title: Broken
          version: "1"
        paths:
          /a:
            get:
              parameters:
                - name: q
                  in: form
                  type: string
              responses:
                "200":
                  description: ok
                  schema:
                    $ref: '#/definitions/Missing'
          /b:
            get:
              responses:
                "200":
                  schema:
                    type: string
        securityDefinitions:
          key:
            type: token

        """
        let contract = OpenAPIReader.parse(text)
        let errors = contract.errors.map { "\($0.sourceLocation?.line ?? 0): \($0.message)" }
        #expect(errors.contains { $0.hasPrefix("10: parameter 'q': 'in' is 'form'") }, "\(errors)")
        #expect(errors.contains { $0.hasPrefix("16: unresolvable reference '#/definitions/Missing'") }, "\(errors)")
        #expect(errors.contains { $0.hasPrefix("25: security scheme 'key': 'type' is 'token'") }, "\(errors)")

        // A parameter without a name, at the parameter, beside OpenAPIKit's first complaint.
        let nameless = OpenAPIReader.parse("swagger: '2.0'\npaths:\n  /a:\n    get:\n      parameters:\n        - in: query\n          type: string\n      responses:\n        '200': {description: ok}\n")
        let found = nameless.errors.map { "\($0.sourceLocation?.line ?? 0): \($0.message)" }
        #expect(found.contains("6: a query parameter without a name"), "\(found)")
        #expect(found.contains { $0.hasPrefix("1: ") && $0.contains("info") }, "\(found)")

        // A response without its description: OpenAPIKit's error, at the 2.0 response.
        let undescribed = OpenAPIReader.parse("""
        swagger: "2.0"
        info: {title: T, version: "1"}
        paths:
          /b:
            get:
              responses:
                "200":
                  schema:
                    type: string

        """)
        #expect(undescribed.errors.map { $0.sourceLocation?.line } == [7], "\(undescribed.errors)")

        let old = OpenAPIReader.parse("{\n  \"swagger\": \"1.2\",\n  \"apis\": []\n}")
        #expect(old.errors.map { "\($0.sourceLocation?.line ?? 0): \($0.message)" } == ["2: expected a Swagger 2.0 or OpenAPI 3.0 or 3.1 document, found 'swagger: 1.2'"])
    }

    /// `kagami lint` as a user runs it: a broken 2.0 file's errors at FILE:LINE:COLUMN, exit 1;
    /// the uploads document's note, exit 0.
    @Test func lintNamesFileAndLine() async throws {
        let broken = try DescriptionCommandsTests.write("""
        swagger: '2.0'
        info: {title: T, version: '1'}
        paths:
          /a:
            post:
              parameters:
                - {name: a, in: body, schema: {type: object}}
                - {name: b, in: formData, type: string}
              responses:
                '200': {description: ok}

        """, named: "broken.yaml")
        let kagami = try CommandLineClient.kagamiPath()
        let result = try await CommandLineClient(kagami).run(["lint", broken])
        #expect(result.status == 1)
        #expect(result.stdoutText.contains("\(broken):8:"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("error: a body parameter beside formData parameters"), "\(result.stdoutText)")

        let uploads = ConvertTests.root.appendingPathComponent("Tests/KagamiContractTests/Fixtures/uploads-2.0.yaml").path
        let clean = try await CommandLineClient(kagami).run(["lint", uploads])
        #expect(clean.status == 0, "\(clean.stdoutText)\(clean.stderr)")
        let line = try #require(Self.line(of: "collectionFormat: tsv", in: OpenAPIReaderTests.fixture("uploads-2.0.yaml")))
        #expect(clean.stdoutText.contains("\(uploads):\(line):"), "\(clean.stdoutText)")
        #expect(clean.stdoutText.contains(": note: collectionFormat 'tsv'"), "\(clean.stdoutText)")
    }

    /// `kagami convert` of both 2.0 fixtures: OpenAPI 3.1 that openapi-spec-validator accepts
    /// with the same operations, and a Blueprint that reads back with them; the notes on
    /// standard error at their lines.
    @Test func convertWritesOpenAPIAndBlueprint() async throws {
        let kagami = try CommandLineClient.kagamiPath()
        let folder = try TemporaryFolder.make("swagger-convert")
        var written: [String] = []
        for name in ["petstore-2.0.json", "uploads-2.0.yaml"] {
            let source = ConvertTests.root.appendingPathComponent("Tests/KagamiContractTests/Fixtures/\(name)").path
            let contract = try DescriptionFile(path: source).contract
            let operations = { (contract: APIContract) in Set(contract.actions.map { "\($0.method) \(PathTemplate($0.uriTemplate).path)" }) }
            let openapi = folder.appendingPathComponent(name + ".openapi.json").path
            let toOpenAPI = try await CommandLineClient(kagami).run(["convert", source, "--to", "openapi", "-o", openapi])
            #expect(toOpenAPI.status == 0, "\(toOpenAPI.stderr)")
            #expect(operations(try DescriptionFile(path: openapi).contract) == operations(contract))
            written.append(openapi)
            let apib = folder.appendingPathComponent(name + ".apib").path
            let toBlueprint = try await CommandLineClient(kagami).run(["convert", source, "--to", "apib", "-o", apib])
            #expect(toBlueprint.status == 0, "\(toBlueprint.stderr)")
            let back = try DescriptionFile(path: apib).contract
            #expect(back.errors.isEmpty, "\(back.errors)")
            #expect(operations(back) == operations(contract))
            let notes = toBlueprint.stderr.split(separator: "\n").map(String.init)
            #expect(notes.allSatisfy { $0.hasPrefix(source + ":") && $0.contains(": note: ") }, "\(notes)")
            if name == "petstore-2.0.json" {
                // Security definitions have no Blueprint form: named at the 2.0 text's line.
                let line = try #require(Self.line(of: "\"api_key\": {", in: OpenAPIReaderTests.fixture(name)))
                #expect(notes.contains { $0.hasPrefix("\(source):\(line):") && $0.contains("#/securityDefinitions/api_key: security scheme 'api_key'") }, "\(notes)")
                #expect(notes.contains { $0.contains("#/paths/~1pets~1{id}/delete/deprecated: deprecated") }, "\(notes)")
            } else {
                #expect(toOpenAPI.stderr.contains("collectionFormat 'tsv'"), "\(toOpenAPI.stderr)")
            }
        }
        let python = ConvertTests.root.appendingPathComponent(".venv-tests/bin/python").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "openapi-spec-validator is not installed: scripts/test.sh creates .venv-tests with it")
        let script = ConvertTests.root.appendingPathComponent("Tests/KagamiContractTests/check_openapi.py").path
        let result = try await CommandLineClient(python).run([script] + written)
        #expect(result.stdoutText.isEmpty, "\(result.stdoutText)")
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func formatIsFoundByTheSwaggerField() {
        #expect(DescriptionFile.isOpenAPI(path: "description", text: "swagger: '2.0'\ninfo: {}\n") == true)
        #expect(DescriptionFile.isOpenAPI(path: "description", text: "{\"swagger\": \"2.0\"}") == true)
    }
}
