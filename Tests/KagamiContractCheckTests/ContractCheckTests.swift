import Foundation
import KagamiContractCheck
import KagamiDescription
import KagamiFlow
import KagamiRecording
import KagamiJSON
import Synchronization
import KagamiTesting
import Testing

/// Flows built by hand against the two fixture descriptions: matching, each violation kind with
/// its pointers, and the exchanges that must not be reported.
@Suite struct ContractCheckTests {
    static let base = "http://127.0.0.1:5000/v1"

    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
    }

    static func contractArgument(_ name: String) -> String { "\(fixture(name))=\(base)" }

    static func check(_ name: String) throws -> ContractCheck {
        try ContractCheck.load(contractArgument(name))
    }

    static func flow(
        _ method: String, _ target: String, requestHeaders: [(String, String)] = [], requestBody: String = "",
        status: Int, headers: [(String, String)] = [("Content-Type", "application/json")], body: String = ""
    ) -> Flow {
        Flow(
            mode: .forward,
            request: FlowRequest(
                method: method, scheme: "http", host: "127.0.0.1", port: 5000, target: target,
                headers: HeaderFields(requestHeaders), body: FlowBody(data: Data(requestBody.utf8))),
            response: FlowResponse(status: status, headers: HeaderFields(headers), body: FlowBody(data: Data(body.utf8))),
            timings: FlowTimings(start: Date(timeIntervalSince1970: 1_780_000_000)))
    }

    static let descriptions = ["notes.apib", "notes.yaml", "notes-2.0.yaml"]

    @Test(arguments: descriptions) func conformantExchangesHaveNoViolations(_ name: String) throws {
        let check = try Self.check(name)
        let flows = [
            Self.flow("GET", "/v1/notes/1", status: 200, body: #"{"id":1,"title":"Buy milk","done":false}"#),
            Self.flow("GET", "/v1/notes?limit=2", status: 200, headers: [("content-type", "Application/JSON; charset=utf-8")], body: #"[{"id":1,"title":"a"}]"#),
            Self.flow("HEAD", "/v1/notes/1", status: 200, body: ""),
            Self.flow("GET", "/v1/notes/1", requestHeaders: [("If-None-Match", "\"v1\"")], status: 304, headers: [("ETag", "\"v1\"")]),
            Self.flow("POST", "/v1/notes", requestHeaders: [("Content-Type", "application/json")], requestBody: #"{"title":"a"}"#,
                      status: 201, headers: [("Content-Type", "application/json"), ("Via", "1.1 gateway"), ("Date", "Tue, 24 Nov 2026 10:00:00 GMT")],
                      body: #"{"id":2,"title":"a"}"#),
            // The server rightly refuses: a documented 404 is not a request violation.
            Self.flow("GET", "/v1/notes/99", status: 404, body: #"{"message":"not found"}"#),
            Self.flow("DELETE", "/v1/notes/1", status: 204, headers: []),
        ]
        for flow in flows {
            let result = try #require(check.check(flow), "\(flow.request.method) \(flow.request.target) is in scope")
            #expect(result.violations.isEmpty, "\(flow.request.method) \(flow.request.target): \(result.violations)")
        }
    }

    @Test(arguments: descriptions) func missingRequiredPropertyPointsAtTheObjectAndTheKeyword(_ name: String) throws {
        let result = try #require(try Self.check(name).check(Self.flow("GET", "/v1/notes/2", status: 200, body: #"{"id":2}"#)))
        let violation = try #require(result.violations.first)
        #expect(result.violations.count == 1)
        #expect(violation.kind == .schema && violation.side == .response && violation.location == .body)
        #expect(violation.instancePointer == "")
        #expect(violation.keyword == "required")
        #expect(violation.expected == #"properties "title""#)
        #expect(violation.schemaPointer?.hasSuffix("/required") == true)
        #expect(violation.operation?.method == "GET")
        #expect(violation.operation?.template == "/notes/{id}")
        if name.hasSuffix(".yaml") {
            #expect(violation.operation?.name == "getNote")
            #expect(violation.schemaPointer == "/paths/~1notes~1{id}/get/responses/200/content/application~1json/schema/required")
        } else {
            #expect(violation.operation?.name == "Retrieve a Note")
        }
    }

    @Test(arguments: descriptions) func wrongTypeSaysExpectedAndActual(_ name: String) throws {
        let result = try #require(try Self.check(name).check(Self.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)))
        let violation = try #require(result.violations.first)
        #expect(result.violations.count == 1)
        #expect(violation.instancePointer == "/id")
        #expect(violation.keyword == "type")
        #expect(violation.schemaPointer?.hasSuffix("/properties/id/type") == true)
        #expect(violation.expected == (name.hasSuffix(".yaml") ? "integer" : "number"))
        #expect(violation.actual == #"string "three""#)
        #expect(violation.schemaExcerpt?.contains("\"type\"") == true)
    }

    @Test(arguments: descriptions) func undocumentedStatusPathAndMethodAreWarnings(_ name: String) throws {
        let check = try Self.check(name)
        let status = try #require(check.check(Self.flow("GET", "/v1/notes/4", status: 500, headers: [("Content-Type", "text/plain")], body: "boom")))
        #expect(status.violations.map(\.kind) == [.undocumentedStatus])
        #expect(status.violations.first?.severity == .warning)
        #expect(status.violations.first?.actual == "500")
        #expect(status.violations.first?.location == .status)

        let path = try #require(check.check(Self.flow("GET", "/v1/nope", status: 200, body: "{}")))
        #expect(path.violations.map(\.kind) == [.undocumentedPath])
        #expect(path.violations.first?.operation == nil)
        #expect(path.violations.first?.actual == "/nope")

        let method = try #require(check.check(Self.flow("PATCH", "/v1/notes/1", status: 200, body: "{}")))
        #expect(method.violations.map(\.kind) == [.undocumentedMethod])
        #expect(method.violations.first?.actual == "PATCH")
    }

    @Test(arguments: descriptions) func wrongContentTypeIsOneViolation(_ name: String) throws {
        let result = try #require(try Self.check(name).check(Self.flow(
            "GET", "/v1/notes/5", status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: "<p>note</p>")))
        #expect(result.violations.count == 1)
        #expect(result.violations.first?.kind == .contentType)
        #expect(result.violations.first?.name == "Content-Type")
        #expect(result.violations.first?.expected == "application/json")
        #expect(result.violations.first?.actual == "text/html")
    }

    @Test(arguments: descriptions) func badQueryParameterIsARequestViolation(_ name: String) throws {
        let result = try #require(try Self.check(name).check(Self.flow("GET", "/v1/notes?limit=abc", status: 200, body: "[]")))
        #expect(result.violations.count == 1)
        let violation = try #require(result.violations.first)
        #expect(violation.side == .request && violation.location == .query && violation.name == "limit")
        #expect(violation.kind == .parameter)
        #expect(violation.actual?.contains("abc") == true)
    }

    @Test func deepObjectQueryParametersAreNotReportedMissing() throws {
        let yaml = """
            openapi: 3.1.0
            info: {title: T, version: "1"}
            paths:
              /notes:
                get:
                  parameters:
                    - {name: filter, in: query, required: true, style: deepObject, explode: true, schema: {type: object}}
                  responses:
                    "200": {description: ok}
            """
        let check = try ContractCheck(file: DescriptionFile(text: yaml, format: .openAPI), baseURL: "http://127.0.0.1:5000")
        let sent = Self.flow("GET", "/notes?filter[title]=milk&filter[done]=false", status: 200, headers: [])
        #expect(try #require(check.check(sent)).violations == [])
        let absent = Self.flow("GET", "/notes", status: 200, headers: [])
        #expect(try #require(check.check(absent)).violations.map(\.kind) == [.missing])
    }

    @Test(arguments: descriptions) func aBodyThatIsNotJSONIsOneClearViolation(_ name: String) throws {
        let result = try #require(try Self.check(name).check(Self.flow("GET", "/v1/notes/1", status: 200, body: "{\"id\": 1,")))
        #expect(result.violations.map(\.kind) == [.notJSON])
        #expect(result.violations.first?.message.contains("not valid JSON") == true)
    }

    @Test func aTruncatedBodyIsNotCheckedRatherThanValid() throws {
        var flow = Self.flow("GET", "/v1/notes/1", status: 200, body: #"{"id":1,"ti"#)
        flow.response?.body.isTruncated = true
        flow.response?.body.size = 50_000_000
        let result = try #require(try Self.check("notes.yaml").check(flow))
        #expect(result.violations.map(\.kind) == [.notChecked])
        #expect(result.violations.first?.severity == .info)
        #expect(result.violations.first?.message.hasPrefix("not checked") == true)
    }

    @Test func flowsOutsideTheBaseURLAreNotInScope() throws {
        let check = try Self.check("notes.yaml")
        var other = Self.flow("GET", "/v1/notes/1", status: 200, body: "{}")
        other.request.port = 5001
        #expect(check.check(other) == nil)
        #expect(check.check(Self.flow("GET", "/v2/notes/1", status: 200, body: "{}")) == nil)
        #expect(check.check(Self.flow("GET", "/v1notes", status: 200, body: "{}")) == nil)
        // Without a URL the description's own servers decide.
        let own = try ContractCheck.load(Self.fixture("notes.yaml"))
        #expect(own.baseURLs.map(\.description) == ["https://notes.example.com/v1"])
        #expect(own.check(Self.flow("GET", "/v1/notes/1", status: 200, body: "{}")) == nil)
    }

    @Test func aDescriptionWithErrorsIsRefusedWithFileAndLine() throws {
        let folder = try TemporaryFolder.make("test")
        let path = folder.appendingPathComponent("broken.apib").path
        try "# API\n\n# GET /\n+ Response 200 (application/json)\n    + Attributes (Nope)\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try ContractCheck.load(path)
        } throws: { error in
            "\(error)".contains("\(path):5:5: error:")
        }
    }

    @Test func blueprintResponseHeadersMustBePresentWhateverTheirCase() throws {
        let text = """
            FORMAT: 1A

            # API

            ## Notes [/notes]

            ### Create [POST]

            + Response 201 (application/json)
                + Headers

                        Location: /notes/1
                        Date: Tue, 24 Nov 2026 10:00:00 GMT

                + Body

                        {"id": 1}

            """
        let check = try ContractCheck(file: DescriptionFile(text: text, format: .apiBlueprint), baseURL: "http://127.0.0.1:5000")
        let present = Self.flow("POST", "/notes", status: 201, headers: [("content-type", "application/json"), ("location", "/notes/9")], body: #"{"id":9}"#)
        #expect(try #require(check.check(present)).violations == [])
        // Date is the server stack's: never reported. Location is the API's.
        let missing = Self.flow("POST", "/notes", status: 201, body: #"{"id":9}"#)
        let violations = try #require(check.check(missing)).violations
        #expect(violations.map(\.kind) == [.missing])
        #expect(violations.first?.name == "Location" && violations.first?.severity == .warning && violations.first?.location == .header)
    }

    @Test func violationsStoredInTheFirstShapeStillDecode() throws {
        let old = Data(#"{"location":"response.body/items/0/id","message":"expected integer"}"#.utf8)
        let violation = try JSONDecoder().decode(ContractViolation.self, from: old)
        #expect(violation.kind == .schema && violation.side == .response && violation.location == .body)
        #expect(violation.message == "expected integer")
        let current = ContractViolation(
            kind: .parameter, severity: .warning, operation: .init(name: "n", method: "GET", template: "/a"), side: .request,
            location: .query, name: "limit", keyword: "type", expected: "integer", actual: "abc", message: "m")
        #expect(try JSONDecoder().decode(ContractViolation.self, from: JSONEncoder().encode(current)) == current)
    }

    @Test func baseURLsParse() {
        #expect(BaseURL("https://api.example.com/v2/")?.description == "https://api.example.com/v2")
        #expect(BaseURL("http://[::1]:8080")?.port == 8080)
        #expect(BaseURL("/v2")?.host == nil)
        #expect(BaseURL("{scheme}://{host}/api")?.path == "/api")
        #expect(BaseURL("ftp://example.com") == nil)
    }
}

@Suite struct LiveContractsTests {
    /// Sets the file's text and a modification time of its own, so a reload sees the change
    /// however fast the edits come.
    static func write(_ text: String, to path: String, at seconds: TimeInterval) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    @Test func aBrokenEditKeepsTheLastGoodDescriptionAndSaysSo() throws {
        let folder = NSTemporaryDirectory() + "kagami-live-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/notes.yaml"
        let good = try String(contentsOfFile: ContractCheckTests.fixture("notes.yaml"), encoding: .utf8)
        try Self.write(good, to: path, at: 1_000)
        let contracts = try LiveContracts(arguments: ["\(path)=\(ContractCheckTests.base)"])
        let wrongType = ContractCheckTests.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)
        #expect(contracts.check(wrongType).map(\.keyword) == ["type"])

        try Self.write(good + "  broken: [\n", to: path, at: 2_000)
        let notes = contracts.reloadChanged()
        #expect(notes.first?.hasPrefix("Keeping the last good version of \(path)") == true)
        #expect(contracts.json["descriptions"]?[0]?["reloadErrors"]?[0]?.stringValue?.hasPrefix("\(path):") == true)
        #expect(contracts.check(wrongType).map(\.keyword) == ["type"], "the last good version still checks")

        // A good edit: `id` is now a string.
        try Self.write(good.replacingOccurrences(of: "id:\n          type: integer", with: "id:\n          type: string"), to: path, at: 3_000)
        #expect(contracts.reloadChanged().first?.hasPrefix("Reloaded \(path)") == true)
        #expect(contracts.json["descriptions"]?[0]?["reloadErrors"]?.arrayValue == [])
        #expect(contracts.check(wrongType) == [])
    }
}

@Suite struct ContractCheckStageTests {
    @Test func flowsGoOnFirstAndViolationsFollow() async throws {
        let contracts = try LiveContracts(arguments: [ContractCheckTests.contractArgument("notes.yaml")])
        let downstream = CollectingSink()
        let found = CollectingSink()
        let check = ContractCheckStage(contracts: contracts, timing: .alongside { found.record($0) })
        let sink = RecordingChain([check, KeepingStage(in: downstream)])
        let wrongType = ContractCheckTests.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)
        let fine = ContractCheckTests.flow("GET", "/v1/notes/1", status: 200, body: #"{"id":1,"title":"x"}"#)
        sink.record(wrongType)
        sink.record(fine)
        #expect(downstream.flows.map(\.violations.count) == [0, 0], "handed on at once, unchecked")
        await check.drain()
        #expect(found.flows.map(\.id) == [wrongType.id])
        #expect(found.flows.first?.violations.map(\.instancePointer) == ["/id"])
        #expect(contracts.json["checked"] == 2)
    }

    @Test func aCheckTooFarBehindSkipsFlowsInsteadOfQueueingThem() async throws {
        let contracts = try LiveContracts(arguments: [ContractCheckTests.contractArgument("notes.yaml")])
        let downstream = CollectingSink()
        // No room at all: every flow is handed on and counted as skipped, none is held.
        let check = ContractCheckStage(contracts: contracts, timing: .alongside { _ in }, maximumPending: 0)
        let sink = RecordingChain([check, KeepingStage(in: downstream)])
        for _ in 0..<50 { sink.record(ContractCheckTests.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)) }
        await check.drain()
        #expect(downstream.flows.count == 50)
        #expect(contracts.json["checked"] == 0)
        #expect(contracts.json["skipped"] == 50)
    }

    /// Checked first, each flow goes on with its violations, and a socket's messages stay
    /// behind their handshake; the flow's `stored` reaches the sink that keeps it.
    @Test func checkedFirstEveryRecordGoesOnInOrder() async throws {
        let contracts = try LiveContracts(arguments: [ContractCheckTests.contractArgument("notes.yaml")])
        let downstream = CollectingSink()
        let check = ContractCheckStage(contracts: contracts, timing: .before)
        let sink = RecordingChain([check, KeepingStage(in: downstream)])
        let wrongType = ContractCheckTests.flow("GET", "/v1/notes/3", status: 200, body: #"{"id":"three","title":"x"}"#)
        let message = WebSocketMessage(direction: .send, time: Date(), opcode: .text, data: Data("hello".utf8), size: 5)
        let stored = Mutex(false)
        sink.record(wrongType) { stored.withLock { $0 = true } }
        sink.record(messages: [message], of: wrongType.id)
        await check.drain()
        let records = downstream.records
        #expect(records.count == 2)
        guard records.count == 2, case .flow(let flow, _?) = records[0], case .messages(let messages, let of) = records[1] else {
            Issue.record("expected the flow, then its messages: \(records)")
            return
        }
        #expect(flow.violations.map(\.instancePointer) == ["/id"])
        #expect(messages.map(\.text) == ["hello"] && of == wrongType.id)
        #expect(stored.withLock { $0 }, "the sink that keeps the flow calls its stored")
    }
}

@Suite struct MediaTypeTests {
    /// Without parameters, blanks or case; text beyond ASCII goes by Unicode's case and blanks.
    @Test(arguments: [
        ("Application/JSON; charset=utf-8", "application/json"),
        ("application/json", "application/json"),
        (" text/plain ", "text/plain"),
        ("\tTEXT/CSV\t;q=1", "text/csv"),
        ("application/problem+json;charset=utf-8", "application/problem+json"),
        ("; charset=utf-8", ""),
        ("", ""),
        ("Ｔext/Plain\u{00A0}", "ｔext/plain"),
    ])
    func essence(_ sent: String, _ essence: String) {
        #expect(MediaType.essence(sent) == essence)
    }
}
