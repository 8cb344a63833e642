import ArgumentParser
import Foundation
@testable import KagamiCLI
import KagamiContract
import KagamiDescription
import KagamiFlow
import KagamiHAR
@testable import KagamiInfer
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing

/// Exchanges built by hand, as the proxy would record them.
enum Traffic {
    static func flow(
        _ method: String, _ target: String, status: Int = 200, requestJSON: String? = nil, responseBody: String? = nil,
        responseType: String = "application/json", requestHeaders: [(String, String)] = [], responseHeaders: [(String, String)] = [],
        host: String = "127.0.0.1", port: Int = 5000
    ) -> Flow {
        var request = FlowRequest(method: method, scheme: "http", host: host, port: port, target: target, headers: HeaderFields([("Host", "\(host):\(port)")] + requestHeaders))
        if let requestJSON {
            request.headers.add("Content-Type", "application/json")
            request.body = FlowBody(data: Data(requestJSON.utf8))
        }
        var response = FlowResponse(status: status, headers: HeaderFields([("Date", "Tue, 24 Nov 2026 10:00:00 GMT"), ("Server", "test")] + responseHeaders))
        if let responseBody {
            response.headers.add("Content-Type", responseType)
            response.body = FlowBody(data: Data(responseBody.utf8))
        }
        return Flow(mode: .forward, request: request, response: response, timings: FlowTimings(start: Date(timeIntervalSince1970: 1_800_000_000)))
    }

