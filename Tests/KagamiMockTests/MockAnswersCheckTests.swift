// The mock's answers pass the contract check of the description it serves: every documented
// status of every operation asked for with curl (`Prefer: code=N`), the exchanges as the mock
// records them checked with `ContractCheck` — bodies, and the headers responses declare.
import Foundation
import KagamiContract
import KagamiContractCheck
import KagamiDescription
import KagamiFlow
import KagamiJSON
@testable import KagamiMock
import KagamiTesting
import KagamiURITemplate
import Testing

@Suite struct MockAnswersCheckTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every OpenAPI description the tests share.
    static let descriptions = [
        "Tests/KagamiMockTests/Fixtures/petstore.yaml",
        "Tests/KagamiMockTests/Fixtures/pets.yaml",
        "Tests/KagamiContractTests/Fixtures/petstore-3.0.yaml",
        "Tests/KagamiContractTests/Fixtures/notes-3.1.json",
        "Tests/KagamiContractCheckTests/Fixtures/notes.yaml",
        "Tests/KagamiContractCheckTests/Fixtures/headers.yaml",
        "Tests/KagamiContractCheckTests/Fixtures/notes-2.0.yaml",
        "Tests/KagamiContractTests/Fixtures/petstore-2.0.json",
        "Examples/InProcessTests/Sources/NotesClient/openapi.json",
    ]

    /// A parameter's value as a client would send it: its example, else one written from its
    /// schema (a path segment or a header curl sends is not empty: "" becomes a letter).
    static func value(of parameter: Parameter) -> String {
        let text = parameter.example ?? parameter.schema.map { SimpleStyle.text(of: JSONSchemaExample.example(for: $0)) } ?? "1"
        return text.isEmpty ? "a" : text
    }

    /// The curl arguments of a valid request to `action` asking for `status`.
    static func request(_ action: Action, status: Int, base: String) throws -> [String] {
        var variables: [String: URITemplate.Value] = [:]
        var arguments = ["-X", action.method, "-H", "Prefer: code=\(status)"]
        for parameter in action.parameters {
            switch parameter.location {
            case .path: variables[URITemplate.variableName(parameter.name)] = .string(value(of: parameter))
            case .query where parameter.required: variables[URITemplate.variableName(parameter.name)] = .string(value(of: parameter))
            case .header where parameter.required: arguments += ["-H", "\(parameter.name): \(value(of: parameter))"]
            case .cookie where parameter.required: arguments += ["-b", "\(parameter.name)=\(value(of: parameter))"]
            default: break
            }
        }
        // A path variable the description doesn't declare as a parameter still takes a segment.
        for variable in action.uriTemplate.split(separator: "{").dropFirst().compactMap({ $0.split(separator: "}").first })
        where !variable.hasPrefix("?") && variables[String(variable)] == nil {
            variables[String(variable)] = .string("1")
        }
        if let request = action.examples.first?.requests.first, let body = request.payload.exampleBody {
            arguments += ["-H", "Content-Type: \(request.payload.mediaType ?? "application/json")", "--data-binary", body]
        }
        return arguments + [base + (try URITemplate(action.uriTemplate).expand(variables))]
    }

    @Test(arguments: descriptions) func theMocksAnswersPassTheContractCheck(_ description: String) async throws {
        let path = Self.root.appendingPathComponent(description).path
        let sink = CollectingSink()
        let server = try await MockServer.start(path: path, configuration: .init(host: "127.0.0.1", port: 0, reloadInterval: nil), sink: sink)
        defer { Task { try await server.stop() } }
        let check = try ContractCheck(file: DescriptionFile(path: path), baseURL: server.url)
        var asked: [String: Int] = [:]
        var declaredHeaders = 0
        for route in check.routes.inDocumentOrder {
            let responses = route.action.examples.flatMap(\.responses)
            let statuses = responses.map(\.status).filter { $0 != 0 }.reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            declaredHeaders += responses.reduce(0) { $0 + $1.declaredHeaders.count }
            for status in statuses {
                let arguments = try Self.request(route.action, status: status, base: server.url)
                let answer = try await CommandLineClient.curl.run(["-s", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}"] + arguments)
                #expect(answer.stdoutText == String(status), "\(description) \(route.method) \(route.action.uriTemplate) asked for \(status)")
                asked["\(route.method) \(arguments.last ?? "") \(status)"] = status
            }
        }
        #expect(!asked.isEmpty)
        let flows = try #require(try await eventually { sink.flows.count >= asked.count ? sink.flows : nil })
        #expect(flows.count == asked.count)
        print("\(description): \(flows.count) answers checked, \(declaredHeaders) declared headers")
        for flow in flows {
            let result = try #require(check.check(flow), "\(flow.request.method) \(flow.request.target) is in scope")
            #expect(result.violations.isEmpty, "\(description) \(flow.request.method) \(flow.request.target) \(flow.response?.status ?? 0): \(result.violations.map { "\($0.side) \($0.place) \($0.message)" })")
        }
        if description.hasSuffix("headers.yaml") {
            #expect(declaredHeaders == 9)
            // The headers the responses declare came with the answers, required ones included.
            let created = try #require(flows.first { $0.request.method == "POST" && $0.response?.status == 201 })
            #expect(created.response?.headers["Location"] == "/v1/items/7")
            let deleted = try #require(flows.first { $0.request.method == "DELETE" && $0.response?.status == 204 })
            #expect(deleted.response?.headers["X-Deleted-At"] != nil)
            let tooMany = try #require(flows.first { $0.response?.status == 429 })
            #expect(tooMany.response?.headers["Retry-After"] == "1")
        }
    }
}
