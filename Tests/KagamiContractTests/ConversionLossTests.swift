import Foundation
import KagamiBlueprint
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiJSON
import KagamiJSONSchema
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

/// `kagami convert` says what the target format can't carry, where the source says it; named
/// types survive a round trip; no reference of a written document points nowhere.
@Suite struct ConversionLossTests {
    /// An OpenAPI document with one of each construct API Blueprint has no words for.
    static let bookstore = """
    openapi: 3.0.3
    info:
      title: Books
      version: '1'
    servers:
      - url: https://api.example.com/v1
      - url: https://staging.example.com/v1
    security:
      - apiKey: []
    paths:
      /books/{id}:
        get:
          operationId: getBook
          parameters:
            - name: id
              in: path
              required: true
              schema:
                type: string
                pattern: '^[0-9]+$'
            - name: X-Trace
              in: header
              schema:
                type: string
            - name: session
              in: cookie
              schema:
                type: string
            - name: limit
              in: query
              schema:
                type: integer
                maximum: 50
          callbacks:
            onChange:
              '{$request.query.url}':
                post:
                  responses:
                    '200':
                      description: ok
          responses:
            '200':
              description: A book or a magazine
              links:
                author:
                  operationId: getBook
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Publication'
            default:
              description: An error
    components:
      securitySchemes:
        apiKey:
          type: apiKey
          in: header
          name: X-Key
      schemas:
        Publication:
          oneOf:
            - $ref: '#/components/schemas/Book'
            - $ref: '#/components/schemas/Magazine'
          discriminator:
            propertyName: kind
            mapping:
              book: '#/components/schemas/Book'
              magazine: '#/components/schemas/Magazine'
        Book:
          type: object
          required: [kind, title]
          properties:
            kind:
              type: string
            title:
              type: string
              maxLength: 200
            author:
              $ref: '#/components/schemas/Author'
        Magazine:
          type: object
          required: [kind, issue]
          properties:
            kind:
              type: string
            issue:
              type: integer
              format: int32
        Author:
          type: object
          properties:
            name:
              type: string
    """

