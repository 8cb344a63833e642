import Foundation
import KagamiTesting
import KagamiJSON
import Testing
@testable import KagamiJSONSchema

struct JSONSchemaFormatAndPatternTests {
    private func schema(format: String, asserting: Bool = true) throws -> JSONSchema {
        try JSONSchema(compiling: ["format": .string(format)], options: .init(assertsFormat: asserting))
    }

    @Test func formatIsAnAnnotationUnlessAsked() throws {
        #expect(try schema(format: "email", asserting: false).isValid("not an email"))
        #expect(!(try schema(format: "email")).isValid("not an email"))
        #expect(try schema(format: "email").isValid(42), "formats only constrain strings")
        #expect(try schema(format: "made-up").isValid("anything"), "unknown formats stay annotations")
        let found = try schema(format: "date").validate("2024-02-30").errors
        #expect(found.first?.message == "\"2024-02-30\" is not a valid date")
    }

    @Test(arguments: [
        ("date-time", ["1963-06-19T08:30:06.283185Z", "1963-06-19t08:30:06z", "1990-12-31T15:59:60-08:00", "2024-01-01T00:00:00+05:30"],
         ["1963-06-19T08:30:06", "1963-06-19 08:30:06Z", "1990-12-31T23:59:60+01:00", "2024-13-01T00:00:00Z", "1963-06-1T08:30:06Z"]),
        ("date", ["2020-02-29", "1999-12-31"], ["2021-02-29", "2020-1-01", "2020-04-31", "１９６３-06-19"]),
        ("time", ["08:30:06Z", "23:59:60Z", "08:30:06.5+01:00"], ["08:30:06", "24:00:00Z", "08:30:60Z", "8:30:06Z"]),
        ("email", ["joe.bloggs@example.com", "te~st@example.com", "\"joe bloggs\"@example.com", "joe@[127.0.0.1]"],
         ["2962", ".test@example.com", "te..st@example.com", "test@", "joe@-example.com"]),
        ("hostname", ["www.example.com", "xn--4gbwdl.xn--wgbh1c", "a"], ["-a.com", "a..b", "ab--cd.com", String(repeating: "a", count: 64) + ".com"]),
        ("ipv4", ["192.168.0.1", "0.0.0.0"], ["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "١.2.3.4"]),
        ("ipv6", ["::1", "::", "2001:db8::ff00:42:8329", "::ffff:192.168.0.1", "1:2:3:4:5:6:7:8"],
         ["12345::", ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "::ffff:256.0.0.1", "fe80::1%eth0"]),
        ("uri", ["http://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:joe@example.com", "http://[2001:db8::1]:80/"],
         ["//example.com", "/relative", "http://exa mple.com", "http://example.com/%zz", "1a:b"]),
        ("uri-reference", ["/relative", "#frag", "../up", "http://example.com"], ["\\\\WINDOWS\\file", "http://exa mple.com", "#a#b"]),
        ("uuid", ["2EB8AA08-AA98-11EA-B4AA-73B441D16380", "00000000-0000-0000-0000-000000000000"],
         ["2eb8aa08aa9811eab4aa73b441d16380", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8aa08-aa98-11ea-73b441d16380-b4aa"]),
        ("regex", ["^[a-z]+$", "\\d{3}"], ["(unclosed", "[z-a]", "\\a", "(?i)abc"]),
        ("duration", ["P4DT12H30M5S", "PT36H", "P2W", "P1Y2M"], ["PT1D", "P", "P1YT", "P2D1Y", "P1Y2W", "PT0.5S", "P1D2T3H"]),
        ("json-pointer", ["", "/", "/a~1b/~0", "/foo//bar"], ["a", "/~2", "/foo/bar~", "#/a"]),
        ("relative-json-pointer", ["0", "1/a", "0#", "120/x"], ["/a", "-1/a", "01/a", "0##", "1#/a"]),
        ("uri-template", ["http://example.com/{id}{?q,page}", "{+path*}", "{v:30}", ""], ["{", "{}", "{a,,b}", "{v:0}", "a}b", "{a..b}"]),
        ("iri", ["http://ƒøø.ßår/?∂éœ=πîx#πîüx", "urn:ex:ü"], ["/abc", "âππ", "http://[::ffff:192.168.0.01]"]),
        ("iri-reference", ["//ƒøø.ßår/", "#ƒrägmênt", "âππ"], ["\\\\WINDOWS\\filëßåré", "#ƒräg#mênt"]),
    ])
    func assertedFormats(format: String, valid: [String], invalid: [String]) throws {
        let schema = try schema(format: format)
        for text in valid { #expect(schema.isValid(.string(text)), "\(format) should accept \(text)") }
        for text in invalid { #expect(!schema.isValid(.string(text)), "\(format) should reject \(text)") }
    }

    /// OpenAPI's numeric formats are ranges, checked exactly at their ends (a number past
    /// 2^63 reads as a double, which rounds Int64.max up to 2^63).
    @Test func numericFormatsAreRanges() throws {
        let int64 = try schema(format: "int64"), int32 = try schema(format: "int32"), float = try schema(format: "float")
        let (largest, smallest) = (try JSONValue(parsing: "9223372036854775807"), try JSONValue(parsing: "-9223372036854775808"))
        let (past, far, below) = (try JSONValue(parsing: "9223372036854775808"), try JSONValue(parsing: "1e19"), try JSONValue(parsing: "-9223372036854775809"))
        #expect(int64.isValid(largest) && int64.isValid(smallest))
        #expect(!int64.isValid(past) && !int64.isValid(far) && !int64.isValid(below))
        #expect(int32.isValid(2_147_483_647) && !int32.isValid(2_147_483_648) && !int32.isValid(1.5) && int32.isValid(2.0))
        #expect(float.isValid(3.4e38) && !float.isValid(3.5e38) && !float.isValid(-1e39))
        #expect(try schema(format: "int32", asserting: false).isValid(2_147_483_648))
        #expect(int32.isValid("2147483648"), "formats of numbers don't constrain strings")
    }

    @Test func patternsFollowECMAScript() throws {
        func matches(_ pattern: String, _ text: String) throws -> Bool {
            try JSONSchema(compiling: ["pattern": .string(pattern)]).isValid(.string(text))
        }
        // \d and \w are ASCII-only in ECMA-262.
        #expect(try matches("^\\d+$", "123"))
        #expect(try !matches("^\\d+$", "١٢٣"))
        #expect(try !matches("^\\w+$", "café"))
        #expect(try matches("^[\\w-]+$", "a_b-c"))
        // \s includes Unicode spaces such as NBSP and BOM.
        #expect(try matches("^\\s$", "\u{FEFF}"))
        #expect(try !matches("^\\S$", "\u{00A0}"))
        // $ is end of input only; ICU would accept a final newline.
        #expect(try !matches("^abc$", "abc\n"))
        // Patterns search anywhere unless anchored.
        #expect(try matches("b", "abc"))
        // Unicode property escapes and code point escapes.
        #expect(try matches("^\\p{L}+$", "ĉapelo"))
        #expect(try matches("^\\u{1F600}$", "😀"))
        #expect(try matches("^[^]$", "\n"))
    }

    @Test func translationRewritesClassesAndAnchors() throws {
        #expect(try ECMARegex.translate("[\\d\\w]$") == "[0-9a-zA-Z0-9_]\\z")
        #expect(try ECMARegex.translate("[a&&b]") == "[a\\&\\&b]")
        #expect(try ECMARegex.translate("[[]") == "[\\[]")
    }
}

/// The linear-time matcher for simple patterns must agree with ICU on what it accepts.
struct SimplePatternTests {
    /// A fixed-seed generator, so a disagreement reproduces.

    static let patterns = [
        "^[A-Z]{3}-[0-9]{5}$", "^-?[0-9]+\\.[0-9]{2}$", "^[0-9a-f-]{36}$", "^[A-Z0-9 -]{3,10}$",
        "a*b", "^a?b+c{2,}$", "x.y", "^\\d{2,4}\\s?\\w*$", "[^abc]+", "^[\\d-x]$", "\\.\\*",
        "^$", "ab*?c", "^[a-c]{0,2}b{1,3}$", "[\\s\\d]", "^.*$", "^\\D\\W\\S$",
    ]

    @Test func parsesOnlyWhatItCanMatch() {
        for pattern in Self.patterns {
            #expect(SimplePattern(pattern) != nil, "\(pattern) should be handled without ICU")
        }
        // ICU refuses an empty pattern; ECMA-262 matches everything with it.
        #expect(SimplePattern("")?.matches("anything") == true)
        for pattern in ["(a|b)", "a{2", "\\p{L}", "\\bword", "[[a]]", "a**", "^(?=x)", "\\1", "[]", "[^]", "a$b"] {
            #expect(SimplePattern(pattern) == nil, "\(pattern) must go to ICU")
        }
    }

    @Test func agreesWithICU() throws {
        var random = SeededGenerator(state: 20_261_121)
        let alphabet = Array("abcxyzAZ09-. \n\u{A0}é😀_*").map(String.init)
        for pattern in Self.patterns {
            guard let simple = SimplePattern(pattern) else { continue }
            let icu = try NSRegularExpression(pattern: try ECMARegex.translate(pattern))
            var samples = ["", "ABC-12345", "12.50", "-3.99", "aab", "abcc", "xzy", "x\ny", "12 ab", "zzz"]
            for _ in 0..<300 {
                let length = Int.random(in: 0...12, using: &random)
                samples.append((0..<length).map { _ in alphabet.randomElement(using: &random) ?? "a" }.joined())
            }
            for sample in samples {
                let expected = icu.firstMatch(in: sample, range: NSRange(location: 0, length: sample.utf16.count)) != nil
                #expect(simple.matches(sample) == expected, "\(pattern) on \(sample.debugDescription)")
            }
        }
    }
}

struct RunawayPatternTests {
    @Test func backtrackingPatternsStopAtTheTimeLimit() throws {
        let schema = try JSONSchema(compiling: ["pattern": "^(a+)+$"])
        let hostile = JSONValue.string(String(repeating: "a", count: 40) + "!")
        let start = ContinuousClock.now
        let result = schema.validate(hostile)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(!result.isValid)
        #expect(result.errors.first?.message.contains("ran longer than") == true)
        #expect(schema.isValid("aaaa"))
    }
}
