import KagamiJSON
import Testing

/// `JSONPullReader.readsLikeParsing` says yes only where pulling sees what parsing builds, and
/// never for a document parsing refuses; `skip` refuses what parsing refuses, with its error.
@Suite struct JSONPullReaderTests {
    static func readsLikeParsing(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { JSONPullReader.readsLikeParsing($0) }
    }

    static let valid = [
        #"{}"#, #"[]"#, #"  {"a": [1, -0, 2.5e-3, 1E+2, true, false, null, "x"]}  "#,
        #"{"name":"caf\u00e9 \ud83d\ude00 \ud800 \"q\" \\ \/ \b\f\n\r\t","n":123456789012345678901234567890}"#,
        #"[{"a":1},{"a":2},{"b":{"a":{"a":[]}}}]"#, #""just a string""#, "42", "null",
        #"{"4711":{"x":1},"4712":{"x":2}}"#,
    ]

    @Test func documentsWithNothingToResolveReadLikeParsing() throws {
        for text in Self.valid {
            #expect(Self.readsLikeParsing(text), "\(text)")
            _ = try JSONValue(parsing: text)
        }
    }

    @Test func repeatedOrEscapedNamesAndLargeObjectsAreLeftToParsing() throws {
        let many = "{" + (0..<65).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"
        for text in [#"{"a":1,"a":2}"#, #"[{"x":{"a":1,"b":2,"a":3}}]"#, #"{"\u0061":1}"#, #"{"a\"b":1}"#, many] {
            #expect(!Self.readsLikeParsing(text), "\(text)")
            _ = try JSONValue(parsing: text)
        }
        // The same name in two objects, or at two levels, is no repetition.
        #expect(Self.readsLikeParsing(#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#))
        #expect(Self.readsLikeParsing("{" + (0..<64).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"))
    }

    static let invalid = [
        "", " ", #"{"a":1,}"#, "[1,]", "[01]", "-", "1.", "1e", "-a", #""\x""#, #""\u12g4""#, #""abc"#, "tru", "nul",
        #"{"a" 1}"#, #"{a:1}"#, "[1 2]", "{\"a\":\"\u{1}\"}", "[] []", "[", #"{"a":"#, "\u{FEFF}{}",
        String(repeating: "[", count: 201) + String(repeating: "]", count: 201),
    ]

    @Test func whatParsingRefusesIsNeverSaidToReadLikeIt() {
        for text in Self.invalid {
            #expect(!Self.readsLikeParsing(text), "\(text)")
            #expect(throws: JSONParseError.self, "\(text)") { try JSONValue(parsing: text) }
        }
        // As deep as the parser goes is a document.
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(Self.readsLikeParsing(deep))
    }

    @Test func skippingAValueRefusesWhatParsingRefusesWithItsError() throws {
        for text in Self.invalid where !text.isEmpty && !text.allSatisfy(\.isWhitespace) {
            let parsed = #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
            let skipped = #expect(throws: JSONParseError.self, "\(text)") {
                try Array(text.utf8).withUnsafeBytes { bytes in try JSONPullReader.read(bytes) { try $0.skip() } }
            }
            #expect(skipped == parsed, "\(text)")
        }
        for text in Self.valid + [#"{"a":1,"a":2}"#, #"{"\u0061":[1,{"b":null}]}"#] {
            try Array(text.utf8).withUnsafeBytes { bytes in try JSONPullReader.read(bytes) { try $0.skip() } }
        }
    }

    @Test func pullingSeesEachValueAsParsingBuildsIt() throws {
        // Rebuilt by pulling, every valid document is the value parsing gives.
        func pull(_ reader: inout JSONPullReader) throws -> JSONValue {
            switch reader.nextKind {
            case .object?:
                var object = JSONObject()
                try reader.members { reader, name in object[name] = try pull(&reader) }
                return .object(object)
            case .array?:
                var array: [JSONValue] = []
                try reader.elements { reader in array.append(try pull(&reader)) }
                return .array(array)
            case .string?: return .string(try reader.string())
            case .number?: return try reader.number()
            case .bool?: return .bool(try reader.bool())
            case .null?: _ = try reader.null(); return .null
            case nil: throw reader.error("expected a value")
            }
        }
        for text in Self.valid {
            let pulled = try Array(text.utf8).withUnsafeBytes { bytes in try JSONPullReader.read(bytes) { try pull(&$0) } }
            #expect(pulled == (try JSONValue(parsing: text)), "\(text)")
        }
    }
}
