import Testing
import KagamiJSON

@Suite struct JSONValueTests {
    @Test func parsesAndKeepsMemberOrder() throws {
        let value = try JSONValue(parsing: #"{"b": 1, "a": [true, null, 2.5, "x\u00e9\n"], "c": {}}"#)
        #expect(value.objectValue?.keys.elementsEqual(["b", "a", "c"]) == true)
        #expect(value["a"]?[3] == .string("xé\n"))
        #expect(value.serialized() == #"{"b":1,"a":[true,null,2.5,"xé\n"],"c":{}}"#)
    }

    @Test func integersStayExactAndBignumsBecomeNumbers() throws {
        #expect(try JSONValue(parsing: "9007199254740993") == .integer(9007199254740993))
        let big = try JSONValue(parsing: "123456789012345678901234567890")
        #expect(big.typeName == "number")
        #expect(big.intValue == nil)
        #expect(try JSONValue(parsing: "1.0").intValue == 1)
    }

    @Test func surrogatePairsDecode() throws {
        #expect(try JSONValue(parsing: #""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: [
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("[1,\n 2,\n x]", 3, 2, "expected a value"),
        ("01", 1, 1, "leading zero"),
        ("\"abc", 1, 1, "unterminated string"),
        ("[1] 2", 1, 5, "after the JSON value"),
        ("{\"a\":tru}", 1, 6, "invalid literal"),
    ])
    func errorsSayWhere(text: String, line: Int, column: Int, fragment: String) {
        do {
            _ = try JSONValue(parsing: text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.column == column, "\(error)")
            #expect(error.message.contains(fragment), "\(error)")
        }
    }

    @Test func deepNestingIsRefusedNotCrashed() {
        let text = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func jsonEqualityComparesNumbersByValueAndIgnoresOrder() throws {
        let a = try JSONValue(parsing: #"{"x": 1, "y": [1.0]}"#)
        let b = try JSONValue(parsing: #"{"y": [1], "x": 1.0}"#)
        #expect(a.isJSONEqual(to: b))
        #expect(!a.isJSONEqual(to: try JSONValue(parsing: #"{"x": 1}"#)))
    }

    @Test func prettyPrinting() throws {
        let value: JSONValue = ["id": 1, "tags": ["a"], "empty": [:]]
        #expect(value.serialized(.prettyPrinted) == """
        {
          "id": 1,
          "tags": [
            "a"
          ],
          "empty": {}
        }
        """)
    }
}
