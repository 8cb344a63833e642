import KagamiBlueprint
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

/// Alternatives of objects written as MSON `One Of` (the MSON specification, 5.2: mutually
/// exclusive sets of properties of an object, each a property, a `Properties` group, an
/// `Include` or a nested One Of) and read back as the schema they came from.
@Suite struct MSONOneOfTests {
    /// The Blueprint `kagami convert --to apib` writes for these OpenAPI components, and
    /// what it notes.
    static func blueprint(components: String) -> (text: String, notes: [String]) {
        let document = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n" + components
        let contract = OpenAPIReader.parse(document)
        #expect(contract.errors.isEmpty, "\(contract.errors.map(\.message))")
        var notes: [ConversionNote] = []
        let text = BlueprintWriter.document(for: contract, notes: &notes)
        return (text, notes.map(\.message))
    }

    static func schema(_ name: String, in contract: APIContract) throws -> JSONValue {
        try #require(contract.dataStructures.first { $0.name == name }?.schema, "no \(name)")
    }

    /// The two schemas say the same of each instance. `both`: instances that match two
    /// alternatives, which `oneOf` refuses and MSON's One Of, read as `anyOf`, lets through.
    static func expectSameVerdicts(_ original: JSONValue, _ back: JSONValue, on instances: [JSONValue], both: [JSONValue] = []) throws {
        let before = try JSONSchema(compiling: original), after = try JSONSchema(compiling: back)
        for instance in instances {
            #expect(before.isValid(instance) == after.isValid(instance), "\(instance.serialized()): \(before.isValid(instance)) before, \(after.isValid(instance)) after\n\(back.serialized())")
        }
        for instance in both {
            #expect(!before.isValid(instance) && after.isValid(instance), "\(instance.serialized())")
        }
    }

    /// A discriminated `oneOf` of named types: each alternative an `Include` of its type; the
    /// discriminator, which MSON has no words for, named as left out.
    @Test func namedAlternativesWithADiscriminator() throws {
        let (text, notes) = Self.blueprint(components: """
            Pet:
              oneOf:
                - $ref: '#/components/schemas/Cat'
                - $ref: '#/components/schemas/Dog'
              discriminator:
                propertyName: kind
                mapping: {cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog'}
            Cat:
              type: object
              required: [kind, lives]
              properties:
                kind: {type: string}
                lives: {type: number}
            Dog:
              type: object
              required: [kind, good]
              properties:
                kind: {type: string}
                good: {type: boolean}
        """)
        #expect(text.contains("## Pet (object)\n\n+ One Of\n    + Include Cat\n    + Include Dog\n"), "\(text)")
        #expect(notes.contains { $0.contains("Pet: 'discriminator'") }, "\(notes)")
        let back = BlueprintParser.parse(text)
        #expect(back.annotations.isEmpty, "\(back.annotations.map(\.message))")
        let pet = try Self.schema("Pet", in: back)
        let source = ["oneOf": [
            ["type": "object", "required": ["kind", "lives"], "properties": ["kind": ["type": "string"], "lives": ["type": "number"]]],
            ["type": "object", "required": ["kind", "good"], "properties": ["kind": ["type": "string"], "good": ["type": "boolean"]]],
        ]] as JSONValue
        try Self.expectSameVerdicts(source, pet, on: [
            ["kind": "cat", "lives": 9], ["kind": "dog"], ["kind": "dog", "good": true], ["lives": 9], [:],
            ["kind": 1], ["kind": "dog", "good": "yes"], ["kind": "cat", "lives": "nine"],
        ], both: [["kind": "cat", "lives": 9, "good": true]])
        // The mock's example of the type is one of the alternatives.
        let example = try #require(back.dataStructures.first { $0.name == "Pet" }?.example)
        #expect(try JSONSchema(compiling: source).isValid(example), "\(example.serialized())")
    }

