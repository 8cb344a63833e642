import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import Testing

/// The MSON specification's examples, one fixture each in Fixtures/mson-spec: `<name>.apib`
/// declares a named type `Fixture`, `<name>.json` says what must come of it:
/// - `example`: the rendered example value; `exampleKeys` (at `examplePath`): its keys in order
/// - `accepts` / `rejects`: values the generated schema must accept / refuse
/// - `errors`: whether the description has errors (default false)
/// - `warnings`: texts that must be among the warnings (default: no warnings at all); an entry
///   `{"text": …, "line": N}` must be found on that line of the `.apib`
/// - `errorsAt`: `{"text": …, "line": N}` entries that must be among the errors
@Suite struct MSONSpecificationTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/mson-spec")

    static func problems(in name: String) throws -> [String] {
        let text = try String(contentsOf: folder.appendingPathComponent(name + ".apib"), encoding: .utf8)
        let expected = try JSONValue(parsing: String(contentsOf: folder.appendingPathComponent(name + ".json"), encoding: .utf8))
        let contract = BlueprintParser.parse(text)
        var problems: [String] = []
        let wantsErrors = expected["errors"]?.boolValue ?? false
        if contract.errors.isEmpty == wantsErrors {
            problems.append("errors: expected \(wantsErrors), got \(contract.errors.map(\.message))")
        }
        let warnings = contract.warnings.map(\.message)
        /// Each wanted annotation (a text, or a text and a line) among `found`.
        func check(_ wanted: [JSONValue], in found: [Annotation], kind: String) {
            let placed = found.map { "\($0.sourceLocation?.line ?? 0): \($0.message)" }
            for entry in wanted {
                let text = entry.stringValue ?? entry["text"]?.stringValue ?? ""
                let line = entry["line"]?.intValue
                let matched = found.contains { annotation in
                    annotation.message.contains(text) && (line == nil || annotation.sourceLocation?.line == line)
                }
                if !matched { problems.append("missing \(kind) \"\(text)\"\(line.map { " on line \($0)" } ?? "") among \(placed)") }
            }
        }
        if let wanted = expected["warnings"]?.arrayValue {
            check(wanted, in: contract.warnings, kind: "warning")
        } else if !warnings.isEmpty, !wantsErrors {
            problems.append("unexpected warnings \(warnings)")
        }
        check(expected["errorsAt"]?.arrayValue ?? [], in: contract.errors, kind: "error")
        guard !wantsErrors else { return problems }
        let typeName = expected["type"]?.stringValue ?? "Fixture"
        guard let structure = contract.dataStructures.first(where: { $0.name == typeName }) else {
            return problems + ["no data structure \(typeName)"]
        }
        if let example = expected["example"] {
            if !(structure.example?.isJSONEqual(to: example) ?? false) {
                problems.append("example: expected \(example.serialized()), got \(structure.example?.serialized() ?? "nil")")
            }
        }
        if let keys = expected["exampleKeys"]?.arrayValue?.compactMap(\.stringValue), !keys.isEmpty {
            var value = structure.example
            for key in expected["examplePath"]?.arrayValue?.compactMap(\.stringValue) ?? [] { value = value?[key] }
            let found = value?.objectValue.map { Array($0.keys) } ?? []
            if found != keys { problems.append("example keys: expected \(keys), got \(found)") }
        }
        guard let schemaValue = structure.schema else { return problems + ["no schema"] }
        let schema: JSONSchema
        do {
            schema = try JSONSchema(compiling: schemaValue)
        } catch {
            return problems + ["schema does not compile: \(error) in \(schemaValue.serialized())"]
        }
        for value in expected["accepts"]?.arrayValue ?? [] where !schema.isValid(value) {
            problems.append("schema \(schemaValue.serialized()) refuses \(value.serialized())")
        }
        for value in expected["rejects"]?.arrayValue ?? [] where schema.isValid(value) {
            problems.append("schema \(schemaValue.serialized()) accepts \(value.serialized())")
        }
        return problems
    }

    @Test func specificationExamples() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)
            .filter { $0.hasSuffix(".apib") }.map { String($0.dropLast(5)) }.sorted()
        var failures: [String] = []
        for name in names {
            let problems = try Self.problems(in: name)
            if !problems.isEmpty { failures.append("\(name): " + problems.joined(separator: "; ")) }
        }
        print("mson specification fixtures: \(names.count - failures.count) passed, \(failures.count) failed")
        for failure in failures { print("  FAIL \(failure)") }
        #expect(names.count >= 96)
        #expect(failures.isEmpty)
    }
}
