import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiDescription
import KagamiJSON
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

/// `kagami convert` loses no description silently: every description and summary of the
/// source is in the written document, or a note names its place (or the place of what holds
/// it) as left out. Counted over the shared descriptions.
@Suite struct ConvertDescriptionTests {
    /// An OpenAPI document with a text in each place one can be.
    static let described = """
    openapi: 3.1.0
    info:
      title: Library
      version: '1'
      description: Lends books to members of the library.
    tags:
      - name: Loans
        description: Books out and back in again.
    paths:
      /loans/{id}:
        summary: One loan of one book
        description: A loan lasts three weeks unless renewed.
        get:
          tags: [Loans]
          summary: Look a loan up
          description: Includes the due date.
          parameters:
            - name: id
              in: path
              required: true
              description: The loan's number on its slip.
              schema: {type: string}
            - name: X-Branch
              in: header
              description: Which branch desk is asking.
              schema: {type: string}
          responses:
            '200':
              description: The loan as the desk sees it.
              headers:
                X-Due:
                  description: The day the book must be back.
                  schema: {type: string}
              content:
                application/json:
                  schema: {$ref: '#/components/schemas/Loan'}
            '404':
              description: No loan has that number.
        put:
          tags: [Loans]
          requestBody:
            description: The loan with its new due date.
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Loan'}
          responses:
            '204':
              description: Renewed until the new date.
    components:
      schemas:
        Loan:
          description: A book lent to a member.
          type: object
          properties:
            due:
              type: string
              description: The date the book is due back.
            reader:
              type: object
              description: The member who borrowed it.
              properties:
                card: {type: string, description: The number on the library card.}
            notes:
              type: array
              items:
                type: string
                description: One remark of the librarian.
            via:
              oneOf:
                - type: object
                  description: Lent at the counter.
                  properties: {desk: {type: string}}
                - type: object
                  description: Lent by the machine.
                  properties: {machine: {type: string}}
    """

    /// Whitespace runs as one space, so a text reflowed onto one line still matches.
    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Each `description` and `summary` of an OpenAPI document with its path (not those inside
    /// example values, defaults or enumerations).
    static func texts(in value: JSONValue, at path: [String] = []) -> [(path: [String], text: String)] {
        switch value {
        case .object(let members):
            var found: [(path: [String], text: String)] = []
            for (key, member) in members {
                if ["description", "summary"].contains(key), let text = member.stringValue, !text.isEmpty {
                    found.append((path + [key], text))
                } else if !["example", "default", "enum", "const", "value"].contains(key), !(key == "examples" && member.arrayValue != nil) {
                    found += texts(in: member, at: path + [key])
                }
            }
            return found
        case .array(let items):
            return items.enumerated().flatMap { texts(in: $1, at: path + [String($0)]) }
        default:
            return []
        }
    }

    @Test func openAPIDescriptionsAreWrittenOrNamed() throws {
        var documents: [(name: String, text: String)] = [("described", Self.described), ("bookstore", ConversionLossTests.bookstore)]
        for file in ["Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml", "Tests/KagamiContractTests/Fixtures/notes-3.1.json",
                     "Tests/KagamiMockTests/Fixtures/petstore.yaml", "Tests/KagamiMockTests/Fixtures/pets.yaml"] {
            documents.append((file, try String(contentsOf: ConvertTests.root.appendingPathComponent(file), encoding: .utf8)))
        }
        var total = 0, written = 0, named = 0
        var lost: [String] = []
        for document in documents {
            let (raw, locator) = try OpenAPISource.read(document.text)
            let contract = OpenAPIReader.parse(document.text)
            var notes: [ConversionNote] = []
            let blueprint = BlueprintWriter.document(for: contract, notes: &notes)
            notes += OpenAPIReader.blueprintNotes(document.text)
            #expect(BlueprintParser.parse(blueprint).errors.isEmpty, "\(document.name)")
            let output = Self.normalized(blueprint)
            let notedLines = Set(notes.compactMap { $0.sourceLocation?.line })
            for (path, text) in Self.texts(in: raw) {
                total += 1
                if output.contains(Self.normalized(text)) {
                    written += 1
                } else if (0..<path.count).contains(where: { (locator.location(of: Array(path.prefix($0 + 1)))?.line).map(notedLines.contains) ?? false }) {
                    named += 1
                } else {
                    lost.append("\(document.name) #/\(path.joined(separator: "/")): \(text)")
                }
            }
        }
        print("convert to API Blueprint: \(total) descriptions and summaries in \(documents.count) OpenAPI documents, \(written) written, \(named) named as left out, \(lost.count) lost")
        #expect(lost.isEmpty, "\(lost.joined(separator: "\n"))")
        #expect(total > 40 && named > 0)
    }

    /// A response's description is the Blueprint response's own, read back as such.
    @Test func responseDescriptionsReadBack() throws {
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: OpenAPIReader.parse(Self.described), notes: &notes)
        let back = BlueprintParser.parse(blueprint)
        #expect(back.errors.isEmpty, "\(back.errors.map(\.message))")
        let responses = back.actions.flatMap(\.examples).flatMap(\.responses)
        #expect(responses.first { $0.status == 404 }?.payload.description == "No loan has that number.", "\(blueprint)")
        #expect(responses.first { $0.status == 200 }?.payload.description == "The loan as the desk sees it.")
        #expect(back.groups.first { $0.name == "Loans" }?.description == "Books out and back in again.")
        #expect(back.dataStructures.first { $0.name == "Loan" }?.description == "A book lent to a member.")
        #expect(notes.contains { $0.message.contains("'description' at /properties/notes/items") }, "\(notes.map(\.message))")
        #expect(notes.contains { $0.message.contains("'description' at /properties/via/oneOf/0") }, "\(notes.map(\.message))")
    }