    /// Inline alternatives: a lone property is an option by itself, several are a
    /// `Properties` group; the properties of another `allOf` part are the object's own.
    @Test func inlineAlternativesBesideSharedProperties() throws {
        let (text, notes) = Self.blueprint(components: """
            Contact:
              allOf:
                - type: object
                  required: [name]
                  properties:
                    name: {type: string}
                - oneOf:
                    - required: [email]
                      properties:
                        email: {type: string}
                    - required: [phone]
                      properties:
                        phone: {type: string}
                        extension: {type: number}
        """)
        #expect(notes.isEmpty, "\(notes)")
        #expect(text.contains("""
            + name (string, required)
            + One Of
                + email (string, required)
                + Properties
                    + extension (number, optional)
                    + phone (string, required)

            """), "\(text)")
        let back = BlueprintParser.parse(text)
        #expect(back.annotations.isEmpty, "\(back.annotations.map(\.message))")
        let original = ["allOf": [
            ["type": "object", "required": ["name"], "properties": ["name": ["type": "string"]]],
            ["oneOf": [
                ["required": ["email"], "properties": ["email": ["type": "string"]]],
                ["required": ["phone"], "properties": ["phone": ["type": "string"], "extension": ["type": "number"]]],
            ]],
        ]] as JSONValue
        try Self.expectSameVerdicts(original, try Self.schema("Contact", in: back), on: [
            ["name": "a", "email": "e"], ["name": "a", "phone": "1", "extension": 2], ["name": "a"], ["email": "e"],
            ["name": "a", "extension": 2], ["name": "a", "phone": 1], ["name": "a", "email": "e", "extension": "x"],
        ], both: [["name": "a", "email": "e", "phone": "1"]])
    }

    /// The specification's own example (5.2): a One Of inside a One Of, written as MSON, read,
    /// written again and read again: the very same schema.
    @Test func nestedOneOfFromTheSpecificationReadsBackTheSame() throws {
        let text = """
        FORMAT: 1A

        # Names

        # Data Structures

        ## Person (object)

        + `first_name`
        + One Of
            + `last_name`
            + One Of
                + `given_name`: Smith
                + `suffixed_name`: Smith, Sr.

        ## Address (object)

        An address

        + Properties
            + One Of
                + state
                + province

        ## Member (object)

        + One Of
            + `full_name` (required)
            + Properties
                + `first_name` (required)
                + `last_name` (required)
        """
        let first = BlueprintParser.parse(text)
        #expect(first.annotations.isEmpty, "\(first.annotations.map(\.message))")
        var notes: [ConversionNote] = []
        let written = BlueprintWriter.document(for: first, notes: &notes)
        #expect(notes.isEmpty, "\(notes.map(\.message))")
        #expect(written.contains("+ One Of\n    + `last_name` (string, optional)\n    + Properties\n        + One Of\n"), "\(written)")
        let second = BlueprintParser.parse(written)
        #expect(second.annotations.isEmpty, "\(second.annotations.map(\.message))\n\(written)")
        for name in ["Person", "Address", "Member"] {
            let before = try Self.schema(name, in: first), after = try Self.schema(name, in: second)
            #expect(before.isJSONEqual(to: after), "\(name): \(before.serialized()) → \(after.serialized())")
        }
        // What the specification says Person's values are: first_name with one of the others.
        let person = try JSONSchema(compiling: try Self.schema("Person", in: second))
        #expect(person.isValid(["first_name": "A", "given_name": "Smith"]))
        let member = try JSONSchema(compiling: try Self.schema("Member", in: second))
        #expect(member.isValid(["full_name": "A B"]) && member.isValid(["first_name": "A", "last_name": "B"]))
        #expect(!member.isValid(["first_name": "A"]), "a Properties option needs all its required members")
    }

    /// An array whose items are one of two named objects: `array, fixed-type` with an
    /// `(object)` item holding the One Of.
    @Test func oneOfInsideAnArray() throws {
        let (text, _) = Self.blueprint(components: """
            Shelf:
              type: object
              properties:
                items:
                  type: array
                  items:
                    anyOf:
                      - $ref: '#/components/schemas/Book'
                      - $ref: '#/components/schemas/Disc'
            Book:
              type: object
              required: [isbn]
              properties: {isbn: {type: string}}
            Disc:
              type: object
              required: [tracks]
              properties: {tracks: {type: number}}
        """)
        #expect(text.contains("+ items (array, fixed-type, optional)\n    + (object)\n        + One Of\n            + Include Book\n            + Include Disc\n"), "\(text)")
        let back = BlueprintParser.parse(text)
        #expect(back.annotations.isEmpty, "\(back.annotations.map(\.message))")
        let original = ["type": "object", "properties": ["items": ["type": "array", "items": ["anyOf": [
            ["type": "object", "required": ["isbn"], "properties": ["isbn": ["type": "string"]]],
            ["type": "object", "required": ["tracks"], "properties": ["tracks": ["type": "number"]]],
        ]]]]] as JSONValue
        // anyOf reads back as anyOf: the very same verdicts, two alternatives at once included.
        try Self.expectSameVerdicts(original, try Self.schema("Shelf", in: back), on: [
            ["items": [["isbn": "1"], ["tracks": 3]]], ["items": [["isbn": "1", "tracks": 3]]], ["items": [[:]]],
            ["items": [["isbn": 1]]], ["items": ["x"]], ["items": []],
        ])
    }

    /// Alternatives that are not objects stay an enumeration of their types (a typed sample
    /// each, so any value of the type is one); a `null` among them makes it nullable.
    @Test func otherAlternativesStayAnEnumeration() throws {
        let (text, _) = Self.blueprint(components: """
            Id:
              oneOf:
                - type: string
                - type: number
                - type: 'null'
        """)
        #expect(text.contains("## Id (enum, nullable)\n\n+ *text* (string)\n+ *0* (number)\n"), "\(text)")
        let id = try JSONSchema(compiling: try Self.schema("Id", in: BlueprintParser.parse(text)))
        #expect(id.isValid("a") && id.isValid(1) && id.isValid(.null) && !id.isValid(["a": 1]))
    }

    /// Every named type of the shared Blueprints (the API Blueprint examples and drafter's
    /// fixtures) written back as MSON and read again: those with a One Of come back the very
    /// same, as do nearly all others (counted).
    @Test func sharedNamedTypesReadBackTheSame() throws {
        var same = 0, total = 0, oneOfTypes = 0
        var changed: [String] = []
        for input in ConvertTests.blueprints() {
            let first = BlueprintParser.parse(input.text)
            var notes: [ConversionNote] = []
            let second = BlueprintParser.parse(BlueprintWriter.document(for: first, notes: &notes))
            for structure in first.dataStructures {
                guard let before = structure.schema else { continue }
                total += 1
                let hasOneOf = before.serialized().contains("\"anyOf\":[{\"properties\"") || before.serialized().contains("\"anyOf\":[{}")
                if hasOneOf { oneOfTypes += 1 }
                let after = second.dataStructures.first { $0.name == structure.name }?.schema
                if after.map({ before.isJSONEqual(to: $0) }) == true {
                    same += 1
                } else if hasOneOf {
                    changed.append("\(input.name) \(structure.name): \(before.serialized()) → \(after?.serialized() ?? "none")")
                }
            }
        }
        print("MSON named types written back and read again: \(same) of \(total) the very same schema (\(oneOfTypes) with a One Of)")
        #expect(oneOfTypes >= 5)
        #expect(changed.isEmpty, "\(changed.joined(separator: "\n"))")
    }
}
