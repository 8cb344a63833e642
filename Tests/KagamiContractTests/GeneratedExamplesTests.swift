import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import KagamiTesting
import Testing

/// Generated bodies are valid by construction: every example Kagami writes from a schema
/// validates against that schema with Kagami's own validator, formats asserted, in the
/// direction it is written for.
@Suite struct GeneratedExamplesTests {
    /// Validates `value` against `schema` as the mock and the contract check do, formats asserted.
    static func problems(_ value: JSONValue, _ schema: JSONValue, _ direction: JSONSchema.Direction? = nil) -> [String] {
        guard let compiled = try? JSONSchema(compiling: schema, options: .init(assertsFormat: true, direction: direction)) else {
            return ["schema does not compile"]
        }
        return compiled.validate(value).errors.map(\.description)
    }

    static func valid(_ schema: JSONValue, _ direction: JSONSchema.Direction? = nil) -> (JSONValue, [String]) {
        let value = JSONSchemaExample.example(for: schema, direction: direction)
        return (value, problems(value, schema, direction))
    }

    // MARK: Cases from the validation vocabulary's text (JSON Schema 2020-12, section 6)

    @Test func stringsFollowPatternAndLengths() {
        let schemas: [JSONValue] = [
            // 6.3.3: the pattern is an ECMA-262 expression, matched anywhere unless anchored.
            ["type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"],
            ["type": "string", "pattern": "^(foo|bar)+baz$"],
            ["type": "string", "pattern": "^[^\\s@]+@[^\\s@]+\\.[a-z]{2,}$"],
            ["type": "string", "pattern": "^\\+?[1-9]\\d{1,14}$"],
            ["type": "string", "pattern": "^(?:[a-z0-9]+(?:-[a-z0-9]+)*)$", "minLength": 12],
            ["type": "string", "pattern": "x", "minLength": 4, "maxLength": 4],
            ["type": "string", "pattern": "^[a-f0-9]{8}(-[a-f0-9]{4}){3}-[a-f0-9]{12}$"],
            ["type": "string", "pattern": "^\\p{L}+$"],
            ["type": "string", "pattern": "^(a|bc)\\1$"],
            ["type": "string", "pattern": "^[\\w.-]+$", "maxLength": 3, "minLength": 2],
            // 6.3.1/6.3.2: lengths count characters.
            ["type": "string", "minLength": 7],
            ["type": "string", "minLength": 2, "maxLength": 2],
        ]
        for schema in schemas {
            let (value, problems) = Self.valid(schema)
            #expect(problems.isEmpty, "\(schema) → \(value): \(problems)")
        }
    }