    /// MSON's descriptions (a member's ` - …`, a named type's block) are the written schemas'
    /// `description`s, through the command as a user runs it; the schemas read for checking
    /// stay drafter's, without them.
    @Test func msonDescriptionsAreWritten() async throws {
        let text = """
        FORMAT: 1A

        # Library

        ## Loan [/loans/{id}]

        ### Look a loan up [GET]

        + Response 200 (application/json)

            + Attributes (Loan)

        # Data Structures

        ## Loan (object)

        A book lent to a member.

        + due: `2024-06-01` (string, required) - The date the book is due back.
        + reader (object) - The member who borrowed it.
            + card: `A-1` (string) - The number on the library card.
        + notes (array[string]) - The librarian's remarks.
        """
        let path = try DescriptionCommandsTests.write(text, named: "library.apib")
        let result = try await CommandLineClient(try CommandLineClient.kagamiPath()).run(["convert", path, "--to", "openapi"])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try JSONValue(parsing: result.stdoutText)
        let loan = try #require(document["components"]?["schemas"]?["Loan"], "\(result.stdoutText)")
        #expect(loan["description"] == "A book lent to a member.")
        #expect(loan["properties"]?["due"]?["description"] == "The date the book is due back.")
        #expect(loan["properties"]?["reader"]?["description"] == "The member who borrowed it.")
        #expect(loan["properties"]?["reader"]?["properties"]?["card"]?["description"] == "The number on the library card.")
        #expect(loan["properties"]?["notes"]?["description"] == "The librarian's remarks.")
        let checked = try #require(BlueprintParser.parse(text).dataStructures.first?.schema)
        #expect(!checked.serialized().contains("description"), "\(checked.serialized())")
    }

    /// Every text of the shared Blueprints the contract holds (the API's, groups', resources'
    /// and actions' names and descriptions, requests' and responses', parameters', named
    /// types', MSON members') is a description or summary of the OpenAPI document written
    /// from it.
    @Test func blueprintDescriptionsAreWritten() throws {
        var total = 0, memberTexts = 0
        var lost: [String] = []
        let inputs = ConvertTests.blueprints()
        for input in inputs {
            let contract = BlueprintParser.parse(input.text, describingSchemas: true)
            var notes: [ConversionNote] = []
            let document = OpenAPIWriter.document(for: contract, serverURL: "http://127.0.0.1:3000", notes: &notes)
            // What OpenAPI holds as text, apart from the operations kept in an extension.
            let output = Self.normalized(Self.texts(in: document).map(\.text).joined(separator: "\n"))
            var texts = [contract.description] + contract.dataStructures.map(\.description)
            for group in contract.groups {
                texts.append(group.description)
                for resource in group.resources {
                    texts += [resource.name == resource.uriTemplate ? "" : resource.name, resource.description]
                    for action in resource.actions {
                        texts += [action.name, action.description] + action.parameters.map(\.description)
                        texts += action.examples.flatMap { $0.requests.map(\.payload.description) + $0.responses.map(\.payload.description) }
                    }
                }
            }
            // MSON members' descriptions, in the schemas read with them.
            let schemas = contract.dataStructures.compactMap(\.schema) + contract.actions.flatMap(\.examples)
                .flatMap { $0.requests.map(\.payload) + $0.responses.map(\.payload) }.compactMap(\.schema)
            let members = schemas.flatMap { Self.texts(in: $0).map(\.text) }
            memberTexts += members.count
            texts += members
            for text in texts where !Self.normalized(text).isEmpty {
                total += 1
                if !output.contains(Self.normalized(text)) { lost.append("\(input.name): \(text.prefix(80))") }
            }
        }
        print("convert to OpenAPI: \(total) texts of \(inputs.count) shared Blueprints (\(memberTexts) in MSON), \(total - lost.count) written, \(lost.count) lost")
        #expect(total > 200)
        #expect(lost.isEmpty, "\(lost.prefix(20).joined(separator: "\n"))")
    }
}
