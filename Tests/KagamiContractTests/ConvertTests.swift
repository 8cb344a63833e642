import ArgumentParser
import Foundation
import KagamiBlueprint
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiJSON
@testable import KagamiOpenAPI
import KagamiTesting
import Testing

/// `kagami convert`: every shared Blueprint becomes OpenAPI that openapi-spec-validator (PyPI)
/// accepts and that reads back with the same operations; OpenAPI becomes a Blueprint that reads
/// back without errors.
@Suite struct ConvertTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Blueprint of the shared examples and drafter fixtures that reads without errors.
    static func blueprints() -> [(name: String, text: String)] {
        var files = ConformanceSuite.files(in: "api-blueprint/examples", withExtension: "md")
        for category in ["api", "mson", "render", "schema", "circular", "extend", "oneof", "parse-result", "syntax"] {
            files += ConformanceSuite.files(in: "drafter/\(category)", withExtension: "apib")
        }
        return files.map { ($0.deletingLastPathComponent().lastPathComponent + "/" + $0.lastPathComponent, ConformanceSuite.text($0)) }
            .filter { BlueprintParser.parse($0.text).errors.isEmpty }
    }

    @Test func everyBlueprintConvertsToValidOpenAPI() async throws {
        let folder = try TemporaryFolder.make("convert")
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = Self.blueprints()
        #expect(inputs.count > 100)
        var paths: [String] = []
        var mismatches: [String] = []
        for (index, input) in inputs.enumerated() {
            let contract = BlueprintParser.parse(input.text)
            var notes: [ConversionNote] = []
            let document = OpenAPIWriter.document(for: contract, serverURL: "http://127.0.0.1:3000", notes: &notes)
            let path = folder.appendingPathComponent("\(index).json").path
            try Data(document.serialized(.prettyPrinted).utf8).write(to: URL(fileURLWithPath: path))
            paths.append(path)
            // Read back, the same operations (those OpenAPI can hold) with no errors.
            let back = OpenAPIReader.parse(document.serialized())
            if !back.errors.isEmpty {
                mismatches.append("\(input.name): \(back.errors.map(\.message))")
            } else if back.actions.count + Self.keptActions(in: document) != contract.actions.count {
                mismatches.append("\(input.name): \(contract.actions.count) actions became \(back.actions.count)")
            }
            let dangling = notes.filter { $0.message.contains("does not hold") }
            if !dangling.isEmpty { mismatches.append("\(input.name): \(dangling.map(\.message))") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        let python = Self.root.appendingPathComponent(".venv-tests/bin/python").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "openapi-spec-validator is not installed: scripts/test.sh creates .venv-tests with it")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("check_openapi.py").path
        let result = try await CommandLineClient(python).run([script] + paths)
        let failures = result.stdoutText.split(separator: "\n").map { line -> String in
            let entry = try? JSONValue(parsing: String(line))
            let index = entry?["path"]?.stringValue.flatMap { Int(URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent) }
            return "\(index.map { inputs[$0].name } ?? "?"): \(entry?["error"]?.stringValue ?? String(line))"
        }
        print("convert to openapi: \(inputs.count - failures.count) of \(inputs.count) valid for openapi-spec-validator")
        for failure in failures.prefix(20) { print("  FAIL \(failure)") }
        #expect(failures.isEmpty)
        #expect(result.status == 0 || !failures.isEmpty, "\(result.stderr)")
    }

    /// Actions kept under `x-kagami-actions` (methods OpenAPI lacks, a second one per path).
    static func keptActions(in document: JSONValue) -> Int {
        (document["paths"]?.objectValue ?? [:]).reduce(0) { $0 + ($1.value[OpenAPIWriter.keptActions]?.arrayValue?.count ?? 0) }
    }

    /// Every shared Blueprint to OpenAPI, back to a Blueprint and to OpenAPI again: what
    /// survives, counted (printed), and what must: every action, every named type, every
    /// response, no reference to nothing.
    @Test func everySharedDescriptionRoundTrips() throws {
        struct Tally {
            var before = 0
            var after = 0
            var text: String { before == after ? "\(before) kept" : "\(before) → \(after)" }
        }
        var actions = Tally(), namedTypes = Tally(), responses = Tally(), requests = Tally(), parameters = Tally()
        var schemas = Tally(), bodies = Tally(), identicalTypes = Tally()
        var failures: [String] = []
        var noteCount = 0
        var changedTypes: [String] = []
        let inputs = Self.blueprints()
        for input in inputs {
            let source = BlueprintParser.parse(input.text)
            var notes: [ConversionNote] = []
            let first = OpenAPIWriter.document(for: source, serverURL: "http://127.0.0.1:3000", notes: &notes)
            let read = OpenAPIReader.parse(first.serialized())
            let blueprint = BlueprintWriter.document(for: read, notes: &notes)
            let back = BlueprintParser.parse(blueprint)
            let again = OpenAPIWriter.document(for: back, serverURL: "http://127.0.0.1:3000", notes: &notes)
            noteCount += notes.count
            if !back.errors.isEmpty { failures.append("\(input.name): \(back.errors.map(\.message).prefix(3))") }
            let dangling = OpenAPIReader.unresolvedReferences(in: first) + OpenAPIReader.unresolvedReferences(in: again)
            if !dangling.isEmpty { failures.append("\(input.name): references to nothing \(dangling.map(\.reference))") }
            let kept = Self.keptActions(in: first)
            func operations(_ contract: APIContract) -> [String] { contract.actions.map { "\($0.method) \(PathTemplate($0.uriTemplate).path)" } }
            actions.before += source.actions.count
            actions.after += operations(back).count + kept
            if operations(back).count + kept != source.actions.count { failures.append("\(input.name): actions \(operations(source)) became \(operations(back))") }
            let names = Set(source.dataStructures.filter { $0.schema != nil }.map { OpenAPIWriter.componentName($0.name) })
            let namesBack = Set(again["components"]?["schemas"]?.objectValue?.keys.map { $0 } ?? [])
            namedTypes.before += names.count
            namedTypes.after += names.intersection(namesBack).count
            for name in names {
                guard let before = first["components"]?["schemas"]?[name], let after = again["components"]?["schemas"]?[name] else { continue }
                identicalTypes.before += 1
                if before.isJSONEqual(to: after) {
                    identicalTypes.after += 1
                } else if changedTypes.count < 8 {
                    changedTypes.append("\(input.name) \(name): \(before.serialized()) → \(after.serialized())")
                }
            }
            if !names.isSubset(of: namesBack) { failures.append("\(input.name): named types \(names.subtracting(namesBack).sorted()) lost") }
            func count(_ contract: APIContract, _ part: (TransactionExample) -> Int) -> Int { contract.actions.flatMap(\.examples).reduce(0) { $0 + part($1) } }
            let writtenActions = Set(operations(read))
            let comparable = APIContract(format: source.format, groups: [ResourceGroup(name: "", resources: [Resource(
                name: "", uriTemplate: "", actions: source.actions.filter { writtenActions.contains("\($0.method) \(PathTemplate($0.uriTemplate).path)") })])])
            responses.before += Set(comparable.actions.flatMap { action in action.examples.flatMap(\.responses).map { "\(action.method) \(action.uriTemplate) \($0.status)" } }).count
            responses.after += Set(back.actions.flatMap { action in action.examples.flatMap(\.responses).map { "\(action.method) \(action.uriTemplate) \($0.status)" } }).count
            requests.before += count(comparable) { $0.requests.filter { $0.payload.body != nil || $0.payload.schema != nil }.isEmpty ? 0 : 1 }
            requests.after += count(back) { $0.requests.filter { $0.payload.body != nil || $0.payload.schema != nil }.isEmpty ? 0 : 1 }
            parameters.before += comparable.actions.reduce(0) { $0 + Set($1.parameters.map(\.name)).count }
            parameters.after += back.actions.reduce(0) { $0 + Set($1.parameters.map(\.name)).count }
            func payloads(_ contract: APIContract) -> [MessagePayload] {
                contract.actions.flatMap(\.examples).flatMap { $0.requests.map(\.payload) + $0.responses.map(\.payload) }
            }
            schemas.before += Set(payloads(comparable).compactMap(\.schema)).count
            schemas.after += Set(payloads(back).compactMap(\.schema)).count
            bodies.before += Set(payloads(comparable).compactMap(\.body)).count
            bodies.after += Set(payloads(back).compactMap(\.body)).count
        }
        print("""
            round trip apib → openapi → apib → openapi over \(inputs.count) shared descriptions: \
            actions \(actions.text) (methods and duplicates OpenAPI lacks kept under x-kagami-actions), \
            named types \(namedTypes.text) (\(identicalTypes.after) of \(identicalTypes.before) with the very same schema), responses (action, status) \(responses.text), \
            transactions with a request body \(requests.text), parameters \(parameters.text), \
            distinct schemas \(schemas.text), distinct bodies \(bodies.text), \(noteCount) notes
            """)
        for failure in failures.prefix(20) { print("  LOST \(failure)") }
        for changed in changedTypes { print("  CHANGED \(changed.prefix(400))") }
        #expect(failures.isEmpty, "\(failures.count) descriptions lost something")
    }

    @Test func serverIsTheMockWithTheBasePath() throws {
        let text = "FORMAT: 1A\nHOST: https://api.example.com/v1/\n\n# Notes\n\n## Note [/notes/{id}{?fields}]\n\n### Get [GET]\n+ Response 200 (application/json)\n\n        {\"id\": 1}\n"
        var notes: [ConversionNote] = []
        let document = OpenAPIWriter.document(for: BlueprintParser.parse(text), serverURL: "http://127.0.0.1:4010", notes: &notes)
        #expect(document["servers"]?[0]?["url"] == "http://127.0.0.1:4010/v1")
        let operation = try #require(document["paths"]?["/notes/{id}"]?["get"])
        #expect(operation["operationId"] == "get")
        // An action without a name is named by its method and path, the method in lower case.
        let unnamed = OpenAPIWriter.document(for: BlueprintParser.parse("FORMAT: 1A\n\n# A\n\n# GET /\n+ Response 204\n"), serverURL: "http://127.0.0.1:4010", notes: &notes)
        #expect(unnamed["paths"]?["/"]?["get"]?["operationId"] == "get", "\(unnamed.serialized())")
        let names = operation["parameters"]?.arrayValue?.compactMap { "\($0["in"]?.stringValue ?? ""):\($0["name"]?.stringValue ?? "")" }
        #expect(names == ["path:id", "query:fields"])
        #expect(operation["responses"]?["200"]?["content"]?["application/json"]?["example"] == ["id": 1])
    }

    /// Examples/InProcessTests generates its client from the converted notes.apib: the
    /// committed openapi.json is what `kagami convert` writes today.
    @Test func typedClientExampleIsCurrent() throws {
        let folder = Self.root.appendingPathComponent("Examples/InProcessTests")
        let source = try DescriptionFile(path: folder.appendingPathComponent("notes.apib").path)
        #expect(source.contract.annotations.isEmpty, "\(source.diagnostics())")
        var notes: [ConversionNote] = []
        let document = OpenAPIWriter.document(for: source.contract, serverURL: "http://127.0.0.1:3000", notes: &notes)
        let committed = try JSONValue(parsing: String(contentsOf: folder.appendingPathComponent("Sources/NotesClient/openapi.json"), encoding: .utf8))
        #expect(document.isJSONEqual(to: committed), "run: kagami convert Examples/InProcessTests/notes.apib --to openapi -o Examples/InProcessTests/Sources/NotesClient/openapi.json")
        // Enumerations carry their type, so the generator makes them Swift enums.
        let status = document["components"]?["schemas"]?["NewNote"]?["properties"]?["status"]
        #expect(status?["type"] == "string")
    }

    @Test func openAPIConvertsToABlueprintThatReadsBack() throws {
        let url = Self.root.appendingPathComponent("Tests/KagamiMockTests/Fixtures/petstore.yaml")
        let source = try DescriptionFile(path: url.path)
        var notes: [ConversionNote] = []
        let blueprint = BlueprintWriter.document(for: source.contract, notes: &notes)
        let back = BlueprintParser.parse(blueprint)
        #expect(back.errors.isEmpty, "\(back.errors.map(\.message))\n\(blueprint)")
        #expect(back.actions.map { "\($0.method) \($0.uriTemplate)" } == source.contract.actions.map { "\($0.method) \($0.uriTemplate)" })
        // `default` responses have no Blueprint form and are named as left out.
        #expect(notes.contains { $0.message.contains("default response") })
    }
}

