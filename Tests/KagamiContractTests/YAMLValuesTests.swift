import Foundation
import KagamiJSON
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

/// YAML read from libyaml's events (`YAMLDocument.values`) gives what reading it through
/// Yams's node tree gave: the same values (an integer stays an integer), the same positions,
/// the same error at the same place.
@Suite struct YAMLValuesTests {
    /// The outcome of one way of reading, in a form that tells every difference.
    static func outcome(_ read: () throws(OpenAPISourceError) -> (value: JSONValue, locator: SourceLocator)) -> String {
        do {
            let (value, locator) = try read()
            return describe(value) + "\n" + describe(locator.positions)
        } catch {
            return "error \(error.location.line):\(error.location.column): \(error.message)"
        }
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "b\(flag)"
        case .integer(let number): "i\(number)"
        case .number(let number): "n\(number)"
        case .string(let text): "s" + JSONValue.string(text).serialized()
        case .array(let items): "[" + items.map(describe).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { JSONValue.string($0.key).serialized() + ":" + describe($0.value) }.joined(separator: ",") + "}"
        }
    }

    static func describe(_ positions: JSONSourcePositions) -> String {
        "\(positions.offset)" + (positions.children.isEmpty ? "" : "(" + positions.children.map(describe).joined(separator: " ") + ")")
    }

    static func compare(_ text: String) -> String? {
        let lines = SourceLines(text: text)
        let fast = outcome { () throws(OpenAPISourceError) in try OpenAPISource.readYAML(text, lines: lines) }
        let nodes = outcome { () throws(OpenAPISourceError) in
            try OpenAPISource.readThroughNodes(text, lines: lines, limits: OpenAPISource.limits(for: text))
        }
        guard fast != nodes else { return nil }
        let same = zip(fast, nodes).prefix { $0 == $1 }.count
        return "\(text.debugDescription.prefix(2000))\nevents: …\(fast.dropFirst(max(0, same - 80)).prefix(300))\nnodes:  …\(nodes.dropFirst(max(0, same - 80)).prefix(300))"
    }

    static let cases = [
        "a: 1\nb: '1'\nc: \"1\"\nd: 1.0\ne: 1e3\nf: 0x1F\ng: 0o17\nh: 017\ni: 1_000\nj: +5\nk: -0\nl: 1:30\nm: .inf\nn: .NaN\no: 09\np: 0.5\n",
        "a: true\nb: True\nc: yes\nd: On\ne: off\nf: NO\ng: 'true'\nh: !!str true\ni: !!str 12\nj: ~\nk: null\nl: Null\nm: NULL\nn: nULL\no:\np: ''\n",
        "a: &x {b: 1, c: [1, 2]}\nd: *x\ne: [*x, *x]\nf: &y text\ng: *y\n",
        "a: 1\na: 2\n",
        "b: 1\na: 2\n'b': 3\na: 4\n",
        "1: a\n'1': b\n",
        "a: *missing\n",
        "---\na: 1\n---\nb: 2\n",
        "",
        "# only a comment\n",
        "---\n",
        "a: [1, 2\n",
        "a:\n  - b: 1\n    c: |\n      text\n      more\n  - >\n    folded\n    text\n",
        "? [a, b]\n: c\n",
        "a: {x: 1, x: 2}\n",
        "é: ü\nkey with spaces: value with: colon\n\"quoted\\tkey\": 2\n",
        "a: !!int 12\nb: !custom x\nc: !!float 1\n<<: {d: 1}\n",
        "- 1\n- [2, [3, [4]]]\n- {a: {b: {c: d}}}\n",
        "a: 'it''s'\nb: \"line\\nbreak\"\nc: plain text # comment\n",
        "a:\tb\n",
    ]

    @Test func handwrittenDocumentsReadAlike() {
        var differences: [String] = []
        for text in Self.cases {
            if let difference = Self.compare(text) { differences.append("\(text.debugDescription)\n\(difference)") }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n\n"))")
    }

    @Test func fixturesAndTheirMutationsReadAlike() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let fixtures = [
            "KagamiContractTests/Fixtures/petstore-3.0.yaml", "KagamiMockTests/Fixtures/pets.yaml",
            "KagamiMockTests/Fixtures/petstore.yaml", "KagamiContractCheckTests/Fixtures/notes.yaml",
        ].map { folder.appendingPathComponent($0) }
        var inputs: [[UInt8]] = []
        for fixture in fixtures {
            let text = try String(contentsOf: fixture, encoding: .utf8)
            inputs.append(Array(text.utf8))
            if let difference = Self.compare(text) { Issue.record("\(fixture.lastPathComponent)\n\(difference)") }
        }
        var generator = SeededGenerator(state: 0x9E37_79B9_7F4A_7C15)
        var differences: [String] = []
        for iteration in 0..<1500 {
            let text = String(decoding: BlueprintFuzzTests.mutate(inputs[iteration % inputs.count], using: &generator), as: UTF8.self)
            if let difference = Self.compare(text) { differences.append(difference) }
        }
        #expect(differences.isEmpty, "\(differences.count) mutated documents read differently; first:\n\(differences.first ?? "")")
    }
}
