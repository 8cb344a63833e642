// Every action of every official API Blueprint example answers its documented default.
import Foundation
import KagamiContract
import KagamiContractCheck
import KagamiDescription
import KagamiJSON
@testable import KagamiMock
import Testing

@Suite struct BlueprintExamplesTests {
    /// Actions answering exactly their default; only rises.
    static let floor = 46

    @Test func everyActionAnswersItsDocumentedDefault() async throws {
        let directory = MockClient.conformanceDirectory.appendingPathComponent("api-blueprint/examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".md") && $0 != "README.md" }.sorted()
        #expect(files.count >= 17)
        var passed = 0
        var failures: [String] = []
        for name in files {
            let path = directory.appendingPathComponent(name).path
            // "14. JSON Schema.md" has a note body missing a comma: `kagami lint` reports it, and
            // the mock serves that example as written (and the rest of the file as usual).
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let server = try await MockServer.start(text: text, format: .apiBlueprint, configuration: .init(reloadInterval: nil))
            for action in server.contract.actions {
                let label = "\(name): \(action.method) \(action.uriTemplate)"
                let request = action.examples.first?.requests.first
                let expected = action.defaultResponse
                let answer = try await MockClient.curl(
                    action.method, server.url + DocsPage.exampleTarget(for: action),
                    headers: (request?.payload.headers ?? []).map { "\($0.name): \($0.value)" },
                    body: request?.payload.body)
                let status = expected.map { $0.status } ?? 204
                let body = expected?.payload.body ?? ""
                let sameBody: Bool
                if let expectedJSON = try? JSONValue(parsing: body), let json = answer.json {
                    sameBody = expectedJSON.isJSONEqual(to: json)
                } else {
                    sameBody = answer.body.trimmingCharacters(in: .whitespacesAndNewlines) == body.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                let sameType = expected?.payload.mediaType.map { MediaType.essence($0) == answer.header("Content-Type").map(MediaType.essence) } ?? true
                if answer.status == status && sameBody && sameType {
                    passed += 1
                } else {
                    failures.append("\(label): expected \(status), got \(answer.status) \(answer.body.prefix(200))")
                }
            }
            try await server.stop()
        }
        print("mock api-blueprint examples: \(passed) passed, \(failures.count) failed")
        for failure in failures { print("  FAIL \(failure)") }
        #expect(failures.isEmpty)
        #expect(passed >= Self.floor)
    }
}
