import KagamiContract
import KagamiJSON
import KagamiJSONSchema
@testable import KagamiOpenAPI
import Testing

/// A schema translated keyword by keyword comes out as OpenAPIKit gives it back (decoded,
/// converted from 3.0, encoded), member order and number forms included; what the
/// translation doesn't read is left to OpenAPIKit.
@Suite struct SchemaTranslationTests {
    /// Schemas both versions read alike, one or more keywords each.
    static let common: [String] = [
        ##"{"type": "string"}"##,
        ##"{"type": "string", "format": "date-time", "pattern": "^[a-z]+$", "minLength": 1, "maxLength": 20}"##,
        ##"{"type": "string", "format": "uuid", "title": "Id", "description": "An id.", "example": "a-1", "default": "a-0"}"##,
        ##"{"type": "string", "enum": ["draft", "active", "retired"]}"##,
        ##"{"type": "string", "enum": ["only"]}"##,
        ##"{"type": "string", "enum": []}"##,
        ##"{"type": "string", "readOnly": true}"##,
        ##"{"type": "string", "writeOnly": true, "readOnly": false, "deprecated": true}"##,
        ##"{"type": "string", "readOnly": false, "writeOnly": false, "deprecated": false}"##,
        ##"{"type": "integer", "format": "int32", "minimum": 1, "maximum": 100, "default": 20, "multipleOf": 5}"##,
        ##"{"type": "integer", "minimum": 1.0, "maximum": 1e3}"##,
        ##"{"type": "integer", "enum": [1, 2, 3], "example": 2}"##,
        ##"{"type": "number", "minimum": 0, "maximum": 12.5, "multipleOf": 0.5, "example": 12.5}"##,
        ##"{"type": "number", "minimum": -3.25, "maximum": 1e20, "example": 2.0, "default": 1e16}"##,
        ##"{"type": "number", "format": "double", "enum": [1, 2.5, 1e17]}"##,
        ##"{"minimum": 3, "maximum": 7}"##,
        ##"{"maxLength": 3}"##,
        ##"{"type": "boolean", "default": false, "example": true}"##,
        ##"{"type": "array", "items": {"type": "string"}}"##,
        ##"{"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "uniqueItems": true}"##,
        ##"{"type": "array", "minItems": 0, "uniqueItems": false, "example": [1, "b", {"z": 1, "a": [true, null]}]}"##,
        ##"{"items": {"$ref": "#/components/schemas/Money"}}"##,
        ##"{"type": "object"}"##,
        ##"{"type": "object", "required": ["name", "id"], "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "Age": {"type": "integer"}, "_links": {"type": "object"}, "zeta": {"$ref": "#/components/schemas/Money"}}}"##,
        ##"{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"], "minProperties": 0, "maxProperties": 4}"##,
        ##"{"type": "object", "properties": {"b": {"type": "string"}}, "minProperties": 3, "required": ["b"]}"##,
        ##"{"type": "object", "additionalProperties": false}"##,
        ##"{"type": "object", "additionalProperties": true}"##,
        ##"{"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}"##,
        ##"{"properties": {"inferred": {"type": "string"}}}"##,
        ##"{"type": "object", "example": {"zeta": 1, "Alpha": "b", "alpha": [1.5, 2.0], "é": {"y": null, "x": {"type": "null", "oneOf": [{"type": "null"}]}}}}"##,
        ##"{"description": "Anything at all."}"##,
        ##"{}"##,
        ##"{"format": "anything", "title": "Free", "default": {"b": 1, "a": 2}}"##,
        ##"{"$ref": "#/components/schemas/Money"}"##,
        ##"{"allOf": [{"$ref": "#/components/schemas/Money"}, {"type": "object", "properties": {"note": {"type": "string"}}}], "description": "Both."}"##,
        ##"{"oneOf": [{"$ref": "#/components/schemas/Money"}, {"type": "string"}], "example": "EUR"}"##,
        ##"{"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["a", "b"]}], "default": 1}"##,
        ##"{"not": {"type": "string"}}"##,
        ##"{"oneOf": [{"allOf": [{"type": "string"}]}, {"not": {"type": "integer"}}], "format": "f"}"##,
        ##"{"type": "string", "x-internal": true, "x-order": {"b": 1, "a": 2}, "X-Upper": "kept"}"##,
        ##"{"oneOf": [{"type": "string"}], "x-kind": "one"}"##,
        ##"{"type": "object", "properties": {"deep": {"type": "array", "items": {"type": "object", "properties": {"deeper": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}}}}"##,
        ##"{"type": "string", "default": null}"##,
        ##"{"type": "string", "discriminator": {"propertyName": "kind"}}"##,
        ##"{"oneOf": [{"$ref": "#/components/schemas/Money"}], "discriminator": {"propertyName": "kind", "mapping": {"m": "#/components/schemas/Money"}}}"##,
    ]

