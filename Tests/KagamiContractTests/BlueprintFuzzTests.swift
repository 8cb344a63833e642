import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiTesting
import Testing

/// Mutated Blueprints never crash the parser, and every problem it reports has a position
/// inside the document. Inputs that once crashed it live in Fuzz/ and are replayed.
@Suite struct BlueprintFuzzTests {
    static let fragments: [[UInt8]] = [
        "+ ", "- ", "* ", "#", "## ", " ", "    ", "\t", "(", ")", "[", "]", "`", "*", ":", "\n", "{", "}",
        "+ Include A", "+ One Of", "+ Attributes (A)", " (array[", "fixed", ", required)", "+ Response 200",
        "+ Request", "+ Body\n\n", "        ", "# Data Structures\n", "## A (B)\n", "[A][]", "\u{0}", "\u{FEFF}", "é",
    ].map { Array($0.utf8) }

    static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0:
                let end = min(bytes.count, position + Int.random(in: 1...40, using: &generator))
                bytes.removeSubrange(position..<end)
            case 1:
                bytes.insert(contentsOf: fragments[Int.random(in: 0..<fragments.count, using: &generator)], at: position)
            case 2:
                let end = min(bytes.count, position + Int.random(in: 1...80, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: min(bytes.count, end))
            case 3:
                if !bytes.isEmpty { bytes[position] = UInt8.random(in: 0...255, using: &generator) }
            default:
                // Re-indent the line around `position`.
                var start = position
                while start > 0, bytes[start - 1] != 0x0A { start -= 1 }
                bytes.insert(contentsOf: Array(repeating: 0x20, count: Int.random(in: 1...6, using: &generator)), at: start)
            }
        }
        return bytes
    }

    static func checkPositions(_ contract: APIContract, text: String) -> String? {
        // Line breaks are LF, CRLF or a lone CR (as in CommonMark).
        let bytes = Array(text.utf8)
        var lines = 2
        for (index, byte) in bytes.enumerated() where byte == 0x0A || (byte == 0x0D && (index + 1 == bytes.count || bytes[index + 1] != 0x0A)) {
            lines += 1
        }
        for annotation in contract.annotations {
            guard let location = annotation.sourceLocation else { return "no position: \(annotation.message)" }
            if location.line < 1 || location.line > lines || location.column < 1 {
                return "position \(location.line):\(location.column) outside the document: \(annotation.message)"
            }
        }
        return nil
    }

    @Test func mutatedDocumentsNeverCrashAndErrorsHavePositions() {
        var seeds: [URL] = ConformanceSuite.files(in: "api-blueprint/examples", withExtension: "md")
        for category in ["api", "mson", "render", "schema", "circular"] {
            seeds += ConformanceSuite.files(in: "drafter/\(category)", withExtension: "apib")
        }
        // The MSON specification's examples (type sections, generics, mixins, One Of…).
        seeds += ((try? FileManager.default.contentsOfDirectory(at: MSONSpecificationTests.folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "apib" }.sorted { $0.path < $1.path }
        let inputs = seeds.map { Array(ConformanceSuite.text($0).utf8) }
        #expect(!inputs.isEmpty)
        // Longer runs: KAGAMI_FUZZ_ITERATIONS and KAGAMI_FUZZ_SEED (the default run stays fixed).
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["KAGAMI_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x9E37_79B9_7F4A_7C15
        var generator = SeededGenerator(state: seed)
        var problems: [String] = []
        let iterations = environment["KAGAMI_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 3000
        for iteration in 0..<iterations where !inputs.isEmpty {
            let seed = inputs[iteration % inputs.count]
            let text = String(decoding: Self.mutate(seed, using: &generator), as: UTF8.self)
            // KAGAMI_FUZZ_TRACE=FILE keeps the input being parsed there, so a crash leaves it behind.
            if let trace = environment["KAGAMI_FUZZ_TRACE"] {
                try? text.write(toFile: trace, atomically: false, encoding: .utf8)
            }
            let contract = BlueprintParser.parse(text)
            if let problem = Self.checkPositions(contract, text: text) {
                problems.append("iteration \(iteration) (\(seeds[iteration % inputs.count].lastPathComponent)): \(problem)")
            }
        }
        print("apib fuzz: \(iterations - problems.count) passed, \(problems.count) failed")
        for problem in problems.prefix(10) { print("  FAIL \(problem)") }
        #expect(problems.isEmpty)
    }

    @Test func deepInheritanceChainsAreCutWithAnError() throws {
        var text = "# API\n\n# GET /\n+ Response 200 (application/json)\n    + Attributes (T300)\n\n# Data Structures\n\n## T0 (object)\n+ a: 1\n\n"
        for level in 1...300 { text += "## T\(level) (T\(level - 1))\n+ f\(level): x\n\n" }
        let contract = BlueprintParser.parse(text)
        let error = try #require(contract.errors.first { $0.message.hasPrefix("named types nested deeper than") })
        #expect(error.sourceLocation != nil)
        // The shallow ones still render completely.
        let t3 = try #require(contract.dataStructures.first { $0.name == "T3" })
        #expect(t3.example == ["a": "1", "f1": "x", "f2": "x", "f3": "x"])
    }

    /// Each level uses the one below twice, so T20 would be a million elements.
    @Test func multiplyingNamedTypesAreCutWithAnError() throws {
        for form in ["+ x (T{})\n+ y (T{})", "+ Include T{}\n+ Include T{}"] {
            var text = "# API\n\n# Data Structures\n\n## T0 (object)\n+ a: 1\n\n"
            for level in 1...20 {
                text += "## T\(level) (object)\n" + form.replacingOccurrences(of: "{}", with: String(level - 1)) + "\n\n"
            }
            let contract = BlueprintParser.parse(text)
            #expect(contract.errors.contains { $0.message.hasPrefix("data structure too large to render") }, "\(form)")
            let t2 = try #require(contract.dataStructures.first { $0.name == "T2" })
            #expect(t2.example != nil)
        }
    }

    @Test func savedCrashInputsParseWithPositions() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".apib") }.sorted()
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let contract = BlueprintParser.parse(text)
            #expect(Self.checkPositions(contract, text: text) == nil, "\(file)")
            if file.contains("include") {
                // Mixins that include themselves are reported, not followed forever.
                #expect(contract.errors.contains { $0.message.contains("circular") || $0.message.contains("nested deeper") }, "\(file)")
            }
        }
    }
}
