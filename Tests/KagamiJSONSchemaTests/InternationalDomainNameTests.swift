import KagamiJSON
import Testing
@testable import KagamiJSONSchema

/// `hostname`, `idn-hostname` and `idn-email`, with cases taken from the RFCs' text: the
/// sample strings of RFC 3492 §7.1, the rules of RFC 5891 §5.4, RFC 5892 Appendix A and
/// RFC 5893 §2.
struct InternationalDomainNameTests {
    private func accepts(_ format: String, _ text: String) throws -> Bool {
        try JSONSchema(compiling: ["format": .string(format)], options: .init(assertsFormat: true)).isValid(.string(text))
    }

    /// RFC 3492 §7.1 (A), (B), (J), (S), and "bücher" of RFC 3490's examples.
    @Test(arguments: [
        ("\u{644}\u{64A}\u{647}\u{645}\u{627}\u{628}\u{62A}\u{643}\u{644}\u{645}\u{648}\u{634}\u{639}\u{631}\u{628}\u{64A}\u{61F}", "egbpdaj6bu4bxfgehfvwxn"),
        ("\u{4ED6}\u{4EEC}\u{4E3A}\u{4EC0}\u{4E48}\u{4E0D}\u{8BF4}\u{4E2D}\u{6587}", "ihqwcrb4cv8a8dqg056pqjye"),
        ("PorquénopuedensimplementehablarenEspañol", "PorqunopuedensimplementehablarenEspaol-fmd56a"),
        ("-> $1.00 <-", "-> $1.00 <--"),
        ("bücher", "bcher-kva"),
    ])
    func punycodeSamples(unicode: String, encoded: String) {
        #expect(Punycode.encode(Array(unicode.unicodeScalars)) == encoded)
        #expect(Punycode.decode(Substring(encoded)).map { String(String.UnicodeScalarView($0)) } == unicode)
    }

    @Test func punycodeRefusesWhatDoesNotDecode() {
        #expect(Punycode.decode("X") == nil, "input ends inside a variable-length integer")
        #expect(Punycode.decode("a-!") == nil, "'!' is not a base-36 digit")
        #expect(Punycode.decode("é-a") == nil, "basic code points are ASCII")
        #expect(Punycode.decode("99999999999") == nil, "overflow")
    }

    /// `hostname` (2020-12): RFC 1123 labels, and an `xn--` label only when it is an A-label.
    @Test func hostnameChecksALabels() throws {
        for valid in ["xn--bcher-kva.example", "XN--BCHER-KVA.example", "xn--fsqu00a.xn--4rr70v", "a--b.example"] {
            #expect(try accepts("hostname", valid), "\(valid)")
        }
        for invalid in [
            "xn--X", "xn--.example",  // not Punycode
            "xn--abc-",  // a hyphen last (and ASCII only once decoded)
            "xn--ab-4da",  // decodes to "\u{00AD}ab": SOFT HYPHEN is DISALLOWED
            "ab--c.example",  // "--" in the third and fourth place outside an A-label
            "bücher.example",  // a U-label is not a hostname
        ] {
            #expect(try !accepts("hostname", invalid), "\(invalid)")
        }
    }

