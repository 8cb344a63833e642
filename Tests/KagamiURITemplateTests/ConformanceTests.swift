import Foundation
import KagamiJSON
import Testing
@testable import KagamiURITemplate

/// Runs the uritemplate-test suite (github.com/uri-templates/uritemplate-test) from
/// `$KAGAMI_CONFORMANCE_DIR/uritemplate-test`.
@Suite struct ConformanceTests {
    /// Pass counts that must not drop (they only rise).
    static let floors = [
        "spec-examples": 64,
        "spec-examples-by-section": 117,
        "negative-tests": 36,
    ]

    struct Case {
        let file: String
        let group: String
        let template: String
        let variables: [String: URITemplate.Value]
        /// Acceptable expansions; empty when the template must fail to parse or expand.
        let expected: [String]
    }

    static func suiteDirectory(filePath: String = #filePath) -> URL? {
        if let dir = ProcessInfo.processInfo.environment["KAGAMI_CONFORMANCE_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir).appendingPathComponent("uritemplate-test")
        }
        var url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent("shared/conformance/uritemplate-test")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            url.deleteLastPathComponent()
        }
        return nil
    }

    static func cases(in file: String) throws -> [Case] {
        let directory = try #require(suiteDirectory(), "uritemplate-test not found; set KAGAMI_CONFORMANCE_DIR")
        let data = try Data(contentsOf: directory.appendingPathComponent("\(file).json"))
        let document = try JSONValue(parsing: data)
        var cases: [Case] = []
        for (group, content) in try #require(document.objectValue) {
            let variables = URITemplate.variables(fromJSON: content["variables"]?.objectValue ?? [:])
            for testCase in content["testcases"]?.arrayValue ?? [] {
                let template = try #require(testCase[0]?.stringValue)
                let expected: [String] = switch testCase[1] {
                case .string(let s): [s]
                case .array(let options): options.compactMap(\.stringValue)
                default: []
                }
                cases.append(Case(file: file, group: group, template: template, variables: variables, expected: expected))
            }
        }
        return cases
    }

    /// `nil` when the case passes, else what went wrong.
    static func failure(of testCase: Case) -> String? {
        let expansion: String
        do {
            expansion = try URITemplate(testCase.template).expand(testCase.variables)
        } catch {
            return testCase.expected.isEmpty ? nil : "error \(error)"
        }
        if testCase.expected.isEmpty { return "expanded to \(expansion) but should fail" }
        return testCase.expected.contains(expansion) ? nil : "got \(expansion), want \(testCase.expected)"
    }

    @Test(arguments: ["spec-examples", "spec-examples-by-section", "negative-tests"])
    func suiteFile(_ file: String) throws {
        let cases = try Self.cases(in: file)
        var passed = 0
        var failures: [String] = []
        for testCase in cases {
            if let failure = Self.failure(of: testCase) {
                failures.append("  \(file) / \(testCase.group) / \(testCase.template): \(failure)")
            } else {
                passed += 1
            }
        }
        print("uritemplate \(file): \(passed) passed, \(failures.count) failed")
        for line in failures { print(line) }
        let floor = try #require(Self.floors[file])
        #expect(passed >= floor, "\(file): \(passed) passed, below the floor of \(floor)")
    }

    /// Expansions of one unmodified variable holding a non-empty string carry the whole value,
    /// so matching the expansion must give the value back. `{&x}` is left out: without a
    /// `?` before it the expansion is no request target.
    @Test func matchingAnExpansionGivesTheVariablesBack() throws {
        var checked = 0
        for file in ["spec-examples", "spec-examples-by-section"] {
            for testCase in try Self.cases(in: file) {
                guard let template = try? URITemplate(testCase.template),
                      template.variables.count == 1, let variable = template.variables.first,
                      variable.modifier == .none,
                      case .string(let value)? = testCase.variables[variable.name], !value.isEmpty,
                      !template.components.contains(where: {
                          if case .expression(let e) = $0 { e.operator == .queryContinuation } else { false }
                      })
                else { continue }
                let expansion = try template.expand(testCase.variables)
                let match = template.match(expansion)
                #expect(match?.variables == [variable.name: .string(value)],
                        "\(testCase.template) → \(expansion) matched \(String(describing: match))")
                checked += 1
            }
        }
        #expect(checked >= 29, "only \(checked) round-trip cases")
    }
}