    /// Schemas only 3.0 reads as written.
    static let openAPI30: [String] = [
        ##"{"type": "string", "nullable": true}"##,
        ##"{"type": "string", "nullable": true, "enum": ["a", null]}"##,
        ##"{"type": "object", "nullable": false, "properties": {"next": {"type": "string", "nullable": true}}}"##,
        ##"{"nullable": true}"##,
        ##"{"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": false}"##,
        ##"{"type": "integer", "maximum": 10, "exclusiveMaximum": true}"##,
        ##"{"type": "integer", "exclusiveMaximum": true}"##,
        ##"{"allOf": [{"type": "string", "nullable": true}, {"type": "string", "maxLength": 3}]}"##,
        ##"{"oneOf": [{"type": "object", "nullable": true}, {"type": "string"}]}"##,
        ##"{"anyOf": [{"type": "integer"}], "nullable": true}"##,
        ##"{"type": "string", "example": null}"##,
        ##"{"type": "string", "example": "a", "examples": ["ignored"]}"##,
    ]

    /// Schemas only 3.1 reads as written.
    static let openAPI31: [String] = [
        ##"{"type": ["string", "null"]}"##,
        ##"{"type": ["null", "integer"], "minimum": 2}"##,
        ##"{"type": ["null"]}"##,
        ##"{"type": "null"}"##,
        ##"{"type": "null", "description": "Nothing."}"##,
        ##"{"type": ["string"], "const": "fixed"}"##,
        ##"{"const": 3}"##,
        ##"{"type": "string", "enum": ["a", "b"], "const": "c"}"##,
        ##"{"type": "string", "examples": ["a", "b"]}"##,
        ##"{"type": "string", "examples": []}"##,
        ##"{"type": "string", "example": "a", "examples": ["b"]}"##,
        ##"{"type": "string", "example": null}"##,
        ##"{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10.5}"##,
        ##"{"type": "number", "minimum": 1, "exclusiveMinimum": 0}"##,
        ##"{"type": "integer", "exclusiveMaximum": 10, "maximum": 20}"##,
        ##"{"type": "integer", "exclusiveMinimum": 2.0}"##,
        ##"{"oneOf": [{"type": "string"}, {"type": "null"}]}"##,
        ##"{"anyOf": [{"type": "string"}, {"type": ["integer", "null"]}]}"##,
        ##"{"allOf": [{"type": "string"}, {"type": "null"}]}"##,
        ##"{"type": "array", "items": {"type": ["string", "null"]}}"##,
    ]