    /// RFC 5891 §5.4 and RFC 5892: labels, lengths and code point properties.
    @Test func idnHostnameLabels() throws {
        for valid in ["bücher.example", "例子.广告", "xn--fsqu00a.广告", "例子。广告", "例子．广告", "例子｡广告", "EXAMPLE.com", "straße.de", "ελληνικά"] {
            #expect(try accepts("idn-hostname", valid), "\(valid)")
        }
        for invalid in [
            "", "。", "例子.", ".例子", "例子..广告",  // empty labels
            "-bücher", "bücher-", "bü--cher",  // hyphens
            "\u{301}bücher",  // begins with a combining mark
            "\u{10A0}ücher",  // a capital Georgian letter: case folding changes it
            "bü cher", "bü_cher", "bü!cher",  // DISALLOWED ASCII
            "\u{2162}.example",  // ROMAN NUMERAL THREE: changed by NFKC
            "a\u{00AD}b",  // SOFT HYPHEN: default ignorable
            "\u{1100}",  // an old Hangul jamo (with a vowel, NFC makes it a syllable)
            "\u{3031}",  // an exception set DISALLOWED
            String(repeating: "ü", count: 60),  // its A-label passes 63 octets
        ] {
            #expect(try !accepts("idn-hostname", invalid), "\(invalid.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(InternationalDomainName.property(of: "\u{00DF}") == .pValid, "ß is PVALID by exception")
        #expect(InternationalDomainName.property(of: "\u{0640}") == .disallowed, "ARABIC TATWEEL is DISALLOWED by exception")
        #expect(InternationalDomainName.property(of: "\u{200D}") == .contextJ)
        #expect(InternationalDomainName.property(of: "\u{05F3}") == .contextO)
    }

    /// RFC 5892 Appendix A, one rule at a time.
    @Test func contextRules() throws {
        let cases: [(String, Bool, String)] = [
            ("\u{0915}\u{094D}\u{200C}\u{0937}", true, "A.1: ZWNJ after a virama"),
            ("\u{0628}\u{200C}\u{0628}", true, "A.1: ZWNJ between dual-joining letters"),
            ("\u{0628}\u{064B}\u{200C}\u{0628}", true, "A.1: transparent marks may stand between"),
            ("\u{0627}\u{200C}\u{0628}", false, "A.1: ALEF joins only to the right"),
            ("ab\u{200C}c", false, "A.1: ZWNJ between Latin letters"),
            ("\u{0915}\u{094D}\u{200D}\u{0937}", true, "A.2: ZWJ after a virama"),
            ("\u{0915}\u{200D}\u{0937}", false, "A.2: ZWJ without a virama"),
            ("l\u{00B7}l", true, "A.3: MIDDLE DOT between l's"),
            ("a\u{00B7}l", false, "A.3: MIDDLE DOT after another letter"),
            ("\u{03B1}\u{0375}\u{03B2}", true, "A.4: KERAIA before Greek"),
            ("\u{03B1}\u{0375}a", false, "A.4: KERAIA before Latin"),
            ("\u{05D0}\u{05F3}\u{05D1}", true, "A.5: GERESH after Hebrew"),
            ("\u{05F4}\u{05D1}", false, "A.6: GERSHAYIM first"),
            ("\u{30A2}\u{30FB}\u{30A4}", true, "A.7: KATAKANA MIDDLE DOT with Katakana"),
            ("abc\u{30FB}def", false, "A.7: KATAKANA MIDDLE DOT alone with Latin"),
            ("\u{0628}\u{0661}\u{0662}", true, "A.8: ARABIC-INDIC DIGITS"),
            ("\u{0628}\u{0661}\u{06F2}", false, "A.8/A.9: both kinds of Arabic digits"),
        ]
        for (label, valid, rule) in cases {
            #expect(try accepts("idn-hostname", label) == valid, "\(rule)")
        }
    }

    /// RFC 5893 §2: in a name with a right-to-left label, every label keeps the six rules.
    @Test func bidiRule() throws {
        let cases: [(String, Bool, String)] = [
            ("\u{05D0}\u{05D1}.example", true, "an RTL label beside an LTR one"),
            ("\u{05D0}1", true, "rule 3: an RTL label may end with a digit"),
            ("1\u{05D0}", false, "rule 1: first a letter"),
            ("\u{05D0}a", false, "rule 2: no L in an RTL label"),
            ("a\u{05D0}", false, "rule 5: no R in an LTR label"),
            ("\u{0628}1\u{0661}", false, "rule 4: not both European and Arabic-Indic digits"),
            ("1a.\u{05D0}", false, "rule 1 holds for every label of a Bidi domain name"),
            ("\u{05D0}\u{0301}", true, "rule 3: marks may follow the last letter"),
        ]
        for (name, valid, rule) in cases {
            #expect(try accepts("idn-hostname", name) == valid, "\(rule)")
        }
        // The same rule applies to what an A-label decodes to.
        let aLabel = try #require(Punycode.encode(Array("a\u{05D0}".unicodeScalars)))
        #expect(try !accepts("hostname", "xn--" + aLabel))
    }

    /// RFC 6531 §3.3: UTF-8 in the local part's atoms, an IDN domain.
    @Test func idnEmail() throws {
        for valid in ["用户@例子.广告", "δοκιμή@παράδειγμα.δοκιμή", "\"δ κ\"@example.com", "user@xn--fsqu00a.xn--4rr70v", "user@[IPv6:2001:db8::1]"] {
            #expect(try accepts("idn-email", valid), "\(valid)")
        }
        for invalid in ["用户", "用户＠例子.广告", "用户@", "@例子.广告", ".用户@例子.广告", "用 户@例子.广告", "user@xn--X", "user@[300.0.0.1]"] {
            #expect(try !accepts("idn-email", invalid), "\(invalid)")
        }
    }

    /// ES2018 lookbehind, of any width (ICU's needs a bound: see ECMARegex.lookbehindReach).
    @Test func lookbehindOfAnyWidth() throws {
        func matches(_ pattern: String, _ text: String) throws -> Bool {
            try JSONSchema(compiling: ["pattern": .string(pattern)]).isValid(.string(text))
        }
        #expect(try matches("(?<=a+)b", "aaab"))
        #expect(try !matches("(?<=a+)b", "cb"))
        #expect(try matches("(?<!\\d{2,})x", "1x"))
        #expect(try !matches("(?<!\\d{2,})x", "12x"))
        #expect(try matches("^(?:(?<=^)a*)$", "aaa"))
        #expect(try accepts("regex", "(?<=a+)b"))
        #expect(try ECMARegex.translate("(?<=a*(b+))c+") == "(?<=a{0,255}(b{1,255}))c+")
    }
}
