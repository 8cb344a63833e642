import Foundation
import KagamiContract
import KagamiTesting
@testable import KagamiOpenAPI
import Testing

/// The paths read straight from the document's values give the contract that reading them
/// through OpenAPIKit's model gives, and what that reader doesn't read is left to OpenAPIKit.
@Suite struct OpenAPIValuesReaderTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func file(_ path: String) -> String {
        (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
    }

    /// A document of `gen_big_openapi.py` (the benchmark's generator).
    static func generated(paths: Int, version: String, format: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-values-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("big.\(format)")
        let generator = try ChildProcess(
            "/usr/bin/env", ["python3", root.appendingPathComponent("bench/descriptions/gen_big_openapi.py").path, output.path,
                             "--paths", String(paths), "--version", version],
            stdout: .null)
        _ = generator.waitUntilExit()
        return try String(contentsOf: output, encoding: .utf8)
    }

    /// Whether the values reader reads the document itself, or why not.
    static func refusal(_ text: String) -> ValuesReaderRefusal? {
        guard let document = try? OpenAPISource.readAsOpenAPI3(text) else { return nil }
        let (raw, locator) = (document.value, document.locator)
        let format: ContractFormat = (raw["openapi"]?.stringValue ?? "").hasPrefix("3.0") ? .openAPI30 : .openAPI31
        if case .failure(let refusal) = OpenAPIValuesReader.contract(from: raw, format: format, locator: locator, annotations: { [] }, progress: nil) {
            return refusal
        }
        return nil
    }

    static func expectSameBothWays(_ text: String, _ name: String, readFromValues: Bool?) {
        let fromValues = OpenAPIReader.parse(text, reading: .fromValues)
        let throughOpenAPIKit = OpenAPIReader.parse(text, reading: .throughOpenAPIKit)
        #expect(fromValues == throughOpenAPIKit, "\(name)")
        if fromValues != throughOpenAPIKit {
            for (a, b) in zip(fromValues.actions, throughOpenAPIKit.actions) where a != b {
                Issue.record("\(name): first differing action\n\(a)\n---\n\(b)")
                break
            }
            for (a, b) in zip(fromValues.dataStructures, throughOpenAPIKit.dataStructures) where a != b {
                Issue.record("\(name): first differing data structure\n\(a)\n---\n\(b)")
                break
            }
            if fromValues.annotations != throughOpenAPIKit.annotations {
                Issue.record("\(name): annotations\n\(fromValues.annotations)\n---\n\(throughOpenAPIKit.annotations)")
            }
        }
        if let readFromValues {
            let refusal = Self.refusal(text)
            #expect((refusal == nil) == readFromValues, "\(name): \(refusal.map(String.init(describing:)) ?? "read from the values")")
        }
    }

    @Test(arguments: ["3.0.3", "3.1.0"])
    func generatedDescriptionsAreReadFromTheValuesAlike(version: String) throws {
        for format in ["yaml", "json"] {
            let text = try Self.generated(paths: 30, version: version, format: format)
            #expect(!text.isEmpty)
            Self.expectSameBothWays(text, "generated \(version) \(format)", readFromValues: true)
        }
    }

    @Test func fixturesReadAlike() {
        let fixtures = [
            "Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml",
            "Tests/KagamiContractTests/Fixtures/notes-3.1.json",
            "Tests/KagamiMockTests/Fixtures/pets.yaml",
            "Tests/KagamiMockTests/Fixtures/petstore.yaml",
            "Tests/KagamiContractCheckTests/Fixtures/notes.yaml",
            "Examples/InProcessTests/Sources/NotesClient/openapi.json",
        ]
        for path in fixtures {
            let text = Self.file(path)
            #expect(!text.isEmpty, "\(path)")
            Self.expectSameBothWays(text, path, readFromValues: true)
        }
        Self.expectSameBothWays(OpenAPIValidationTests.document, "validation rules", readFromValues: false)
        // Swagger 2.0, in its 3.0 form: query arrays with their style read from the values too.
        Self.expectSameBothWays(Self.file("Tests/KagamiContractCheckTests/Fixtures/notes-2.0.yaml"), "notes-2.0.yaml", readFromValues: true)
        // (Its Pet writes `type: object` beside `allOf`, which only OpenAPIKit drops: see docs/CONTRACT.md.)
        let petstore = Self.file("Tests/KagamiContractTests/Fixtures/petstore-2.0.json")
        #expect(Self.refusal(petstore) == nil, "\(Self.refusal(petstore).map(String.init(describing:)) ?? "")")
        Self.expectSameBothWays(Self.file("Tests/KagamiContractTests/Fixtures/uploads-2.0.yaml"), "uploads-2.0.yaml", readFromValues: nil)
        // A style its location doesn't have is OpenAPIKit's to word.
        let matrixQuery = Self.file("Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml")
            .replacingOccurrences(of: "in: query\n", with: "in: query\n          style: matrix\n")
        Self.expectSameBothWays(matrixQuery, "a matrix query parameter", readFromValues: false)
    }

    /// What OpenAPIKit refuses or warns about is left to it, so it is worded as before.
    @Test func documentsWithProblemsAreLeftToOpenAPIKit() throws {
        let text = try Self.generated(paths: 3, version: "3.0.3", format: "yaml")
        let variants: [(String, String, String)] = [
            ("an unknown member", "operationId: listItems0", "operationId: listItems0\n      bogus: 1"),
            ("an unknown security scheme", "operationId: listItems0", "operationId: listItems0\n      security: [{missing: []}]"),
            ("an operationId twice", "operationId: createItem0", "operationId: listItems0"),
            ("a path parameter not required", "in: path\n      required: true", "in: path\n      required: false"),
            ("a parameter without a schema", "- name: cursor\n        in: query\n        schema:\n          type: string", "- name: cursor\n        in: query"),
            ("a callback", "operationId: listItems0", "operationId: listItems0\n      callbacks: {done: {'{$request.body#/url}': {post: {responses: {'200': {description: ok}}}}}}"),
            ("a reference to another file", ##""$ref": "#/components/schemas/Error""##, ##""$ref": "other.yaml#/Error""##),
        ]
        for (name, target, replacement) in variants {
            let changed = text.replacingOccurrences(of: target, with: replacement)
            #expect(changed != text, "\(name): the generator's text changed")
            Self.expectSameBothWays(changed, name, readFromValues: false)
        }
    }
}
