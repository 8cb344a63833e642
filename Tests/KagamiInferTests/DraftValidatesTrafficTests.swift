import Foundation
@testable import KagamiCLI
import KagamiFlow
import KagamiHAR
@testable import KagamiInfer
import KagamiJSON
import Testing

/// A drafted description accepts all of the traffic it was drawn from: `kagami validate` exits
/// 0 even when warnings and undocumented exchanges fail the run.
@Suite struct DraftValidatesTrafficTests {
    static let strict = ["--fail-on", "warnings", "--fail-on", "undocumented", "--format", "json"]

    @Test(arguments: ["openapi", "apib"])
    func draftValidatesItsOwnSession(format: String) async throws {
        let folder = try Traffic.folder()
        let session = try await Traffic.session(Traffic.notes, in: folder)
        let draft = folder.appendingPathComponent(format == "openapi" ? "notes.yaml" : "notes.apib").path
        try await InferCommand.parse(["--session", session, "--format", format, "-o", draft]).run()
        let report = folder.appendingPathComponent("report.json").path
        try await ValidateCommand.parse(["--contract", draft, "--session", session, "--output", report] + Self.strict).run()
        let text = try String(contentsOfFile: report, encoding: .utf8)
        #expect(text.contains("\"errors\" : 0") || text.contains("\"errors\": 0"), "\(text)")
    }

    @Test(arguments: ["openapi", "apib"])
    func draftOfOddTrafficValidatesItsOwnHAR(format: String) async throws {
        // Mixed types, nulls, optional members, several statuses, query and header variations.
        for seed in UInt64(1)...20 {
            let flows = InferFuzzTests.flows(seed: seed).filter { flow in
                // Broken JSON is what the draft lists as skipped, and what the check must report.
                guard let response = flow.response, response.body.size > 0, response.headers["Content-Type"] == "application/json" else { return true }
                return (try? JSONSerialization.jsonObject(with: response.body.data, options: [.fragmentsAllowed])) != nil
            }
            guard !flows.isEmpty else { continue }
            let folder = try Traffic.folder()
            let har = folder.appendingPathComponent("traffic.har").path
            try Data(HARExport.archive(flows, creatorVersion: "test").serialized().utf8).write(to: URL(fileURLWithPath: har))
            let draft = folder.appendingPathComponent(format == "openapi" ? "draft.yaml" : "draft.apib").path
            try await InferCommand.parse(["--har", har, "--format", format, "-o", draft]).run()
            let report = folder.appendingPathComponent("report.json").path
            do {
                try await ValidateCommand.parse(["--contract", draft, "--har", har, "--output", report] + Self.strict).run()
            } catch {
                let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
                // The contract model has no "request body optional" (OpenAPI requestBody.required:
                // false), so the check wants a body in every POST/PUT/PATCH of an operation that
                // shows one. The draft marks such bodies optional; only that finding is allowed.
                let violations = (try? JSONValue(parsing: text))?["violations"]?.arrayValue ?? []
                let optionalBodies = Set(TrafficDraft(flows: flows).operations.filter { !$0.requestBodies.isEmpty && $0.requestsWithBody < $0.count }.map(\.name))
                let unexpected = violations.filter { violation in
                    !(violation["message"] == "a request body is required" && optionalBodies.contains(violation["operation"]?["name"]?.stringValue ?? ""))
                }
                if !unexpected.isEmpty || violations.isEmpty {
                    let description = (try? String(contentsOfFile: draft, encoding: .utf8)) ?? ""
                    Issue.record("seed \(seed): kagami validate failed (\(error)):\n\(text.prefix(3000))\n\(description.prefix(3000))")
                }
            }
        }
    }
}
