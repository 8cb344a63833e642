import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiJSON
import Testing

/// drafter's own fixtures: for each `<name>.apib`, what our contract holds must agree with
/// drafter's API Elements result `<name>.json` (see DescriptionFacts for what is compared).
@Suite struct DrafterFixturesTests {
    /// Passes per category never go below these (raise them as the parser improves).
    static let floors: [String: Int] = [
        "api": 27, "circular": 9, "extend": 2, "mson": 48, "oneof": 6, "parse-result": 6,
        "render": 30, "schema": 55, "syntax": 3,
    ]

    @Test func contractAgreesWithDrafter() throws {
        let root = ConformanceSuite.directory.appendingPathComponent("drafter")
        let categories = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { !$0.hasPrefix("_") && !$0.hasPrefix(".") && !$0.hasPrefix("LICENSE") }.sorted()
        var totalPassed = 0
        var total = 0
        for category in categories {
            var passed = 0
            var failures: [String] = []
            for input in ConformanceSuite.files(in: "drafter/\(category)", withExtension: "apib") {
                let expectedURL = input.deletingPathExtension().appendingPathExtension("json")
                guard FileManager.default.fileExists(atPath: expectedURL.path) else { continue }
                let expected = APIElementsAdapter.facts(try JSONValue(parsing: ConformanceSuite.text(expectedURL)))
                let actual = DescriptionFacts(BlueprintParser.parse(ConformanceSuite.text(input)))
                if let difference = DescriptionFacts.difference(expected: expected, actual: actual) {
                    failures.append("\(category)/\(input.lastPathComponent): \(difference)")
                } else {
                    passed += 1
                }
            }
            print("apib drafter \(category): \(passed) passed, \(failures.count) failed")
            for failure in failures { print("  FAIL \(failure)") }
            totalPassed += passed
            total += passed + failures.count
            #expect(passed >= Self.floors[category, default: 0], "drafter \(category) fell below its floor")
        }
        print("apib drafter total: \(totalPassed) passed, \(total - totalPassed) failed")
        #expect(total > 0)
    }
}
