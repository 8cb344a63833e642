import Foundation
import KagamiJSON
import Testing
@testable import KagamiJSONSchema

private func compile(_ text: String, _ options: JSONSchema.Options = .init()) throws -> JSONSchema {
    try JSONSchema(compiling: try JSONValue(parsing: text), options: options)
}

private func errors(_ schema: JSONSchema, _ instance: String) throws -> [JSONSchemaValidationError] {
    schema.validate(try JSONValue(parsing: instance)).errors
}

struct JSONSchemaValidationTests {
    @Test func collectsEveryErrorWithLocationsAndMessages() throws {
        let schema = try compile("""
            {"type": "object", "required": ["id", "name"],
             "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string", "minLength": 2}}}}
            """)
        let found = try errors(schema, ##"{"id": "x", "tags": ["ok", "a", 3]}"##)
        #expect(found.count == 4)
        #expect(found.contains(JSONSchemaValidationError(
            instanceLocation: "", keywordLocation: "/required", keyword: "required",
            message: "missing required property \"name\"")))
        #expect(found.contains(JSONSchemaValidationError(
            instanceLocation: "/id", keywordLocation: "/properties/id/type", keyword: "type",
            message: "expected integer, found string")))
        #expect(found.contains { $0.instanceLocation == "/tags/1" && $0.keywordLocation == "/properties/tags/items/minLength" })
        #expect(found.contains { $0.instanceLocation == "/tags/2" && $0.message == "expected string, found integer" })
        #expect(schema.validate(try JSONValue(parsing: ##"{"id": 1, "name": "n"}"##)).isValid)
    }

    @Test func referencesReportTheirAbsoluteLocation() throws {
        let schema = try compile("""
            {"$id": "https://example.com/order.json", "properties": {"owner": {"$ref": "#/$defs/person"}},
             "$defs": {"person": {"required": ["email"]}}}
            """)
        let found = try errors(schema, ##"{"owner": {}}"##)
        #expect(found == [JSONSchemaValidationError(
            instanceLocation: "/owner", keywordLocation: "/properties/owner/$ref/required",
            absoluteKeywordLocation: "https://example.com/order.json#/$defs/person/required",
            keyword: "required", message: "missing required property \"email\"")])
    }

    @Test func pointerTokensAreEscapedInLocations() throws {
        let schema = try compile(##"{"properties": {"a/b~c": {"type": "string"}}}"##)
        let found = try errors(schema, ##"{"a/b~c": 1}"##)
        #expect(found.first?.instanceLocation == "/a~1b~0c")
        #expect(found.first?.keywordLocation == "/properties/a~1b~0c/type")
    }

    @Test func selfReferenceEndsInsteadOfLooping() throws {
        let schema = try compile(##"{"$ref": "#"}"##)
        let result = schema.validate(42)
        #expect(!result.isValid)
        #expect(result.errors.first?.message.contains("leads back to itself") == true)
        let mutual = try compile(##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}"##)
        #expect(!mutual.isValid("x"))
    }

    @Test func recursionThroughTheInstanceIsBounded() throws {
        let schema = try compile(##"{"items": {"$ref": "#"}, "type": "array"}"##)
        var deep: JSONValue = []
        for _ in 0..<400 { deep = [deep] }
        #expect(schema.isValid(deep))
        for _ in 0..<2000 { deep = [deep] }
        let result = schema.validate(deep)
        #expect(!result.isValid)
        #expect(result.errors.first?.message.contains("deeper than") == true)
    }

    @Test func multipleOfUsesDecimalArithmetic() throws {
        let schema = try compile(##"{"multipleOf": 0.0001}"##)
        #expect(schema.isValid(0.0075))
        #expect(schema.isValid(19.99))
        #expect(!schema.isValid(0.00751))
        let cents = try compile(##"{"multipleOf": 0.01}"##)
        #expect(cents.isValid(0.07))
        #expect(cents.isValid(1.1))
        #expect(!cents.isValid(1.001))
        #expect(!(try compile(##"{"multipleOf": 0.123456789}"##)).isValid(1e308))
        #expect(try compile(##"{"multipleOf": 3}"##).isValid(9))
    }

    @Test func integersIncludeWholeFloats() throws {
        let draft4 = try compile(##"{"type": "integer"}"##, .init(draft: .draft4))
        #expect(draft4.isValid(try JSONValue(parsing: "1.0")))
        #expect(!draft4.isValid(1.5))
        let found = try errors(draft4, "1.5")
        #expect(found.first?.message == "expected integer, found number")
    }

    @Test func stringLengthCountsCodePoints() throws {
        let schema = try compile(##"{"maxLength": 2, "minLength": 2}"##)
        #expect(schema.isValid("💩💩"))
        #expect(!schema.isValid("💩"))
        #expect(try errors(schema, ##""a""##).first?.message == "string has 1 character, fewer than the minimum 2")
    }

    @Test func exclusiveBoundsInBothDrafts() throws {
        let draft4 = try compile(##"{"maximum": 10, "exclusiveMaximum": true, "minimum": 1}"##, .init(draft: .draft4))
        #expect(!draft4.isValid(10))
        #expect(draft4.isValid(9.5))
        #expect(!draft4.isValid(0))
        let modern = try compile(##"{"exclusiveMaximum": 10, "exclusiveMinimum": 1}"##)
        #expect(!modern.isValid(10))
        #expect(!modern.isValid(1))
        #expect(modern.isValid(5))
        #expect(try errors(modern, "10").first?.message == "10 is not less than the exclusive maximum 10")
    }

    @Test func dialectComesFromOptionThenSchemaThenDefault() throws {
        // Draft 4 ignores siblings of $ref; 2020-12 applies them.
        let text = ##"{"$defs": {"s": {"type": "string"}}, "definitions": {"s": {"type": "string"}}, "allOf": [{"$ref": "#/definitions/s", "maxLength": 1}]}"##
        let inferred = try compile(text)
        #expect(inferred.draft == .draft2020_12)
        #expect(!inferred.isValid("ab"))
        let forced = try compile(text, .init(draft: .draft4))
        #expect(forced.isValid("ab"))
        let declared = try compile(##"{"$schema": "http://json-schema.org/draft-04/schema#", "allOf": [{"$ref": "#/definitions/s", "maxLength": 1}], "definitions": {"s": {"type": "string"}}}"##)
        #expect(declared.draft == .draft4)
        #expect(declared.isValid("ab"))
    }

    @Test func draftsAreNamedByTheirMetaschemaURIs() {
        #expect(JSONSchema.Draft(schemaURI: "http://json-schema.org/draft-04/schema#") == .draft4)
        #expect(JSONSchema.Draft(schemaURI: "https://json-schema.org/draft/2020-12/schema") == .draft2020_12)
        #expect(JSONSchema.Draft(schemaURI: "http://json-schema.org/draft-07/schema#") == nil)
    }

    @Test func metaschemasAreBuiltIn() throws {
        let draft4 = try compile(##"{"$ref": "http://json-schema.org/draft-04/schema#"}"##, .init(draft: .draft4))
        #expect(draft4.isValid(["type": "string"]))
        #expect(!draft4.isValid(["type": 12]))
        let modern = try compile(##"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"##)
        #expect(modern.isValid(["properties": ["a": ["minLength": 1]]]))
        #expect(!modern.isValid(["properties": ["a": ["minLength": -1]]]))
    }

    @Test func remoteReferencesGoThroughTheResolverOnly() throws {
        let registry = JSONSchemaRegistry(["https://schemas.example/money.json": ["type": "string", "pattern": "^[0-9]+\\.[0-9]{2}$"]])
        let schema = try compile(##"{"properties": {"total": {"$ref": "https://schemas.example/money.json"}}}"##, .init(resolver: registry))
        #expect(schema.isValid(["total": "12.50"]))
        #expect(!schema.isValid(["total": "12.5"]))
        #expect(throws: JSONSchemaCompileError.self) {
            try compile(##"{"properties": {"total": {"$ref": "https://schemas.example/money.json"}}}"##)
        }
    }

    @Test func compileErrorsSayWhereAndWhat() throws {
        let cases: [(String, String, String)] = [
            (##"{"properties": {"a": {"minLength": -1}}}"##, "/properties/a/minLength", "minLength must be a non-negative integer"),
            (##"{"type": "text"}"##, "/type", "unknown type \"text\""),
            (##"{"items": {"pattern": "(unclosed"}}"##, "/items/pattern", "not a valid regular expression"),
            (##"{"$ref": "#/$defs/missing"}"##, "/$ref", "has nothing at /$defs/missing"),
            (##"{"allOf": [{"$ref": "#nowhere"}]}"##, "/allOf/0/$ref", "no anchor \"nowhere\""),
            (##"{"not": 3}"##, "/not", "must be a schema"),
            (##"{"items": [{"type": "string"}]}"##, "/items", "a list of schemas by position is prefixItems"),
        ]
        for (text, location, message) in cases {
            do {
                _ = try compile(text)
                Issue.record("\(text) compiled")
            } catch let error as JSONSchemaCompileError {
                #expect(error.schemaLocation == location, "\(text)")
                #expect(error.message.contains(message), "\(text): \(error.message)")
            }
        }
    }

    @Test func compiledSchemaIsSharedAcrossTasks() async throws {
        let schema = try compile(##"{"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": true}"##)
        let results = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<32 {
                group.addTask { schema.isValid(.array((0..<100).map { .integer($0 + (n % 2 == 0 ? 0 : -1)) })) }
            }
            var collected: [Bool] = []
            for await result in group { collected.append(result) }
            return collected
        }
        #expect(results.filter { $0 }.count == 16)
    }

    @Test func uniqueItemsUsesJSONEquality() throws {
        let schema = try compile(##"{"uniqueItems": true}"##)
        #expect(!schema.isValid(try JSONValue(parsing: ##"[1, 1.0]"##)))
        #expect(!schema.isValid(try JSONValue(parsing: ##"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"##)))
        #expect(schema.isValid(try JSONValue(parsing: ##"[{"a": 1}, {"a": 2}, "1", 1]"##)))
        #expect(try errors(schema, "[0, 1, 0]").first?.message == "items at 0 and 2 are equal; items must be unique")
    }

    @Test func additionalPropertiesNamesTheProperty() throws {
        let schema = try compile(##"{"properties": {"a": {}}, "additionalProperties": false}"##)
        let found = try errors(schema, ##"{"a": 1, "b": 2}"##)
        #expect(found == [JSONSchemaValidationError(
            instanceLocation: "/b", keywordLocation: "/additionalProperties", keyword: "additionalProperties",
            message: "property \"b\" is not allowed (additionalProperties is false)")])
    }

    @Test func unevaluatedPropertiesSeesThroughApplicators() throws {
        let schema = try compile("""
            {"allOf": [{"properties": {"a": true}}], "anyOf": [{"properties": {"b": true}}, {"required": ["c"]}],
             "unevaluatedProperties": false}
            """)
        #expect(schema.isValid(["a": 1, "b": 2]))
        #expect(!schema.isValid(["a": 1, "c": 2]))
        #expect(try errors(schema, ##"{"a": 1, "c": 2}"##).map(\.instanceLocation) == ["/c"])
    }

    @Test func dynamicReferenceExtendsAGenericSchema() throws {
        let registry = JSONSchemaRegistry([
            "https://example.com/tree": [
                "$id": "https://example.com/tree", "$dynamicAnchor": "node", "type": "object",
                "properties": ["children": ["type": "array", "items": ["$dynamicRef": "#node"]]],
            ],
        ])
        let strict = try compile("""
            {"$id": "https://example.com/strict-tree", "$dynamicAnchor": "node", "$ref": "tree", "unevaluatedProperties": false}
            """, .init(resolver: registry))
        #expect(strict.isValid(["children": [["children": []]]]))
        #expect(!strict.isValid(["children": [["daat": 1]]]))
    }
}

struct JSONSchemaDocumentTests {
    static let openAPI = """
        {"openapi": "3.1.0", "components": {"schemas": {
            "Order": {"type": "object", "required": ["customer"], "properties": {"customer": {"$ref": "#/components/schemas/Customer"},
                      "currency": {"$ref": "#/components/schemas/Currency"}}},
            "Customer": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string"}}},
            "Currency": {"$id": "https://example.com/currency", "enum": ["EUR", "JPY"]}}}}
        """

    @Test func compilesASchemaInsideALargerDocument() throws {
        let document = try JSONValue(parsing: Self.openAPI)
        let order = try JSONSchema(compiling: document, at: "/components/schemas/Order")
        #expect(order.isValid(["customer": ["email": "a@example.com"], "currency": "EUR"]))
        let found = order.validate(["customer": [:], "currency": "USD"]).errors
        #expect(found.map(\.keywordLocation) == ["/properties/customer/$ref/required", "/properties/currency/$ref/enum"])
        #expect(found.first?.absoluteKeywordLocation == "#/components/schemas/Customer/required")
        // The $id met on the way starts its own resource.
        #expect(found.last?.absoluteKeywordLocation == "https://example.com/currency#/enum")
        #expect(throws: JSONSchemaCompileError.self) { try JSONSchema(compiling: document, at: "/components/schemas/Missing") }
    }
}

struct JSONSchemaAlternativesTests {
    @Test func failedAlternativesCarryTheirOwnErrors() throws {
        let schema = try JSONSchema(compiling: try JSONValue(parsing: """
            {"properties": {"payment": {"oneOf": [
                {"type": "object", "required": ["iban"]},
                {"type": "object", "required": ["card"], "properties": {"card": {"pattern": "^[0-9]{16}$"}}}]}}}
            """))
        let errors = schema.validate(["payment": ["card": "1234"]]).errors
        #expect(errors.count == 1)
        let error = try #require(errors.first)
        #expect(error.keywordLocation == "/properties/payment/oneOf")
        #expect(error.causes == [
            JSONSchemaValidationError(instanceLocation: "/payment", keywordLocation: "/properties/payment/oneOf/0/required",
                                      keyword: "required", message: "missing required property \"iban\""),
            JSONSchemaValidationError(instanceLocation: "/payment/card", keywordLocation: "/properties/payment/oneOf/1/properties/card/pattern",
                                      keyword: "pattern", message: "string \"1234\" does not match the pattern \"^[0-9]{16}$\""),
        ])
        #expect(error.jsonValue["causes"]?.arrayValue?.count == 2)
    }
}

struct JSONSchemaFileResolverTests {
    @Test func servesNeighbourFilesOnlyUnderItsRoot() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-resolver-\(UUID().uuidString)")
        let schemas = root.appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try #"{"type": "string", "minLength": 3}"#.write(to: schemas.appendingPathComponent("name.json"), atomically: true, encoding: .utf8)
        try #"{"type": "integer"}"#.write(to: root.appendingPathComponent("outside.json"), atomically: true, encoding: .utf8)
        try "{\"type\": }".write(to: schemas.appendingPathComponent("broken.json"), atomically: true, encoding: .utf8)
        let options = JSONSchema.Options(
            baseURI: JSONSchemaFileResolver.baseURI(for: schemas.appendingPathComponent("main.json")),
            resolver: JSONSchemaFileResolver(root: schemas))

        let name = try JSONSchema(compiling: ["$ref": "name.json"], options: options)
        #expect(name.isValid("Ada"))
        #expect(!name.isValid("Al"))
        #expect(throws: JSONSchemaCompileError.self) { try JSONSchema(compiling: ["$ref": "../outside.json"], options: options) }
        do {
            _ = try JSONSchema(compiling: ["$ref": "broken.json"], options: options)
            Issue.record("a broken neighbour compiled")
        } catch {
            #expect(error.message.contains("broken.json:1:10: expected a value, found '}'"))
        }
    }
}

struct JSONSchemaStackTests {
    /// A thread with a small stack gets an error where it would otherwise overflow.
    @Test func deepEvaluationStopsBeforeTheStackEnds() throws {
        let schema = try JSONSchema(compiling: try JSONValue(parsing: ##"{"items": {"$ref": "#"}, "type": "array"}"##))
        var deep: JSONValue = []
        for _ in 0..<450 { deep = [deep] }
        let instance = deep
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.result = schema.validate(instance)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        done.wait()
        let result = try #require(box.result)
        #expect(!result.isValid)
        #expect(result.errors.first?.message.contains("for this thread's stack") == true)
        #expect(schema.isValid(deep) == true, "the test thread's own stack is large enough")
    }

    final class ResultBox: @unchecked Sendable {
        var result: JSONSchemaValidationResult?
    }
}