/// The command itself: files in, a file out, notes on standard error.
@Suite struct ConvertCommandTests {
    @Test func writesTheFileAskedFor() throws {
        let input = try DescriptionCommandsTests.write(
            "FORMAT: 1A\nHOST: https://api.example.com/v2\n\n# T\n\n## N [/n/{id}]\n\n### Get [GET]\n+ Response 200 (application/json)\n\n        {\"id\": 1}\n",
            named: "api.apib")
        let output = URL(fileURLWithPath: input).deletingLastPathComponent().appendingPathComponent("openapi.json").path
        try ConvertCommand.parse([input, "--to", "openapi", "-o", output, "--server", "http://127.0.0.1:4010"]).run()
        let document = try JSONValue(parsing: String(contentsOfFile: output, encoding: .utf8))
        #expect(document["openapi"] == "3.1.0")
        #expect(document["servers"]?[0]?["url"] == "http://127.0.0.1:4010/v2")
        let back = URL(fileURLWithPath: input).deletingLastPathComponent().appendingPathComponent("back.apib").path
        try ConvertCommand.parse([output, "--to", "apib", "-o", back]).run()
        let blueprint = try DescriptionFile(path: back)
        #expect(blueprint.contract.errors.isEmpty)
        #expect(blueprint.contract.actions.map { "\($0.method) \($0.uriTemplate)" } == ["GET /n/{id}"])
    }

    @Test func refusesADescriptionWithErrors() throws {
        let input = try DescriptionCommandsTests.write("# T\n\n# GET /a\n+ Response 200 (application/json)\n    + Attributes (Nope)\n", named: "api.apib")
        #expect(throws: ExitCode(1)) { try ConvertCommand.parse([input, "--to", "openapi"]).run() }
    }
}
