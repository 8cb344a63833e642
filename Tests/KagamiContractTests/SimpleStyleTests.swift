import KagamiContract
import KagamiJSON
import Testing

/// OpenAPI's `simple` style (RFC 6570 `{name}`), read along a schema and written back: the
/// cases of the specification's style table (`color` as a string, an array, an object).
@Suite struct SimpleStyleTests {
    @Test func textIsReadAsTheSchemasTypeSays() {
        #expect(SimpleStyle.value(of: "12", schema: ["type": "integer"]) == 12)
        #expect(SimpleStyle.value(of: "abc", schema: ["type": "integer"]) == "abc")
        #expect(SimpleStyle.value(of: "1.5", schema: ["type": "number"]) == 1.5)
        #expect(SimpleStyle.value(of: "nan", schema: ["type": "number"]) == "nan")
        #expect(SimpleStyle.value(of: "true", schema: ["type": "boolean"]) == true)
        #expect(SimpleStyle.value(of: "yes", schema: ["type": "boolean"]) == "yes")
        #expect(SimpleStyle.value(of: "12", schema: ["type": ["string", "integer"]]) == 12)
        #expect(SimpleStyle.value(of: "12", schema: nil) == "12")
        // An integer beyond Int stays an integer, as the JSON parser reads it.
        #expect(SimpleStyle.value(of: "123456789012345678901234", schema: ["type": "integer"]) == .number(Double("123456789012345678901234") ?? 0))
        // `blue,black,brown`, each item read along `items`.
        #expect(SimpleStyle.value(of: "blue,black,brown", schema: ["type": "array"]) == ["blue", "black", "brown"])
        #expect(SimpleStyle.value(of: "10,20", schema: ["type": "array", "items": ["type": "integer"]]) == [10, 20])
        #expect(SimpleStyle.value(of: "10,x", schema: ["type": "array", "items": ["type": "integer"]]) == [10, "x"])
        #expect(SimpleStyle.value(of: "", schema: ["type": "array"]) == [])
        // `R,100,G,200,B,150`.
        let object: JSONValue = ["type": "object", "properties": ["R": ["type": "integer"]]]
        #expect(SimpleStyle.value(of: "R,100,G,200", schema: object) == ["R": 100, "G": "200"])
        #expect(SimpleStyle.value(of: "R,100,G", schema: object) == "R,100,G")
    }

    @Test func valuesAreWrittenAsTheStyleDoes() {
        #expect(SimpleStyle.text(of: "blue") == "blue")
        #expect(SimpleStyle.text(of: 7) == "7")
        #expect(SimpleStyle.text(of: true) == "true")
        #expect(SimpleStyle.text(of: .null) == "")
        #expect(SimpleStyle.text(of: ["blue", "black"]) == "blue,black")
        #expect(SimpleStyle.text(of: ["R": 100, "G": 200]) == "R,100,G,200")
        // Written and read back, a value is itself.
        let schema: JSONValue = ["type": "array", "items": ["type": "integer"]]
        #expect(SimpleStyle.value(of: SimpleStyle.text(of: [3, 4]), schema: schema) == [3, 4])
    }
}