    /// The line of the first line of `text` that contains `marker`, counting from 1.
    static func line(of marker: String, in text: String) -> Int {
        (text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(marker) } ?? -1) + 1
    }

    @Test func everyConstructABlueprintLacksIsNamedAtItsLine() throws {
        let path = try DescriptionCommandsTests.write(Self.bookstore, named: "books.yaml")
        let source = try DescriptionFile(path: path)
        #expect(source.contract.errors.isEmpty, "\(source.diagnostics())")
        var notes: [ConversionNote] = []
        _ = BlueprintWriter.document(for: source.contract, notes: &notes)
        notes += OpenAPIReader.blueprintNotes(Self.bookstore)
        let lines = ConvertCommand.lines(notes, file: path)
        // A mapping's place is its key's line or its first member's.
        func expectNote(at marker: String, containing words: String) {
            let line = Self.line(of: marker, in: Self.bookstore)
            #expect(lines.contains { ($0.hasPrefix("\(path):\(line):") || $0.hasPrefix("\(path):\(line + 1):")) && $0.contains(words) },
                    "\(marker) (line \(line)) → \(words)\n\(lines.joined(separator: "\n"))")
        }
        expectNote(at: "security:", containing: "security requirement (apiKey)")
        expectNote(at: "    apiKey:", containing: "security scheme 'apiKey' (apiKey header)")
        expectNote(at: "staging.example.com", containing: "one HOST")
        expectNote(at: "- name: X-Trace", containing: "header parameter 'X-Trace'")
        expectNote(at: "- name: session", containing: "cookie parameter 'session'")
        expectNote(at: "- name: id", containing: "'pattern'")
        expectNote(at: "- name: limit", containing: "'maximum'")
        expectNote(at: "onChange:", containing: "callback 'onChange'")
        expectNote(at: "author:", containing: "link 'author'")
        expectNote(at: "default:", containing: "default response")
        expectNote(at: "  Book:", containing: "'maxLength' at /properties/title")
        // Every note has its place in the source.
        #expect(notes.allSatisfy { $0.sourceLocation != nil }, "\(notes.filter { $0.sourceLocation == nil })")
    }

    /// `kagami convert` as a user runs it: the Blueprint on standard output (or `-o`), one
    /// `FILE:LINE:COLUMN: note:` line per loss on standard error, in the source's order.
    @Test func theCommandListsLossesOnStandardError() async throws {
        let path = try DescriptionCommandsTests.write(Self.bookstore, named: "books.yaml")
        let output = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("books.apib").path
        let result = try await CommandLineClient(try CommandLineClient.kagamiPath()).run(["convert", path, "--to", "apib", "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let notes = result.stderr.split(separator: "\n").map(String.init)
        #expect(notes.count >= 12, "\(notes)")
        #expect(notes.allSatisfy { $0.hasPrefix(path + ":") && $0.contains(": note: ") }, "\(notes)")
        let lines = notes.compactMap { Int($0.dropFirst(path.count + 1).prefix { $0 != ":" }) }
        #expect(lines == lines.sorted() && lines.count == notes.count, "\(notes)")
        #expect(notes.contains { $0.contains("callback 'onChange'") })
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("## Book (object)"))
    }

    @Test func namedSchemasSurviveTheRoundTripWithoutDanglingReferences() throws {
        let source = OpenAPIReader.parse(Self.bookstore)
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: source, notes: &notes)
        #expect(blueprint.contains("# Data Structures"))
        #expect(blueprint.contains("+ Attributes (Publication)"), "\(blueprint)")
        let middle = BlueprintParser.parse(blueprint)
        #expect(middle.errors.isEmpty, "\(middle.errors.map(\.message))\n\(blueprint)")
        var backNotes: [ConversionNote] = []
        let back = OpenAPIWriter.document(for: middle, serverURL: "http://127.0.0.1:3000", notes: &backNotes)
        let components = Set(back["components"]?["schemas"]?.objectValue?.keys.map { $0 } ?? [])
        #expect(components == ["Publication", "Book", "Magazine", "Author"], "\(components)")
        #expect(OpenAPIReader.unresolvedReferences(in: back).isEmpty, "\(OpenAPIReader.unresolvedReferences(in: back))")
        #expect(!backNotes.contains { $0.message.contains("does not hold") }, "\(backNotes.map(\.message))")
        // The named type reads back with its members and a reference to the other by name.
        let book = try #require(middle.dataStructures.first { $0.name == "Book" }?.schema)
        #expect(book["properties"]?["title"]?["type"] == "string")
        #expect(Set(book["required"]?.arrayValue ?? []) == ["kind", "title"])
        #expect(blueprint.contains("+ author (Author, optional)"), "\(blueprint)")
    }

    /// The OpenAPI documents of the test fixtures, to a Blueprint and back: each component
    /// schema comes back as one, the Blueprint reads without errors, nothing refers to nothing.
    @Test(arguments: [
        "Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml", "Tests/KagamiContractTests/Fixtures/notes-3.1.json",
        "Tests/KagamiMockTests/Fixtures/petstore.yaml", "Tests/KagamiMockTests/Fixtures/pets.yaml",
        "Tests/KagamiContractTests/Fixtures/petstore-2.0.json", "Tests/KagamiContractTests/Fixtures/uploads-2.0.yaml",
    ])
    func openAPIFixturesRoundTrip(file: String) throws {
        let source = try DescriptionFile(path: ConvertTests.root.appendingPathComponent(file).path)
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: source.contract, notes: &notes)
        let middle = BlueprintParser.parse(blueprint)
        #expect(middle.errors.isEmpty, "\(middle.errors.map(\.message))\n\(blueprint)")
        let back = OpenAPIWriter.document(for: middle, serverURL: "http://127.0.0.1:3000", notes: &notes)
        let components = Set(back["components"]?["schemas"]?.objectValue?.keys.map { $0 } ?? [])
        let original = Set(source.contract.dataStructures.map { OpenAPIWriter.componentName($0.name) })
        #expect(original.isSubset(of: components), "lost: \(original.subtracting(components).sorted())")
        #expect(OpenAPIReader.unresolvedReferences(in: back).isEmpty, "\(OpenAPIReader.unresolvedReferences(in: back))")
        let operations = { (contract: APIContract) in Set(contract.actions.map { "\($0.method) \(PathTemplate($0.uriTemplate).path)" }) }
        #expect(operations(OpenAPIReader.parse(back.serialized())) == operations(source.contract))
    }

    /// What MSON can say of a component comes back from the Blueprint's Data Structures:
    /// types, required members, enumerations, nullable, arrays of named types, inheritance,
    /// samples and defaults.
    @Test func namedTypesCarryWhatMSONCanSay() throws {
        let text = """
        openapi: 3.1.0
        info: {title: T, version: '1'}
        paths: {}
        components:
          schemas:
            Tag:
              type: object
              required: [label]
              properties:
                label: {type: string, examples: [red]}
                status: {type: string, enum: [new, old]}
                note: {type: [string, 'null']}
                count: {type: integer, default: 3}
            Tagged:
              type: object
              properties:
                tags: {type: array, items: {$ref: '#/components/schemas/Tag'}}
                names: {type: array, items: {type: string}}
            Special:
              allOf:
                - $ref: '#/components/schemas/Tagged'
                - type: object
                  required: [level]
                  properties:
                    level: {type: number}
        """
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: OpenAPIReader.parse(text), notes: &notes)
        let back = BlueprintParser.parse(blueprint)
        #expect(back.annotations.isEmpty, "\(back.annotations.map(\.message))\n\(blueprint)")
        #expect(notes.map(\.message) == ["data structure Tag: 'type: integer (written as number)' at /properties/count has no MSON form; left out of the named type (a payload's Schema section keeps it)"])
        func schema(_ name: String) throws -> JSONValue { try #require(back.dataStructures.first { $0.name == name }?.schema) }
        let tag = try schema("Tag")
        #expect(tag["required"]?.arrayValue?.contains("label") == true)
        #expect(tag["properties"]?["status"]?["enum"]?.arrayValue?.contains("old") == true, "\(tag.serialized())")
        let note = tag["properties"]?["note"]
        #expect(try JSONSchema(compiling: note ?? [:]).isValid(.null) && JSONSchema(compiling: note ?? [:]).isValid("x"), "\(note?.serialized() ?? "")")
        #expect(back.dataStructures.first { $0.name == "Tag" }?.example?["label"] == "red")
        let tagged = try schema("Tagged")
        #expect(tagged["properties"]?["tags"]?["items"]?["properties"]?["label"] != nil, "\(tagged.serialized())")
        #expect(tagged["properties"]?["names"]?["items"]?["type"] == "string")
        let special = try JSONSchema(compiling: try schema("Special"))
        #expect(special.isValid(["level": 1, "tags": [["label": "a"]]]))
        #expect(!special.isValid(["tags": [["label": "a"]]]), "level is required")
        #expect(blueprint.contains("## Special (Tagged)"), "\(blueprint)")
    }

    @Test func aWrittenReferenceToNothingIsNamed() throws {
        // A Blueprint's own JSON Schema may refer to a component the written document won't have.
        let text = """
        FORMAT: 1A

        # API

        ## Books [/books]

        ### List [GET]

        + Response 200 (application/json)

            + Schema

                    {"type": "object", "discriminator": {"propertyName": "kind", "mapping": {"book": "#/components/schemas/Book"}}, "properties": {"a": {"$ref": "#/components/schemas/Nope"}}}

        """
        var notes: [ConversionNote] = []
        let document = OpenAPIWriter.document(for: BlueprintParser.parse(text), serverURL: "http://127.0.0.1:3000", notes: &notes)
        let dangling = notes.filter { $0.message.contains("does not hold") }.map(\.message)
        #expect(dangling.count == 2, "\(dangling)")
        #expect(dangling.contains { $0.contains("'#/components/schemas/Book'") && $0.contains("/discriminator/mapping/book") })
        #expect(dangling.contains { $0.contains("'#/components/schemas/Nope'") })
        #expect(OpenAPIReader.unresolvedReferences(in: document).count == 2)
    }

    @Test func lintReportsADiscriminatorMappingToNothing() throws {
        let text = Self.bookstore.replacingOccurrences(of: "magazine: '#/components/schemas/Magazine'", with: "magazine: '#/components/schemas/Magzine'")
        let result = try LintTests.lint(text, named: "books.yaml")
        let line = Self.line(of: "magazine: '#/components/schemas/Magzine'", in: text)
        #expect(result.hasErrors)
        #expect(result.lines.contains { $0.hasPrefix("\(result.path):\(line):") && $0.contains("discriminator mapping 'magazine' names '#/components/schemas/Magzine'") }, "\(result.lines)")
    }

    @Test func blueprintActionsOpenAPICannotHoldAreKeptInAnExtension() throws {
        let text = """
        FORMAT: 1A

        # API

        ## Note [/notes/{id}]

        ### Get [GET]

        + Relation: self

        + Response 200

        ### Link [LINK]

        + Response 204

        """
        var notes: [ConversionNote] = []
        let document = OpenAPIWriter.document(for: BlueprintParser.parse(text), serverURL: "http://127.0.0.1:3000", notes: &notes)
        let item = try #require(document["paths"]?["/notes/{id}"])
        #expect(item["get"]?[OpenAPIWriter.relation] == "self")
        #expect(item[OpenAPIWriter.keptActions]?[0]?["method"] == "LINK")
        #expect(item[OpenAPIWriter.keptActions]?[0]?["operation"]?["responses"]?["204"] != nil)
        #expect(notes.contains { $0.message.contains("LINK") && $0.sourceLocation?.line == 13 }, "\(notes)")
        #expect(notes.contains { $0.message.contains("'self' kept as x-kagami-relation") && $0.sourceLocation?.line == 7 }, "\(notes)")
    }

    /// OpenAPIKitCompat writes `minProperties` (the count of `required`) on every 3.0 object,
    /// `minItems: 0` and `uniqueItems: false` on every array; the contract must not hold a
    /// keyword the document never wrote.
    @Test func noKeywordIsInvented() throws {
        let contract = OpenAPIReader.parse(Self.bookstore)
        var seen: [String] = []
        func walk(_ value: JSONValue, _ path: String) {
            if case .object(let members) = value {
                if members["minProperties"] != nil { seen.append(path) }
                for (key, member) in members { walk(member, path + "/" + key) }
            } else if case .array(let items) = value {
                for (index, item) in items.enumerated() { walk(item, path + "/\(index)") }
            }
        }
        for structure in contract.dataStructures { walk(structure.schema ?? .null, structure.name) }
        for response in contract.actions.flatMap(\.examples).flatMap(\.responses) { walk(response.payload.schema ?? .null, "response") }
        #expect(seen.isEmpty, "\(seen)")
        // So a book without its title is one error, at the `required` the document wrote.
        let book = try #require(contract.dataStructures.first { $0.name == "Book" }?.schema)
        let errors = try JSONSchema(compiling: book).validate(["kind": "book"]).errors
        #expect(errors.count == 1, "\(errors.map(\.description))")
        #expect(errors.first?.keywordLocation == "/required")
        // Nor the range of a numeric format: `format: int32` is what the document wrote, and
        // the validator checks the range as the format's, when formats are asserted.
        let magazine = try #require(contract.dataStructures.first { $0.name == "Magazine" }?.schema)
        #expect(magazine["properties"]?["issue"]?.isJSONEqual(to: ["type": "integer", "format": "int32"]) == true, "\(magazine.serialized())")
        let tooLarge: JSONValue = ["kind": "magazine", "issue": 2_147_483_648]
        let rangeErrors = try JSONSchema(compiling: magazine, options: .init(assertsFormat: true)).validate(tooLarge).errors
        #expect(rangeErrors.map(\.keywordLocation) == ["/properties/issue/format"], "\(rangeErrors.map(\.description))")
        #expect(try JSONSchema(compiling: magazine).isValid(tooLarge))
        var notes: [ConversionNote] = []
        let written = OpenAPIWriter.document(for: contract, serverURL: "http://127.0.0.1:3000", notes: &notes)
        #expect(written["components"]?["schemas"]?["Magazine"]?["properties"]?["issue"]?.isJSONEqual(to: ["type": "integer", "format": "int32"]) == true)
        // Nor `minItems: 0` and `uniqueItems: false` on every 3.0 array, through either reader.
        let list = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {type: array, items: {type: string}}\n"
        for reading in [OpenAPIReader.PathReading.fromValues, .throughOpenAPIKit] {
            let schema = OpenAPIReader.parse(list, reading: reading).actions.first?.defaultResponse?.payload.schema
            #expect(schema?.isJSONEqual(to: ["type": "array", "items": ["type": "string"]]) == true, "\(reading): \(schema?.serialized() ?? "none")")
        }
    }
}
