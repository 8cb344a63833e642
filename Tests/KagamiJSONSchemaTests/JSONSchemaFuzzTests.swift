// Random schemas and instances, from a fixed seed: compiling may fail, nothing may crash or hang.
import KagamiJSON
import KagamiTesting
import Testing
@testable import KagamiJSONSchema

struct JSONSchemaFuzzTests {
    static let keywords = [
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "format", "items", "prefixItems", "additionalItems", "contains",
        "minContains", "maxContains", "minItems", "maxItems", "uniqueItems", "properties", "patternProperties",
        "additionalProperties", "propertyNames", "required", "dependentRequired", "dependentSchemas", "dependencies",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties",
        "$ref", "$dynamicRef", "$anchor", "$dynamicAnchor", "$id", "id", "$defs", "definitions", "$schema",
    ]
    static let strings = ["#", "#/$defs/a", "#a", "a", "b", "string", "object", "integer", "^a+$", "(", "[", "\\d", "email",
                          "date", "http://x/y", "urn:x", "#/properties/a", "", "~", "/", "%25"]

    static func value(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 9), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int.random(in: -3...10, using: &random))
        case 3: return .number([0.5, -1.25, 1e308, 0.0001, 2.0].randomElement(using: &random) ?? 0)
        case 4, 5: return .string(strings.randomElement(using: &random) ?? "")
        case 6: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(&random, depth: depth + 1) })
        default: return schema(&random, depth: depth + 1)
        }
    }

    static func schema(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        if depth > 4 || Int.random(in: 0..<8, using: &random) == 0 { return .bool(Bool.random(using: &random)) }
        var object = JSONObject()
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let keyword = keywords.randomElement(using: &random) ?? "type"
            object[keyword] = value(&random, depth: depth)
        }
        if Bool.random(using: &random) { object["$defs"] = ["a": schema(&random, depth: depth + 1)] }
        return .object(object)
    }

    @Test func randomSchemasNeverCrash() {
        var random = SeededGenerator(state: 4_242)
        var compiled = 0
        for n in 0..<3000 {
            let schemaValue = Self.schema(&random, depth: 0)
            let options = JSONSchema.Options(draft: n % 3 == 0 ? .draft4 : nil, assertsFormat: n % 2 == 0)
            guard let schema = try? JSONSchema(compiling: schemaValue, options: options) else { continue }
            compiled += 1
            for _ in 0..<4 {
                let instance = Self.value(&random, depth: 0)
                let result = schema.validate(instance)
                // The two entry points must agree, and an invalid result must say why.
                #expect(result.isValid == schema.isValid(instance), "\(schemaValue) on \(instance)")
                #expect(result.isValid == result.errors.isEmpty, "\(schemaValue) on \(instance)")
            }
        }
        #expect(compiled > 1000, "too few random schemas compiled (\(compiled)) for the test to mean much")
    }
}
