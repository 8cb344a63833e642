import Foundation
import KagamiJSON
@testable import KagamiOpenAPI
import KagamiTesting
@testable import KagamiYAML
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

    /// The document read in `parts` parts (`YAMLDocumentParts`), or nil when it is read whole
    /// instead; the difference from reading it whole when there is one.
    static func compareParts(_ text: String, parts: Int?) -> (readInParts: Bool, difference: String?) {
        let lines = SourceLines(text: text)
        let limits = OpenAPISource.limits(for: text)
        let offset: @Sendable (Int, Int, Int) -> Int = { lines.offset(ofLine: $0, column: $1, near: $2) }
        var text = text
        return text.withUTF8 { bytes in
            guard let (value, positions) = YAMLDocumentParts.read(bytes, limits: limits, offset: offset, parts: parts) else {
                return (false, nil)
            }
            let inParts = describe(value) + "\n" + describe(positions)
            var reader = YAMLValueReader(limits: limits, offset: offset)
            let whole: String
            switch try? reader.read(bytes) {
            case .document(let value, let positions)?: whole = describe(value) + "\n" + describe(positions)
            default: whole = "not a document read whole"
            }
            guard inParts != whole else { return (true, nil) }
            let same = zip(inParts, whole).prefix { $0 == $1 }.count
            return (true, "\(String(decoding: bytes, as: UTF8.self).debugDescription.prefix(2000))\nparts: …\(inParts.dropFirst(max(0, same - 80)).prefix(300))\nwhole: …\(whole.dropFirst(max(0, same - 80)).prefix(300))")
        }
    }

    /// Documents cut where a cut could go wrong: every one is read as it is read whole, or
    /// read whole.
    static let partsCases = [
        // A quoted scalar and a flow collection running over lines that look like keys.
        "paths:\n  /a:\n    x: 1\n  /b:\n    d: \"text\n  /c: still text\"\n  /d:\n    y: 2\nz: 3\n",
        "paths:\n  /a:\n    x: 1\n  /b: {p: 1,\n  /c: 2}\n  /d:\n    y: 2\n",
        "a: 'x\nb: y'\nc: 1\n",
        // A block scalar, comments and blank lines across the cuts.
        "paths:\n  /a: |\n    text\n\n    more\n  # note\n  /b: >\n    folded\n\n  /c: 1\n# end\nz: 2\n",
        // Anchors: used in their own part, and in another one.
        "paths:\n  /a: &x {k: 1}\n  /b: *x\n  /c: 1\n  /d: *x\nz: *x\n",
        // A key repeated within the root, and across parts of a member's mapping.
        "a:\n  x: 1\n  y: 2\n  x: 3\nb: 1\na: 2\n",
        "paths:\n  /a: 1\n  /b: 2\n  /a: 3\n  /c: 4\n",
        // A root member whose value is not a block mapping in column 2.
        "a:\n   x: 1\n   y: 2\nb: [1,\n  c: 2]\n",
        "a: text\n  more: text\n  again: 1\n",
        "a:\n- x\n- y\nb:\n  c: 1\n  d: 2\n",
        // Line breaks other than a line feed, a directive, document markers, a root sequence.
        "a:\n  x: 1\r\n  y: 2\r\n  z: 3\r\n",
        "a:\n  x: 1\r  y: 2\n  z: 3\n",
        "%YAML 1.2\n---\na:\n  x: 1\n  y: 2\n",
        "a:\n  x: 1\n  y: 2\n...\n",
        "- a\n- b:\n  c: 1\n",
        // Content in column 1, a tab, errors in one part.
        "a:\n  x: 1\n y: 2\n  z: 3\n",
        "a:\n  x: 1\n\ty: 2\n  z: 3\n",
        "a:\n  x: 1\n  y: [2\n  z: 3\n",
        "a:\n  x: 1\n  y: *nowhere\n  z: 3\n",
    ]

    @Test func documentsCutIntoPartsReadAsWhole() throws {
        var differences: [String] = []
        var readInParts = 0
        for text in Self.partsCases {
            for parts in [2, 3, 8] {
                let (inParts, difference) = Self.compareParts(text, parts: parts)
                if inParts { readInParts += 1 }
                if let difference { differences.append(difference) }
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n\n"))")
        #expect(readInParts >= 10)
    }

    @Test func fixturesAndTheirMutationsReadInPartsAsWhole() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let fixtures = [
            "KagamiContractTests/Fixtures/petstore-3.0.yaml", "KagamiMockTests/Fixtures/pets.yaml",
            "KagamiMockTests/Fixtures/petstore.yaml", "KagamiContractCheckTests/Fixtures/notes.yaml",
        ].map { folder.appendingPathComponent($0) }
        var inputs: [[UInt8]] = []
        for fixture in fixtures {
            let text = try String(contentsOf: fixture, encoding: .utf8)
            inputs.append(Array(text.utf8))
            let (inParts, difference) = Self.compareParts(text, parts: 6)
            #expect(inParts, "\(fixture.lastPathComponent) is not read in parts")
            if let difference { Issue.record("\(fixture.lastPathComponent)\n\(difference)") }
        }
        let generated = try OpenAPIValuesReaderTests.generated(paths: 300, version: "3.0.3", format: "yaml")
        let (inParts, difference) = Self.compareParts(generated, parts: 8)
        #expect(inParts && difference == nil, "\(difference ?? "the generated document is not read in parts")")

        var generator = SeededGenerator(state: 0x5EED_CAFE_F00D_1234)
        var differences: [String] = []
        var readInParts = 0
        for iteration in 0..<1500 {
            let text = String(decoding: BlueprintFuzzTests.mutate(inputs[iteration % inputs.count], using: &generator), as: UTF8.self)
            let (inParts, difference) = Self.compareParts(text, parts: 2 + iteration % 7)
            if inParts { readInParts += 1 }
            if let difference { differences.append(difference) }
        }
        #expect(differences.isEmpty, "\(differences.count) mutated documents read in parts differently; first:\n\(differences.first ?? "")")
        #expect(readInParts > 200, "only \(readInParts) mutated documents read in parts")
    }

    /// A description past `YAMLDocumentParts.smallest` is read in parts on a machine of more
    /// than one core, as it is read whole.
    @Test func largeDescriptionIsReadInParts() throws {
        let text = try OpenAPIValuesReaderTests.generated(paths: 1500, version: "3.1.0", format: "yaml")
        #expect(text.utf8.count > YAMLDocumentParts.smallest)
        let (inParts, difference) = Self.compareParts(text, parts: nil)
        #expect(inParts == (ProcessInfo.processInfo.activeProcessorCount > 1))
        #expect(difference == nil, "\(difference ?? "")")
    }
}
