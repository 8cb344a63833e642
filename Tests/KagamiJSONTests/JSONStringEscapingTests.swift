import Testing
import KagamiJSON

/// Strings are written eight bytes at a time where nothing needs escaping: whatever the
/// position of a byte that does (first, last, inside a word, in the tail), the text must be
/// the escaped string that reads back as the original.
@Suite struct JSONStringEscapingTests {
    /// Every byte of the string escaped as JSON requires, one at a time.
    static func reference(_ text: String, slashes: Bool) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where slashes: out += "\\/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func everySpecialByteAtEveryPlaceOfAWord() throws {
        let specials: [Character] = ["\"", "\\", "/", "\n", "\u{01}", "\u{1F}", "\u{7F}", "é", "😀", " "]
        for length in 0..<20 {
            for place in 0..<max(length, 1) {
                for special in specials {
                    var characters = Array(repeating: Character("a"), count: length)
                    if length > 0 { characters[place] = special }
                    let text = String(characters)
                    for slashes in [false, true] {
                        let written = JSONValue.string(text).serialized(slashes ? [.escapeSlashes] : [])
                        #expect(written == Self.reference(text, slashes: slashes), "\(text.debugDescription) slashes \(slashes)")
                        #expect(try JSONValue(parsing: written) == .string(text))
                    }
                }
            }
        }
    }

    @Test func randomTextReadsBackAsItself() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab\"\\/\n\r\t\u{00}\u{08}\u{0C}\u{1F} ~é€😀{}[]:,")
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0..<64, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let written = JSONValue.string(text).serialized()
            #expect(written == Self.reference(text, slashes: false))
            #expect(try JSONValue(parsing: written) == .string(text))
        }
    }
}
