import Foundation
import KagamiTesting
import KagamiDescription
import KagamiFlow
@testable import KagamiInfer
import KagamiJSON
import KagamiJSONSchema
import Testing

/// Seeded, bounded fuzzing of inference on traffic nobody would design: odd path segments,
/// member names YAML and MSON treat specially, mixed and deep values, broken bodies. Every
/// draft must read back without errors in both formats, and every JSON body must be valid
/// against the schema drafted for it.
@Suite struct InferFuzzTests {
    static let names = ["id", "name", "a b", "key: value", "#hash", "- dash", "`tick`", "true", "null", "123", "", "ünï", "x\ny", "{brace}", "[x]", "a\"q", "é", "password", "+ plus", "(p)", "*", "?", "@at", "%s", "a:b", "Content-Type"]
    static let segments = ["users", "42", "8f14e45f-ceea-467f-a0e6-0f6c2d8e1c2a", "a%20b", "ü", "x:y", "v1", "2026-11-24", "a@b.io", "c1a2b3d4e5", "%7Bid%7D", "-", "_", ".", "..", "0", "items", "usr_9xK2qLm4", "🙂"]

    static func value(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int.random(in: -1000...1000, using: &random))
        case 3: return .number(Double.random(in: -1e6...1e6, using: &random))
        case 4: return .string(["", "2026-11-24T10:00:00Z", "https://x.io/a", "a@b.io", "10.0.0.1", "plain", "line\nbreak", "\"q\"", "key: v", "- item", "#"].randomElement(using: &random)!)
        case 5: return .string(names.randomElement(using: &random)!)
        case 6: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(&random, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &random) { object[names.randomElement(using: &random)!] = value(&random, depth: depth + 1) }
            return .object(object)
        }
    }

    static func flows(seed: UInt64) -> [Flow] {
        var random = SeededGenerator(state: seed)
        return (0..<Int.random(in: 1...25, using: &random)).map { _ in
            let path = "/" + (0..<Int.random(in: 0...4, using: &random)).map { _ in segments.randomElement(using: &random)! }.joined(separator: "/")
            let query = Bool.random(using: &random) ? "?" + (0..<Int.random(in: 1...3, using: &random)).map { _ in "\(["q", "limit", "a b", "x%3Dy", "tag", "api_key"].randomElement(using: &random)!)=\(["1", "true", "x", "", "%ZZ", "2.5"].randomElement(using: &random)!)" }.joined(separator: "&") : ""
            let method = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"].randomElement(using: &random)!
            let status = [200, 201, 204, 301, 400, 404, 500, 599].randomElement(using: &random)!
            var body: String?
            var type = "application/json"
            switch Int.random(in: 0..<6, using: &random) {
            case 0: body = nil
            case 1: body = #"{"broken": "#
            case 2:
                body = "\u{0}\u{1}binary"
                type = "application/octet-stream"
            case 3:
                body = "a=1&b=%20x"
                type = "application/x-www-form-urlencoded"
            default: body = value(&random, depth: 0).serialized()
            }
            let requestBody = ["POST", "PUT", "PATCH"].contains(method) && Bool.random(using: &random) ? value(&random, depth: 0).serialized() : nil
            let headers: [(String, String)] = Bool.random(using: &random) ? [("X-Weird", ["a: b", "#x", "", "ü", "- y"].randomElement(using: &random)!), ("Authorization", "Bearer t")] : []
            return Traffic.flow(method, path + query, status: status, requestJSON: requestBody, responseBody: body, responseType: type, requestHeaders: headers, responseHeaders: headers)
        }
    }

    @Test func draftsOfOddTrafficReadBackAndDescribeItsBodies() throws {
        for seed in UInt64(1)...30 {
            let flows = Self.flows(seed: seed)
            let templates = PathGeneraliser().generalise(flows.map(\.request.path)).matches
            let draft = TrafficDraft(flows: flows)
            let openAPIText = OpenAPIDraftWriter.yaml(draft)
            let openAPI = DescriptionFile(text: openAPIText, format: .openAPI)
            #expect(openAPI.contract.errors.isEmpty, "seed \(seed): \(openAPI.diagnostics())\n\(openAPIText)")
            let blueprintText = BlueprintDraftWriter.text(draft)
            let blueprint = DescriptionFile(text: blueprintText, format: .apiBlueprint)
            #expect(blueprint.contract.errors.isEmpty, "seed \(seed): \(blueprint.diagnostics())\n\(blueprintText)")
            guard openAPI.contract.errors.isEmpty else { continue }
            #expect(openAPI.contract.actions.count == draft.operations.count, "seed \(seed)")

            // Each JSON response body is valid against the drafted schema of its operation and status.
            let actions = Dictionary(openAPI.contract.actions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for operation in draft.operations {
                guard let action = actions[operation.name] else {
                    Issue.record("seed \(seed): no action \(operation.name)")
                    continue
                }
                for flow in flows where flow.request.method == operation.method {
                    guard let response = flow.response, let value = try? JSONValue(parsing: response.body.data),
                          templates[flow.request.path]?.template == operation.template,
                          let documented = action.examples.flatMap(\.responses).first(where: { $0.status == response.status && $0.payload.mediaType == "application/json" }),
                          let schema = documented.payload.schema else { continue }
                    let compiled = try JSONSchema(compiling: schema)
                    #expect(compiled.isValid(value), "seed \(seed): \(value.serialized()) against \(schema.serialized())")
                }
            }
        }
    }
}
