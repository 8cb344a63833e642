@testable import KagamiInfer
import KagamiJSON
import KagamiJSONSchema
import Testing

/// Samples merged into one schema, on hand-made bodies.
@Suite struct SchemaSketchTests {
    func schema(_ samples: [String]) throws -> JSONValue {
        SchemaSketch(merging: try samples.map { try JSONValue(parsing: $0) }).schema()
    }

    @Test func requiredOnlyWhenInEverySample() throws {
        let schema = try schema([#"{"id": 1, "name": "a", "bio": "x"}"#, #"{"id": 2, "name": "b"}"#])
        #expect(schema["type"] == "object")
        #expect(schema["required"] == ["id", "name"])
        #expect(schema["properties"]?["bio"]?["type"] == "string")
    }

    @Test func nullBesideAValueIsAUnionWithNull() throws {
        let schema = try schema([#"{"deletedAt": null}"#, #"{"deletedAt": "2026-11-24T10:00:00Z"}"#])
        #expect(schema["properties"]?["deletedAt"]?["type"] == ["string", "null"])
        #expect(schema["properties"]?["deletedAt"]?["format"] == "date-time")
    }

    @Test func integersStayIntegersUntilAFractionArrives() throws {
        #expect(try schema(["1", "2"])["type"] == "integer")
        #expect(try schema(["1", "2.5"])["type"] == "number")
    }

    @Test func arrayItemsAreMergedAcrossElementsAndSamples() throws {
        let schema = try schema([#"[{"a": 1}, {"a": 2, "b": true}]"#, #"[{"a": 3}]"#, "[]"])
        #expect(schema["type"] == "array")
        #expect(schema["items"]?["required"] == ["a"])
        #expect(schema["items"]?["properties"]?["b"]?["type"] == "boolean")
    }

    @Test func nestedObjectsHaveTheirOwnRequired() throws {
        let schema = try schema([#"{"owner": {"id": 1, "email": "a@b.io"}}"#, #"{"owner": {"id": 2, "email": "c@d.io", "url": "https://x.io/c"}}"#])
        let owner = schema["properties"]?["owner"]
        #expect(owner?["required"] == ["id", "email"])
        #expect(owner?["properties"]?["email"]?["format"] == "email")
        #expect(owner?["properties"]?["url"]?["format"] == "uri")
    }

    @Test func formatsNeedEverySampleToMatch() throws {
        #expect(try schema([#""8f14e45f-ceea-467f-a0e6-0f6c2d8e1c2a""#])["format"] == "uuid")
        #expect(try schema([#""2026-11-24""#])["format"] == "date")
        #expect(try schema([#""10.0.0.1""#])["format"] == "ipv4")
        #expect(try schema([#""2026-11-24""#, #""soon""#])["format"] == nil)
        #expect(try schema([#""key:value""#])["format"] == nil)
    }

    @Test func enumsOnlyOnStrongEvidence() throws {
        let few = try schema([#""open""#, #""closed""#, #""open""#])
        #expect(few["enum"] == nil)
        let many = try schema((0..<12).map { #""\#(["open", "closed", "merged"][$0 % 3])""# })
        #expect(many["enum"] == ["open", "closed", "merged"])
        let distinct = try schema((0..<12).map { #""name\#($0)""# })
        #expect(distinct["enum"] == nil)
    }

    @Test func differentKindsAtOnePlaceAreAlternatives() throws {
        let schema = try schema([#"{"v": 1}"#, #"{"v": "one"}"#, #"{"v": null}"#])
        let branches = schema["properties"]?["v"]?["anyOf"]?.arrayValue ?? []
        #expect(branches.map { $0["type"] } == ["string", "integer", nil])
        #expect(branches.last?["enum"] == [nil])
    }

    @Test func everySampleIsValidAgainstTheMergedSchema() throws {
        let samples = [
            #"{"id": 1, "tags": ["a"], "owner": {"name": "x"}, "score": 1.5, "note": null}"#,
            #"{"id": 2, "tags": [], "owner": {"name": "y", "age": 3}, "score": 2, "note": "n"}"#,
            #"{"id": 3, "tags": ["b", "c"], "owner": null, "extra": [1, "two", {"k": false}]}"#,
        ]
        let values = try samples.map { try JSONValue(parsing: $0) }
        var schema = SchemaSketch(merging: values).schema().objectValue ?? [:]
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        let compiled = try JSONSchema(compiling: .object(schema))
        for value in values { #expect(compiled.isValid(value)) }
    }

    @Test func mergingTwoSketchesEqualsAddingAllSamples() throws {
        let a = try [#"{"x": 1}"#, #"{"x": 2, "y": "s"}"#].map { try JSONValue(parsing: $0) }
        let b = try [#"{"x": 3.5}"#].map { try JSONValue(parsing: $0) }
        var merged = SchemaSketch(merging: a)
        merged.merge(SchemaSketch(merging: b))
        #expect(merged.schema() == SchemaSketch(merging: a + b).schema())
    }

    @Test func secretsAreRedactedInExamples() throws {
        let value = try JSONValue(parsing: #"{"user": {"password": "hunter2", "accessToken": "abc", "name": "ann"}, "count": 1}"#)
        let redacted = Redaction.redacted(value)
        #expect(redacted["user"]?["password"] == "REDACTED")
        #expect(redacted["user"]?["accessToken"] == "REDACTED")
        #expect(redacted["user"]?["name"] == "ann")
        let echoed = Redaction.redacted(["received": #"{"name": "x", "password": "hunter2"}"#, "note": "{not json"])
        #expect(echoed["received"] == #"{"name":"x","password":"REDACTED"}"#)
        #expect(echoed["note"] == "{not json")
    }
}