    @Test func numbersFollowBoundsAndMultiples() {
        let cases: [(JSONValue, JSONValue)] = [
            // 6.2.1: a multiple of 0.25 at or above 1.1 is 1.25.
            (["type": "number", "multipleOf": 0.25, "minimum": 1.1], 1.25),
            // 6.2.5: exclusiveMinimum is a number in 2020-12.
            (["type": "integer", "exclusiveMinimum": 0], 1),
            (["type": "integer", "minimum": 10, "maximum": 20, "multipleOf": 7], 14),
            (["type": "integer", "exclusiveMaximum": -5], -6),
            (["type": "number", "minimum": -3, "maximum": -1], -1),
            (["type": "integer", "multipleOf": 0.5, "minimum": 3], 3),
            (["type": "number", "multipleOf": 0.01, "minimum": 0.005], 0.01),
        ]
        for (schema, expected) in cases {
            let (value, problems) = Self.valid(schema)
            #expect(problems.isEmpty, "\(schema) → \(value): \(problems)")
            #expect(value == expected, "\(schema)")
        }
        // Draft 4: exclusiveMinimum is a boolean beside minimum.
        let draft4: JSONValue = ["$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "minimum": 5, "exclusiveMinimum": true]
        #expect(JSONSchemaExample.example(for: draft4) == 6)
        // OpenAPI's format registry: int32 is a signed 32-bit whole number.
        let int32: JSONValue = ["type": "integer", "format": "int32", "minimum": 3_000_000_000]
        let (value, problems) = Self.valid(["type": "integer", "format": "int32", "maximum": -3_000_000_000])
        #expect(!problems.isEmpty, "no int32 is below -3e9, yet \(value) passed")
        #expect(JSONSchemaExample.example(for: ["type": "integer", "format": "int32", "minimum": 7]) == 7)
        _ = int32
    }

    @Test func formatsAreWrittenValid() {
        for format in ["date-time", "date", "time", "email", "idn-email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "uuid", "duration", "json-pointer", "relative-json-pointer", "regex", "uri-template"] {
            let (value, problems) = Self.valid(["type": "string", "format": .string(format)])
            #expect(problems.isEmpty, "\(format) → \(value): \(problems)")
        }
        // Items of a unique array of dates are distinct dates.
        let (value, problems) = Self.valid(["type": "array", "minItems": 3, "uniqueItems": true, "items": ["type": "string", "format": "date"]])
        #expect(problems.isEmpty, "\(value): \(problems)")
    }

    @Test func readOnlyAndWriteOnlyFollowTheDirection() throws {
        let schema: JSONValue = [
            "type": "object", "required": ["id", "name", "secret"],
            "properties": [
                "id": ["type": "string", "format": "uuid", "readOnly": true],
                "name": ["type": "string", "minLength": 1],
                "secret": ["type": "string", "writeOnly": true],
            ],
        ]
        let response = JSONSchemaExample.example(for: schema, direction: .response)
        #expect(response["secret"] == nil)
        #expect(response["id"] != nil)
        #expect(Self.problems(response, schema, .response).isEmpty)
        let request = JSONSchemaExample.example(for: schema, direction: .request)
        #expect(request["id"] == nil)
        #expect(request["secret"] != nil)
        #expect(Self.problems(request, schema, .request).isEmpty)
        // Without a direction both are required (plain JSON Schema).
        #expect(!Self.problems(response, schema).isEmpty)
    }

    @Test func choicesPickAValidBranch() {
        let schemas: [JSONValue] = [
            // 10.2.1.3: exactly one branch: an integer is also a number, so the string branch.
            ["oneOf": [["type": "number"], ["type": "integer"], ["type": "string", "minLength": 2]]],
            ["anyOf": [["type": "string", "maxLength": 0, "minLength": 1], ["type": "boolean"]]],
            ["type": "object", "required": ["a"], "properties": ["a": ["type": "integer"]],
             "allOf": [["required": ["b"], "properties": ["b": ["type": "string", "format": "email"]]], ["properties": ["a": ["minimum": 4]]]]],
            ["enum": ["x", 3, nil], "type": "integer"],
            ["type": ["null", "string"], "minLength": 3],
            ["not": ["type": "string"], "type": ["string", "integer"]],
            ["$defs": ["Node": ["type": "object", "required": ["name"], "properties": ["name": ["type": "string"], "children": ["type": "array", "items": ["$ref": "#/$defs/Node"]]]]],
             "$ref": "#/$defs/Node"],
            ["type": "array", "contains": ["type": "integer", "minimum": 5], "items": ["type": "integer"]],
            ["type": "object", "minProperties": 2, "additionalProperties": ["type": "integer", "minimum": 1]],
            ["type": "object", "minProperties": 1, "additionalProperties": false, "patternProperties": ["^x-[a-z]+$": ["type": "boolean"]]],
            ["type": "object", "example": ["a": "wrong"], "properties": ["a": ["type": "integer"]]],
        ]
        for schema in schemas {
            let (value, problems) = Self.valid(schema)
            #expect(problems.isEmpty, "\(schema) → \(value): \(problems)")
        }
    }

    @Test func discriminatorNamesTheBranch() {
        let schema: JSONValue = [
            "$defs": [
                "Cat": ["type": "object", "required": ["kind", "lives"], "properties": ["kind": ["type": "string"], "lives": ["type": "integer", "minimum": 1]]],
                "Dog": ["type": "object", "required": ["kind", "barks"], "properties": ["kind": ["type": "string"], "barks": ["type": "boolean"]]],
            ],
            "oneOf": [["$ref": "#/$defs/Cat"], ["$ref": "#/$defs/Dog"]],
            "discriminator": ["propertyName": "kind", "mapping": ["cat": "#/$defs/Cat", "dog": "#/$defs/Dog"]],
        ]
        let value = JSONSchemaExample.example(for: schema)
        #expect(value["kind"] == "cat")
        #expect(value["lives"] == 1)
    }

    // MARK: Every shared description

    /// Schemas no value satisfies, as the descriptions are read today: a property that an
    /// MSON variable property (`patternProperties` "(?:)", any name) also requires to be an array.
    static let unsatisfiable: Set<String> = ["variable-property-fixed-type2.apib"]

    @Test func everySharedDescriptionsBodiesValidate() {
        var files = ConformanceSuite.files(in: "api-blueprint/examples", withExtension: "md")
        let drafter = ConformanceSuite.directory.appendingPathComponent("drafter")
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: drafter.path))?.sorted() ?? [] {
            files += ConformanceSuite.files(in: "drafter/\(folder)", withExtension: "apib")
        }
        #expect(files.count > 150)
        var schemas = 0
        var failures: [String] = []
        for file in files {
            let contract = BlueprintParser.parse(ConformanceSuite.text(file))
            for action in contract.actions {
                for example in action.examples {
                    let payloads = example.requests.map { ($0.payload, JSONSchema.Direction.request) }
                        + example.responses.map { ($0.payload, JSONSchema.Direction.response) }
                    for (payload, direction) in payloads {
                        guard let schema = payload.schema, payload.schemaSource != .body, !Self.unsatisfiable.contains(file.lastPathComponent) else { continue }
                        // An empty enum (an MSON enum without members) allows nothing.
                        if schema["enum"]?.arrayValue?.isEmpty == true { continue }
                        guard (try? JSONSchema(compiling: schema)) != nil else { continue }
                        schemas += 1
                        for direction in [direction, nil] {
                            let value = JSONSchemaExample.example(for: schema, direction: direction)
                            let problems = Self.problems(value, schema, direction)
                            if !problems.isEmpty {
                                failures.append("\(file.lastPathComponent) \(action.method) \(action.uriTemplate): \(value.serialized()) \(problems)")
                            }
                        }
                        if payload.bodySource == .schema, let body = payload.bodyJSON, !Self.problems(body, schema).isEmpty {
                            failures.append("\(file.lastPathComponent) \(action.method) \(action.uriTemplate): the body written from the schema is invalid")
                        }
                    }
                }
            }
            for structure in contract.dataStructures {
                guard let schema = structure.schema, (try? JSONSchema(compiling: schema)) != nil,
                      schema["enum"]?.arrayValue?.isEmpty != true, !Self.unsatisfiable.contains(file.lastPathComponent) else { continue }
                schemas += 1
                let value = JSONSchemaExample.example(for: schema)
                let problems = Self.problems(value, schema)
                if !problems.isEmpty { failures.append("\(file.lastPathComponent) \(structure.name): \(value.serialized()) \(problems)") }
            }
        }
        #expect(schemas > 100)
        #expect(failures.isEmpty, "\(failures.count) of \(schemas) schemas: \(failures.prefix(10).joined(separator: "\n"))")
    }

    // MARK: A corpus of generated schemas

    @Test func aCorpusOfGeneratedSchemas() {
        var random = SeededGenerator(state: 0x5EED_38)
        var failures: [String] = []
        let count = 600
        for index in 0..<count {
            let schema = SchemaCorpus.schema(&random)
            for direction in [JSONSchema.Direction.request, .response, nil] {
                let value = JSONSchemaExample.example(for: schema, direction: direction)
                let problems = Self.problems(value, schema, direction)
                if !problems.isEmpty { failures.append("#\(index) \(schema.serialized()) → \(value.serialized()): \(problems)") }
                if let direction, SchemaCorpus.carriesHidden(value, schema, direction) {
                    failures.append("#\(index) \(direction): a property hidden in this direction is present in \(value.serialized())")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(8).joined(separator: "\n"))")
    }
}

/// Random schemas that are satisfiable by construction, from the keywords the generator
/// has to honour, nested a few levels deep.
enum SchemaCorpus {
    static let patterns = [
        "^[A-Z]{2,4}-[0-9]{3}$", "^(red|green|blue)$", "^[a-z]+(_[a-z]+)*$", "^\\d{5}(-\\d{4})?$",
        "^#[0-9a-fA-F]{6}$", "^v\\d+\\.\\d+\\.\\d+$", "[aeiou]", "^(?:\\+|00)\\d{6,12}$", "^\\S+$", "^.{3}$",
    ]
    static let formats = ["date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uuid", "uri-reference"]

    static func schema(_ random: inout SeededGenerator, depth: Int = 0) -> JSONValue {
        let kind = Int.random(in: 0..<(depth >= 3 ? 4 : 9), using: &random)
        switch kind {
        case 0: return string(&random)
        case 1: return number(&random)
        case 2: return ["enum": ["a", 2, true]]
        case 3: return ["type": ["boolean", "null"].randomElement(using: &random) ?? "boolean"]
        case 4, 5: return object(&random, depth: depth)
        case 6:
            var array: JSONObject = ["type": "array", "items": schema(&random, depth: depth + 1)]
            let minimum = Int.random(in: 0...3, using: &random)
            array["minItems"] = .integer(minimum)
            if Bool.random(using: &random) { array["maxItems"] = .integer(minimum + Int.random(in: 0...2, using: &random)) }
            return .object(array)
        case 7:
            // Branches of different types, so exactly one matches.
            return ["oneOf": [string(&random), ["type": "object", "properties": ["n": number(&random)], "required": ["n"]], ["type": "boolean"]]]
        default:
            return ["allOf": [object(&random, depth: depth + 1, closed: false), ["properties": ["extra": string(&random)], "required": ["extra"]]]]
        }
    }

    static func string(_ random: inout SeededGenerator) -> JSONValue {
        var object: JSONObject = ["type": "string"]
        switch Int.random(in: 0..<3, using: &random) {
        case 0: object["pattern"] = .string(patterns.randomElement(using: &random) ?? "a")
        case 1: object["format"] = .string(formats.randomElement(using: &random) ?? "date")
        default:
            let minimum = Int.random(in: 0...6, using: &random)
            object["minLength"] = .integer(minimum)
            object["maxLength"] = .integer(minimum + Int.random(in: 0...4, using: &random))
        }
        return .object(object)
    }

    static func number(_ random: inout SeededGenerator) -> JSONValue {
        var object: JSONObject = ["type": Bool.random(using: &random) ? "integer" : "number"]
        let low = Int.random(in: -50...50, using: &random)
        if Bool.random(using: &random) { object["minimum"] = .integer(low) }
        if Bool.random(using: &random) { object["exclusiveMaximum"] = .integer(low + Int.random(in: 30...90, using: &random)) }
        if Bool.random(using: &random) { object["multipleOf"] = [3, 5, 0.5, 0.25][Int.random(in: 0..<4, using: &random)] }
        if Bool.random(using: &random) { object["format"] = Bool.random(using: &random) ? "int32" : "int64" }
        return .object(object)
    }

    /// `closed`: maybe `additionalProperties: false` (not for an allOf part another part extends).
    static func object(_ random: inout SeededGenerator, depth: Int, closed: Bool = true) -> JSONValue {
        var properties = JSONObject()
        var required: [JSONValue] = []
        for index in 0..<Int.random(in: 1...4, using: &random) {
            var property = schema(&random, depth: depth + 1)
            let name = "p\(index)"
            if case .object(var members) = property, Int.random(in: 0..<4, using: &random) == 0 {
                members[Bool.random(using: &random) ? "readOnly" : "writeOnly"] = true
                property = .object(members)
            }
            properties[name] = property
            if Bool.random(using: &random) { required.append(.string(name)) }
        }
        var object: JSONObject = ["type": "object", "properties": .object(properties), "required": .array(required)]
        if closed, Bool.random(using: &random) { object["additionalProperties"] = false }
        return .object(object)
    }

    /// Whether `value` carries a property its schema marks readOnly (in a request) or
    /// writeOnly (in a response), at any depth.
    static func carriesHidden(_ value: JSONValue, _ schema: JSONValue, _ direction: JSONSchema.Direction) -> Bool {
        let keyword = direction == .request ? "readOnly" : "writeOnly"
        guard case .object(let members) = value else { return false }
        for (key, member) in members {
            guard let property = schema["properties"]?[key] else { continue }
            if property[keyword]?.boolValue == true { return true }
            if carriesHidden(member, property, direction) { return true }
        }
        return false
    }
}

/// The JSON Schema Test Suite's 2020-12 schemas as a second corpus: every schema one of its own
/// cases shows satisfiable (a case marked valid), compiled without remote documents. Not yet
/// followed when writing: `$ref`s by `$anchor`, `$id` or `$dynamicRef`, and `not` around
/// properties; those schemas are most of what is left.
@Suite struct TestSuiteSchemaExamplesTests {
    @Test func satisfiableSuiteSchemasGetValidExamples() throws {
        let folder = ConformanceSuite.directory.appendingPathComponent("json-schema-test-suite/tests/draft2020-12")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") && $0 != "format.json" }.sorted()
        var total = 0
        var failures: [String] = []
        for name in names {
            let groups = try JSONValue(parsing: String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)).arrayValue ?? []
            for group in groups {
                guard let schema = group["schema"], group["tests"]?.arrayValue?.contains(where: { $0["valid"] == true }) == true,
                      let compiled = try? JSONSchema(compiling: schema) else { continue }
                total += 1
                let value = JSONSchemaExample.example(for: schema)
                if !compiled.isValid(value) {
                    failures.append("\(name) \(group["description"]?.stringValue ?? ""): \(value.serialized())")
                }
            }
        }
        print("json-schema-test-suite 2020-12 schemas: \(total - failures.count) of \(total) generated examples valid")
        #expect(total > 300)
        #expect(Double(total - failures.count) >= 0.85 * Double(total), "\(failures.count) of \(total): \(failures.prefix(30).joined(separator: "\n"))")
    }
}
