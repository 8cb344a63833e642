// Runs JSON-Schema-Test-Suite (draft 4 and 2020-12) from KAGAMI_CONFORMANCE_DIR.
import Foundation
import KagamiJSON
import Testing
@testable import KagamiJSONSchema

struct JSONSchemaConformanceTests {
    /// Floors: the pass counts may only rise.
    static let draft4Floor = 618
    static let draft2020Floor = 1299

    @Test func draft4() throws {
        let outcome = try run(folder: "draft4", draft: .draft4, assertsFormat: false)
        outcome.print("draft4")
        #expect(outcome.passed >= Self.draft4Floor, "draft4 passes dropped below the floor")
    }

    @Test func draft2020_12() throws {
        let outcome = try run(folder: "draft2020-12", draft: .draft2020_12, assertsFormat: false)
        outcome.print("draft2020-12")
        #expect(outcome.passed >= Self.draft2020Floor, "draft2020-12 passes dropped below the floor")
    }

    /// Floors for the upstream suite's `optional/` folders (format assertion on for
    /// `optional/format`), counted over the formats Kagami asserts. The copy in
    /// shared/conformance has no `optional/` folders: the test is skipped there, and runs when
    /// KAGAMI_CONFORMANCE_DIR points at a full copy of the suite (docs/CONFORMANCE.md).
    static let optionalFloors: [(folder: String, draft: JSONSchema.Draft, subfolder: String, assertsFormat: Bool, floor: Int)] = [
        ("draft4", .draft4, "optional/format", true, 219),
        ("draft4", .draft4, "optional", false, 99),
        ("draft2020-12", .draft2020_12, "optional/format", true, 764),
        ("draft2020-12", .draft2020_12, "optional", false, 161),
    ]

    static var optionalSuitePresent: Bool {
        guard let root = try? ConformanceSuite.root() else { return false }
        return FileManager.default.fileExists(atPath: root.appendingPathComponent("tests/draft4/optional").path)
    }

    @Test(.enabled(if: optionalSuitePresent, "the suite copy has no optional/ folders"))
    func optionalTestsStayAboveTheirFloors() throws {
        for entry in Self.optionalFloors {
            let outcome = try run(folder: "\(entry.folder)/\(entry.subfolder)", draft: entry.draft, assertsFormat: entry.assertsFormat)
            outcome.print("\(entry.folder) \(entry.subfolder)")
            #expect(outcome.passed >= entry.floor, "\(entry.folder) \(entry.subfolder): \(outcome.passed) passed, the floor is \(entry.floor)")
        }
    }

    struct Outcome {
        var passed = 0
        var failed = 0
        var failures: [(file: String, text: String)] = []

        func print(_ label: String) {
            Swift.print("json-schema \(label): \(passed) passed, \(failed) failed")
            for failure in failures { Swift.print("  FAIL \(failure.file) / \(failure.text)") }
        }
    }

    func run(folder: String, draft: JSONSchema.Draft, assertsFormat: Bool) throws -> Outcome {
        let root = try ConformanceSuite.root()
        let registry = try ConformanceSuite.remotes()
        let directory = root.appendingPathComponent("tests/\(folder)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        var outcome = Outcome()
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            guard case .array(let cases) = try JSONValue(parsing: text) else { continue }
            for testCase in cases {
                let description = testCase["description"]?.stringValue ?? "?"
                guard let schemaValue = testCase["schema"], case .array(let tests)? = testCase["tests"] else { continue }
                let options = JSONSchema.Options(draft: draft, assertsFormat: assertsFormat, resolver: registry)
                let schema: JSONSchema
                do {
                    schema = try JSONSchema(compiling: schemaValue, options: options)
                } catch {
                    outcome.failed += tests.count
                    outcome.failures.append((file, "\(description): does not compile: \(error)"))
                    continue
                }
                for test in tests {
                    guard let data = test["data"], let expected = test["valid"]?.boolValue else { continue }
                    let result = schema.validate(data)
                    let quick = schema.isValid(data)
                    if result.isValid == expected && quick == expected && result.errors.isEmpty == expected {
                        outcome.passed += 1
                    } else {
                        outcome.failed += 1
                        outcome.failures.append((file, "\(description) / \(test["description"]?.stringValue ?? "?"): expected \(expected ? "valid" : "invalid"), validate=\(result.isValid) isValid=\(quick) errors=\(result.errors.count)"))
                    }
                }
            }
        }
        return outcome
    }
}

enum ConformanceSuite {
    static func root() throws -> URL {
        if let configured = ProcessInfo.processInfo.environment["KAGAMI_CONFORMANCE_DIR"], !configured.isEmpty {
            return URL(fileURLWithPath: configured).appendingPathComponent("json-schema-test-suite")
        }
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("shared/conformance")
            if FileManager.default.fileExists(atPath: candidate.path) {
                return candidate.appendingPathComponent("json-schema-test-suite")
            }
            directory.deleteLastPathComponent()
        }
        throw SuiteMissing()
    }

    struct SuiteMissing: Error, CustomStringConvertible {
        var description: String { "no shared/conformance found; set KAGAMI_CONFORMANCE_DIR" }
    }

    /// The suite's remotes, served as the README says: at http://localhost:1234/ by path.
    static func remotes() throws -> JSONSchemaRegistry {
        let base = try root().appendingPathComponent("remotes")
        var registry = JSONSchemaRegistry()
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return registry }
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".json") else { continue }
            let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            registry.register(try JSONValue(parsing: text), at: "http://localhost:1234/" + relative)
        }
        return registry
    }
}
