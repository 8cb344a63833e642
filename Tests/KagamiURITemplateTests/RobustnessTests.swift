import KagamiTesting
import KagamiURITemplate
import Testing

/// Random and mutated templates and targets: nothing may crash, and errors must point inside
/// the template.
@Suite struct RobustnessTests {
    static let alphabet: [String] = [
        "{", "}", "{", "}", "+", "#", ".", "/", ";", "?", "&", ",", "*", ":", "=", "!", "@", "|",
        "%", "%2", "%41", "%zz", "a", "b", "x", "_", "1", "0", "9", "10000", " ", "'", "é", "😀",
        "\u{0}", "\u{7F}", "-", "~", "$", "(", ")", "[", "]", "\\", "^", "`", "\"", "<", ">",
    ]

    static let seeds = [
        "/users/{id}", "{+path}/here", "{/list*}{?keys*}", "/s{?q,lang}{&page}", "{;x,y,empty}",
        "X{.var:3}", "{#keys*}", "/a/{b}{.c}/d{/e,f}", "?q={q}&x=1", "{var:30}{+var:3}",
    ]

    static let variables: [String: URITemplate.Value] = [
        "a": .string("A/b c"), "b": .string(""), "x": .list(["1", "2"]), "_": .associative([.init("k", "v")]),
        "id": .string("42"), "list": .list(["red", "green"]), "keys": .associative([.init("semi", ";")]),
        "var": .string("value%20é"), "q": .string("a&b"), "path": .string("/foo/bar"), "e": .list([]),
    ]

    func checkPositions(_ error: URITemplateError, _ template: String) {
        #expect(error.position >= 1 && error.position <= template.count + 1, "\(error)")
        #expect(error.template == template)
    }

    func exercise(_ text: String, rng: inout SeededGenerator) {
        do {
            let template = try URITemplate(text)
            #expect(template.text == text)
            do {
                let expansion = try template.expand(Self.variables)
                _ = template.match(expansion)
            } catch {
                #expect(error.kind == .prefixOfCompositeValue, "\(error)")
                checkPositions(error, text)
            }
            let target = (0..<Int.random(in: 0...12, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng) ?? "" }.joined()
            _ = template.match(target)
            _ = template.specificity
            _ = template.pathTemplate.match(target)
        } catch {
            checkPositions(error, text)
        }
    }

    @Test func randomTemplates() {
        var rng = SeededGenerator(state: 6570)
        for _ in 0..<3000 {
            let length = Int.random(in: 0...16, using: &rng)
            let text = (0..<length).map { _ in Self.alphabet.randomElement(using: &rng) ?? "" }.joined()
            exercise(text, rng: &rng)
        }
    }

    @Test func mutatedTemplates() {
        var rng = SeededGenerator(state: 3986)
        for _ in 0..<3000 {
            var characters = Array(Self.seeds.randomElement(using: &rng) ?? "")
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let index = Int.random(in: 0...characters.count, using: &rng)
                let piece = Array(Self.alphabet.randomElement(using: &rng) ?? "")
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: characters.insert(contentsOf: piece, at: index)
                case 1: if index < characters.count { characters.remove(at: index) }
                default: if index < characters.count { characters.replaceSubrange(index...index, with: piece) }
                }
            }
            exercise(String(characters), rng: &rng)
        }
    }

    /// Operators that pct-encode everything but unreserved characters can be undone: any
    /// non-empty string expanded into these templates matches back to itself. (`{+x}` cannot:
    /// it leaves `?`, `/` and triplets as they are; `{.x}` leaves `.` as it is.)
    @Test func encodedExpansionsMatchBackForAnyString() throws {
        var rng = SeededGenerator(state: 1738)
        let templates = try ["/users/{id}/posts", "/a{/id}", "/m{;id}", "/s{?id}", "/s{?other,id}", "/s?x=1{&id}"]
            .map { try URITemplate($0) }
        let pieces = Self.alphabet + ["+", "%25", "%2F", "a b", "/", "&", "=", ";", "?", "#"]
        for _ in 0..<2000 {
            let value = (0..<Int.random(in: 1...8, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined()
            for template in templates {
                let expansion = try template.expand(["id": .string(value)])
                let match = template.match(expansion)
                #expect(match?.variables == ["id": .string(value)], "\(template) with \(value.debugDescription) → \(expansion)")
            }
        }
    }

    @Test func deeplyRepeatedTemplatesParseWithoutRecursion() throws {
        let text = String(repeating: "{a}/", count: 20_000)
        let template = try URITemplate(text)
        #expect(template.variables.count == 20_000)
        #expect(template.match(String(repeating: "x/", count: 20_000))?.variables["a"] == .string("x"))
    }
}