    /// A small notes API: list with paging, one note by id, create, delete, a 404.
    static var notes: [Flow] {
        var flows: [Flow] = []
        for id in [3, 17, 42, 108] {
            flows.append(flow("GET", "/api/v1/notes/\(id)", responseBody: #"{"id": \#(id), "title": "note \#(id)", "createdAt": "2026-11-2\#(id % 10)T10:00:00Z", "tags": ["a"], "archived": \#(id == 42 ? "null" : "false")}"#,
                              requestHeaders: [("Authorization", "Bearer s3cr3t-token"), ("X-Client-Version", "2.4.\(id % 3)"), ("Accept", "application/json")],
                              responseHeaders: [("X-Request-Id", "req-\(id)"), ("Cache-Control", "no-cache")]))
        }
        flows.append(flow("GET", "/api/v1/notes/999", status: 404, responseBody: #"{"error": "not found"}"#, requestHeaders: [("Authorization", "Bearer s3cr3t-token"), ("X-Client-Version", "2.4.0")]))
        flows.append(flow("GET", "/api/v1/notes?limit=10&offset=0", responseBody: #"[{"id": 3, "title": "t"}]"#))
        flows.append(flow("GET", "/api/v1/notes?limit=5", responseBody: "[]"))
        flows.append(flow("POST", "/api/v1/notes", status: 201, requestJSON: #"{"title": "new", "password": "hunter2"}"#, responseBody: #"{"id": 200, "title": "new"}"#, responseHeaders: [("Location", "/api/v1/notes/200")]))
        flows.append(flow("POST", "/api/v1/notes", status: 201, requestJSON: #"{"title": "other", "body": "text"}"#, responseBody: #"{"id": 201, "title": "other"}"#, responseHeaders: [("Location", "/api/v1/notes/201")]))
        flows.append(flow("DELETE", "/api/v1/notes/17", status: 204))
        return flows
    }

    static func folder() throws -> URL {
        let folder = try TemporaryFolder.make("infer")
        return folder
    }

    static func session(_ flows: [Flow], in folder: URL) async throws -> String {
        let path = folder.appendingPathComponent("traffic.sqlite").path
        let store = try SQLiteFlowStore(path: path)
        for flow in flows { store.record(flow) }
        try await store.flush()
        return path
    }
}

@Suite struct InferCommandTests {
    @Test func openAPIDraftLintsCleanAndReadsBack() async throws {
        let folder = try Traffic.folder()
        let session = try await Traffic.session(Traffic.notes, in: folder)
        let output = folder.appendingPathComponent("notes.yaml").path
        try await InferCommand.parse(["--session", session, "-o", output]).run()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let file = try DescriptionFile(path: output)
        #expect(file.diagnostics() == [], "\(text)")
        try LintCommand.parse([output]).run()
        #expect(file.contract.format == .openAPI31)
        let operations = Set(file.contract.actions.map { "\($0.method) \($0.uriTemplate)" })
        #expect(operations == ["GET /api/v1/notes/{noteId}", "DELETE /api/v1/notes/{noteId}", "GET /api/v1/notes{?limit,offset}", "POST /api/v1/notes"])
        #expect(file.contract.servers.map(\.url) == ["http://127.0.0.1:5000"])

        let get = try #require(file.contract.actions.first { $0.method == "GET" && $0.uriTemplate == "/api/v1/notes/{noteId}" })
        #expect(get.examples.flatMap(\.responses).map(\.status).sorted() == [200, 404])
        let ok = try #require(get.examples.flatMap(\.responses).first { $0.status == 200 })
        let schema = try #require(ok.payload.schema)
        #expect(schema["required"] == ["id", "title", "createdAt", "tags", "archived"])
        #expect(schema["properties"]?["createdAt"]?["format"] == "date-time")
        #expect(schema["properties"]?["archived"]?["type"] == ["boolean", "null"])
        #expect(ok.payload.header("X-Request-Id") != nil)
        #expect(ok.payload.header("Cache-Control") == nil)
        #expect(get.parameters.first { $0.name == "noteId" }?.schema?["type"] == "integer")
        #expect(get.parameters.first { $0.name == "X-Client-Version" }?.required == true)
        #expect(get.parameters.contains { $0.name == "Accept" || $0.name == "Authorization" } == false)

        let list = try #require(file.contract.actions.first { $0.uriTemplate.hasPrefix("/api/v1/notes{") })
        #expect(list.parameters.first { $0.name == "limit" }?.required == true)
        #expect(list.parameters.first { $0.name == "offset" }?.required == false)

        // Secrets never reach the description.
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("hunter2"))
        #expect(text.contains("bearerAuth"))
    }

    @Test func blueprintDraftLintsCleanAndReadsBack() async throws {
        let folder = try Traffic.folder()
        let session = try await Traffic.session(Traffic.notes, in: folder)
        let output = folder.appendingPathComponent("notes.apib").path
        try await InferCommand.parse(["--session", session, "--format", "apib", "-o", output]).run()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let file = try DescriptionFile(path: output)
        #expect(file.contract.errors.isEmpty, "\(file.diagnostics())\n\(text)")
        #expect(file.contract.warnings.isEmpty, "\(file.diagnostics())\n\(text)")
        #expect(file.contract.format == .apiBlueprint)
        let operations = Set(file.contract.actions.map { "\($0.method) \($0.uriTemplate)" })
        #expect(operations == ["GET /api/v1/notes/{noteId}", "DELETE /api/v1/notes/{noteId}", "GET /api/v1/notes{?limit,offset}", "POST /api/v1/notes"])
        let get = try #require(file.contract.actions.first { $0.method == "GET" && $0.uriTemplate == "/api/v1/notes/{noteId}" })
        let ok = try #require(get.examples.flatMap(\.responses).first { $0.status == 200 })
        #expect(ok.payload.schema?["required"] == ["id", "title", "createdAt", "tags", "archived"])
        #expect(ok.payload.bodyJSON?["id"] == 3)
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("hunter2"))
    }

    @Test func harInputAndHostFilter() async throws {
        let folder = try Traffic.folder()
        let other = Traffic.flow("GET", "/elsewhere/1", responseBody: "{}", host: "127.0.0.2", port: 6000)
        let archive = HARExport.archive(Traffic.notes + [other], creatorVersion: "test")
        let har = folder.appendingPathComponent("traffic.har").path
        try Data(archive.serialized().utf8).write(to: URL(fileURLWithPath: har))
        let output = folder.appendingPathComponent("only.yaml").path
        try await InferCommand.parse(["--har", har, "--host", "127.0.0.2:6000", "-o", output]).run()
        let file = try DescriptionFile(path: output)
        #expect(file.contract.actions.map { "\($0.method) \($0.uriTemplate)" } == ["GET /elsewhere/{elsewhereId}"])
        #expect(file.contract.servers.map(\.url) == ["http://127.0.0.2:6000"])
    }

    @Test func pathHintsOverrideAndReinferFromTheSameSession() async throws {
        let folder = try Traffic.folder()
        let flows = [
            Traffic.flow("GET", "/repos/apple/swift", responseBody: "{}"),
            Traffic.flow("GET", "/repos/swiftlang/swift-nio", responseBody: "{}"),
        ]
        let session = try await Traffic.session(flows, in: folder)
        let plain = folder.appendingPathComponent("plain.yaml").path
        try await InferCommand.parse(["--session", session, "-o", plain]).run()
        #expect(try DescriptionFile(path: plain).contract.actions.count == 2)
        let hinted = folder.appendingPathComponent("hinted.yaml").path
        try await InferCommand.parse(["--session", session, "--path", "/repos/{owner}/{repo}", "-o", hinted]).run()
        #expect(try DescriptionFile(path: hinted).contract.actions.map(\.uriTemplate) == ["/repos/{owner}/{repo}"])
        await #expect(throws: ValidationError.self) { try await InferCommand.parse(["--session", session, "--path", "repos/{owner}"]).run() }
    }

    @Test func badInputStillGivesADescriptionAndSaysWhatWasSkipped() async throws {
        var flows = Traffic.notes
        flows.append(Traffic.flow("GET", "/api/v1/page", responseBody: "<html><body>hi</body></html>", responseType: "text/html"))
        flows.append(Traffic.flow("POST", "/api/v1/notes", status: 201, requestJSON: #"{"title": "#, responseBody: #"{"id": 7"#))
        var image = Traffic.flow("GET", "/api/v1/logo", responseType: "image/png")
        image.response?.headers.add("Content-Type", "image/png")
        image.response?.body = FlowBody(data: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0xFE]))
        flows.append(image)
        var huge = Traffic.flow("GET", "/api/v1/export", responseBody: "[" + String(repeating: "1,", count: 40) + "1]")
        huge.response?.body.size = 50_000_000
        huge.response?.body.isTruncated = true
        flows.append(huge)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        for index in 0..<2500 {
            flows.append(Traffic.flow("GET", "/" + String([letters[index % 26], letters[(index / 26) % 26], letters[(index / 676) % 26], "q"]), responseBody: "{}"))
        }
        // Many broken bodies, each broken differently: still one line for the reason.
        for index in 0..<50 {
            flows.append(Traffic.flow("GET", "/api/v1/notes/\(index + 1000)", responseBody: String(repeating: "[", count: index % 7 + 1) + "x"))
        }
        let draft = TrafficDraft(flows: flows, options: .init(maximumTemplates: 200))
        let skipped = draft.skipped.joined(separator: "\n")
        #expect(draft.skipped.filter { $0.contains("response bodies labelled application/json that are not valid JSON") }.count == 1, "\(skipped)")
        #expect(draft.skipped.count <= 8, "\(skipped)")
        #expect(skipped.contains("beyond the cap of 200 distinct paths"))
        #expect(skipped.contains("not valid JSON"))
        #expect(skipped.contains("binary response bodies"))
        #expect(skipped.contains("capture limit"))
        #expect(Set(draft.operations.map(\.template)).count <= 200)

        let folder = try Traffic.folder()
        let session = try await Traffic.session(flows, in: folder)
        for format in ["openapi", "apib"] {
            let output = folder.appendingPathComponent("bad.\(format == "openapi" ? "yaml" : "apib")").path
            try await InferCommand.parse(["--session", session, "--format", format, "--max-paths", "200", "-o", output]).run()
            let file = try DescriptionFile(path: output)
            #expect(file.contract.errors.isEmpty, "\(file.diagnostics())")
            let page = file.contract.actions.first { $0.uriTemplate == "/api/v1/page" }
            #expect(page?.examples.flatMap(\.responses).first?.payload.mediaType == "text/html")
            #expect(file.contract.actions.contains { $0.uriTemplate == "/api/v1/logo" })
        }
    }

    @Test func aSessionIsReadPageByPageAndEveryExchangeCounts() async throws {
        let flows = (0..<1203).map { Traffic.flow("GET", "/items/\($0 + 1)", responseBody: #"{"id": \#($0 + 1)}"#) }
        let folder = try Traffic.folder()
        let session = try await Traffic.session(flows, in: folder)
        let output = folder.appendingPathComponent("items.yaml").path
        try await InferCommand.parse(["--session", session, "-o", output]).run()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.contains("from 1203 recorded exchanges"))
        #expect(text.contains("description: OK (seen 1203 times)"))
        #expect(try DescriptionFile(path: output).contract.actions.map(\.uriTemplate) == ["/items/{itemId}"])
    }

    @Test func noInputOrBothInputsAreRefused() async throws {
        #expect(throws: (any Error).self) { try InferCommand.parse([]) }
        #expect(throws: (any Error).self) { try InferCommand.parse(["--session", "a", "--har", "b"]) }
        await #expect(throws: ExitCode(2)) { try await InferCommand.parse(["--har", "/nonexistent/traffic.har"]).run() }
        let folder = try Traffic.folder()
        let broken = folder.appendingPathComponent("broken.har").path
        try Data("{\"log\": ".utf8).write(to: URL(fileURLWithPath: broken))
        await #expect(throws: ExitCode(2)) { try await InferCommand.parse(["--har", broken]).run() }
    }
}