    /// Schemas the translation leaves to OpenAPIKit (keywords it doesn't read, shapes that
    /// lose or refuse something there).
    static let leftToOpenAPIKit: [(String, ContractFormat)] = [
        (##"{"type": "object", "patternProperties": {"^x": {"type": "string"}}}"##, .openAPI31),
        (##"{"type": "string", "minimum": 1}"##, .openAPI31),
        (##"{"maxLength": 1, "minItems": 1}"##, .openAPI31),
        (##"{"type": ["string", "integer"]}"##, .openAPI31),
        (##"{"type": "string", "nullable": true}"##, .openAPI31),
        (##"{"type": "string", "format": "byte"}"##, .openAPI30),
        (##"{"type": "null"}"##, .openAPI30),
        (##"{"type": "object", "required": ["missing"]}"##, .openAPI30),
        (##"{"type": "integer", "minimum": 1.5}"##, .openAPI31),
        (##"{"type": "string", "readOnly": true, "writeOnly": true}"##, .openAPI30),
        (##"{"$ref": "#/components/schemas/Money", "description": "beside"}"##, .openAPI31),
        (##"{"allOf": [{"type": "string"}], "oneOf": [{"type": "string"}]}"##, .openAPI31),
        (##"{"type": "string", "const": "c"}"##, .openAPI30),
        (##"{"type": "string", "enum": ["a", 1]}"##, .openAPI31),
    ]

    /// The form OpenAPIKit gives a schema (beside a `Money` component its `$ref`s name).
    static func openAPIKitForm(_ schema: JSONValue, format: ContractFormat) throws -> JSONValue? {
        let forms = try SchemaForms.decoded(["s": schema, "Money": ["type": "object"]], format: format)
        return forms["s"]
    }

    static func parsed(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    @Test(arguments: [ContractFormat.openAPI30, .openAPI31])
    func translatedAsOpenAPIKitGivesThem(format: ContractFormat) throws {
        let own = format == .openAPI30 ? Self.openAPI30 : Self.openAPI31
        for text in Self.common + own {
            let schema = try Self.parsed(text)
            let translated = SchemaTranslation.form(of: schema, format: format)
            let expected = try Self.openAPIKitForm(schema, format: format)
            #expect(translated != nil, "\(text): left to OpenAPIKit")
            #expect(translated == expected, "\(text)\ntranslated: \(translated.map { $0.serialized() } ?? "nil")\nOpenAPIKit: \(expected.map { $0.serialized() } ?? "nil")")
        }
    }

    /// A type and its keywords beside a combination constrain the value as much as the
    /// combination does: read, where OpenAPIKit's form drops them (so a missing `name` went
    /// unnoticed beside a `oneOf`).
    @Test(arguments: [ContractFormat.openAPI30, .openAPI31])
    func keywordsBesideACombinationAreRead(format: ContractFormat) throws {
        let schema = try Self.parsed(##"""
            {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}},
             "oneOf": [{"required": ["a"], "properties": {"a": {"type": "integer"}}}, {"required": ["b"], "properties": {"b": {"type": "integer"}}}],
             "discriminator": {"propertyName": "name"}}
            """##)
        let form = try #require(SchemaTranslation.form(of: schema, format: format))
        #expect(form["required"] == ["name"] && form["type"] == "object" && form["discriminator"]?["propertyName"] == "name", "\(form.serialized())")
        let validator = try JSONSchema(compiling: form)
        #expect(validator.isValid(["name": "x", "a": 1]))
        #expect(!validator.isValid(["a": 1]), "name is required beside the oneOf")
        #expect(!validator.isValid(["name": 1, "a": 1]))
        #expect(!validator.isValid(["name": "x"]))
        #expect(try Self.openAPIKitForm(schema, format: format)?["required"] == nil, "OpenAPIKit keeps them now: read them through it again")
        let typed = try Self.parsed(##"{"type": "object", "allOf": [{"$ref": "#/components/schemas/Money"}], "title": "Typed beside allOf"}"##)
        #expect(SchemaTranslation.form(of: typed, format: format)?["type"] == "object")
    }

    @Test func leftToOpenAPIKitWhenNotTranslated() throws {
        for (text, format) in Self.leftToOpenAPIKit {
            #expect(SchemaTranslation.form(of: try Self.parsed(text), format: format) == nil, "\(text)")
        }
    }

    @Test func examplesAsOpenAPIKitGivesThem() throws {
        let texts = [#""text""#, "12", "12.5", "2.0", "1e20", "true", #"[1, 2.0, "a"]"#, #"{"z": {"b": 1, "a": null}, "A": 1}"#]
        for text in texts {
            let value = try Self.parsed(text)
            // OpenAPIKit holds an example as it holds any other: `AnyCodable`.
            let expected = try Self.openAPIKitForm(["example": value], format: .openAPI31)?["examples"]?[0]
            #expect(SchemaTranslation.example(value) == expected, "\(text)")
        }
    }

    /// Every schema of the benchmark's generated description is translated, none left to OpenAPIKit.
    @Test(arguments: ["3.0.3", "3.1.0"])
    func generatedDescriptionsAreTranslatedWhole(version: String) throws {
        let (raw, _) = try OpenAPISource.read(try OpenAPIValuesReaderTests.generated(paths: 30, version: version, format: "json"))
        let format: ContractFormat = version.hasPrefix("3.0") ? .openAPI30 : .openAPI31
        var schemas = Array((raw["components"]?["schemas"]?.objectValue ?? [:]).values)
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let members):
                for (key, member) in members {
                    if key == "schema" { schemas.append(member) } else { collect(member) }
                }
            case .array(let items): items.forEach(collect)
            default: break
            }
        }
        collect(raw["paths"] ?? .null)
        #expect(schemas.count > 100)
        for schema in schemas {
            #expect(SchemaTranslation.form(of: schema, format: format) != nil, "\(schema.serialized())")
        }
    }

    /// Whole documents with these schemas in their paths and components read alike both ways.
    @Test(arguments: [("3.0.3", ContractFormat.openAPI30), ("3.1.0", .openAPI31)])
    func documentsWithTheseSchemasReadAlike(version: String, format: ContractFormat) throws {
        let own = format == .openAPI30 ? Self.openAPI30 : Self.openAPI31
        let left = Self.leftToOpenAPIKit.filter { $0.1 == format }.map(\.0)
        // Components that refer back to themselves are inlined apart from those that don't.
        var components: [String] = [
            #""Money": {"type": "object", "properties": {"amount": {"type": "number"}}}"#,
            ##""Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}}"##,
            ##""Left": {"type": "object", "properties": {"right": {"$ref": "#/components/schemas/Right"}}}"##,
            ##""Right": {"type": "object", "properties": {"left": {"$ref": "#/components/schemas/Left"}, "money": {"$ref": "#/components/schemas/Money"}}}"##,
        ]
        var paths: [String] = ["Money", "Tree", "Left", "Right"].map { name in
            ##""/\##(name)": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/\##(name)"}}}}}}}"##
        }
        for (index, schema) in (Self.common + own + left).enumerated() {
            components.append(#""S\#(index)": \#(schema)"#)
            paths.append(#"""
            "/s\#(index)": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": \#(schema)}}}}}}
            """#)
        }
        let text = #"""
        {"openapi": "\#(version)", "info": {"title": "Schemas", "version": "1"},
         "paths": {\#(paths.joined(separator: ",\n"))},
         "components": {"schemas": {\#(components.joined(separator: ",\n"))}}}
        """#
        OpenAPIValuesReaderTests.expectSameBothWays(text, "schemas \(version)", readFromValues: nil)
    }
}
