import Foundation
import KagamiContractCheck
import KagamiDescription
import KagamiDiff
import KagamiFlow
import KagamiJSON
import KagamiTesting
import Testing

/// Each kind of finding on flow fixtures, the values a diff must not report, and the inputs it
/// refuses.
@Suite struct CaptureDiffTests {
    typealias F = FlowFixtures

    static func diff(_ before: [Flow], _ after: [Flow], options: DiffOptions = DiffOptions()) throws -> CaptureDiff {
        try CaptureDiff(before: before, after: after, options: options)
    }

    /// One finding of `kind` (and at `location`, when given), or a failure listing what there was.
    static func only(_ diff: CaptureDiff, _ kind: DiffFinding.Kind, at location: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> DiffFinding? {
        let matching = diff.findings.filter { $0.kind == kind && (location == nil || $0.location.description == location) }
        #expect(matching.count == 1, "\(kind) at \(location ?? "any place"): \(diff.findings.map(\.message))", sourceLocation: sourceLocation)
        return matching.first
    }

    static func start(_ second: Double) -> Date { Date(timeIntervalSince1970: 1_780_000_000 + second) }

    @Test func operationsOnlyOneCaptureCallsAreAddedOrRemoved() throws {
        let before = [F.api("/config", response: #"{"a":1}"#), F.api("/legacy", response: "{}")]
        let after = [F.api("/config", response: #"{"a":1}"#), F.api("/events", method: "POST", status: 204, request: #"{"e":"x"}"#)]
        let diff = try Self.diff(before, after)
        let added = try #require(Self.only(diff, .addedOperation))
        #expect(added.operation.description == "POST /events")
        #expect(added.afterExchanges == [after[1].id] && added.beforeExchanges.isEmpty)
        let removed = try #require(Self.only(diff, .removedOperation))
        #expect(removed.operation.description == "GET /legacy")
        #expect(removed.beforeExchanges == [before[1].id])
        #expect(diff.findings.count == 2, "\(diff.findings.map(\.message))")
    }

    @Test func idsInPathsAreOneOperation() throws {
        let before = [F.api("/users/1/posts", response: "[]"), F.api("/users/2/posts", response: "[]"), F.api("/orders/7f3c9a1e-0b7d-4e52-9d7a-1a2b3c4d5e6f", response: "{}")]
        let after = [F.api("/users/981/posts", response: "[]"), F.api("/users/982/posts", response: "[]"), F.api("/orders/00000000-1111-2222-3333-444444444444", response: "{}")]
        let diff = try Self.diff(before, after)
        #expect(diff.findings.isEmpty, "\(diff.findings.map(\.message))")
        #expect(Set(diff.operations.map(\.operation.template)) == ["/users/{userId}/posts", "/orders/{orderId}"])
    }

    @Test func callCountsAndTheirThreshold() throws {
        let before = [F.api("/feed", response: "[]")]
        let after = [F.api("/feed", response: "[]"), F.api("/feed", response: "[]")]
        let finding = try #require(Self.only(try Self.diff(before, after), .callCount))
        #expect(finding.before == "1 call" && finding.after == "2 calls")
        let lenient = try Self.diff(Array(repeating: before[0], count: 10), Array(repeating: before[0], count: 11), options: DiffOptions(callCountRatio: 0.2))
        #expect(lenient.findings(.callCount).isEmpty)
    }

    @Test func theOrderOfFirstCallsIsAligned() throws {
        let before = [F.api("/config", response: "{}", start: Self.start(0)), F.api("/feed", response: "[]", start: Self.start(1)), F.api("/profile", response: "{}", start: Self.start(2))]
        let after = [F.api("/feed", response: "[]", start: Self.start(0)), F.api("/config", response: "{}", start: Self.start(1)), F.api("/profile", response: "{}", start: Self.start(2))]
        let diff = try Self.diff(before, after)
        let moved = try #require(Self.only(diff, .order))
        // One of the two that swapped is told relative to the other.
        #expect(["GET /config", "GET /feed"].contains(moved.operation.description))
        let other = moved.operation.description == "GET /config" ? "GET /feed" : "GET /config"
        #expect(moved.after?.hasSuffix(other) == true && moved.before?.hasSuffix(other) == true, "\(moved)")
        #expect(moved.before != moved.after)
    }

    @Test func statusesThatCameAndWent() throws {
        let before = [F.api("/cart", response: "{}"), F.api("/cart", response: "{}")]
        let after = [F.api("/cart", response: "{}"), F.api("/cart", status: 503, response: #"{"error":"busy"}"#), F.api("/cart", status: nil)]
        let finding = try #require(Self.only(try Self.diff(before, after), .status))
        #expect(finding.before == "200 ×2")
        #expect(finding.after == "200 ×1, 503 ×1, failed: timeout ×1")
        #expect(finding.afterExchanges == [after[1].id, after[2].id])
    }

    @Test func bodyShapes() throws {
        let before = [
            F.api("/me", response: #"{"name":"Ada","email":"ada@example.com","age":36,"nickname":"A","plan":{"tier":"pro"},"tags":[{"label":"x","score":1}],"avatar":"a.png"}"#),
            F.api("/me", response: #"{"name":"Bo","email":"bo@example.com","age":41,"nickname":"B","plan":{"tier":"free"},"tags":[{"label":"y","score":2}],"avatar":"b.png"}"#),
        ]
        let after = [
            F.api("/me", response: #"{"name":"Ada","age":"36","nickname":null,"plan":{"tier":"pro","seats":3},"tags":[{"label":"x","score":1.5,"color":"red"}],"avatar":"a.png","theme":"dark"}"#),
            F.api("/me", response: #"{"name":"Bo","age":"41","nickname":"B","plan":{"tier":"free","seats":1},"tags":[{"label":"y","score":2,"color":"blue"}],"theme":"light"}"#),
        ]
        let diff = try Self.diff(before, after)
        let removed = try #require(Self.only(diff, .removedField, at: "response 200 body /email"))
        #expect(removed.before == "string" && removed.after == nil)
        #expect(removed.beforeExchanges == [before[0].id] && removed.afterExchanges == [after[0].id])
        #expect(Self.only(diff, .addedField, at: "response 200 body /theme")?.after == "string")
        #expect(Self.only(diff, .addedField, at: "response 200 body /plan/seats")?.after == "number")
        // Array elements are compared as one shape.
        #expect(Self.only(diff, .addedField, at: "response 200 body /tags/*/color") != nil)
        let type = try #require(Self.only(diff, .type, at: "response 200 body /age"))
        #expect(type.before == "number" && type.after == "string")
        let nullable = try #require(Self.only(diff, .nullability, at: "response 200 body /nickname"))
        #expect(nullable.before == "never null" && nullable.after == "null in 1 of 2")
        let presence = try #require(Self.only(diff, .presence, at: "response 200 body /avatar"))
        #expect(presence.before == "in every object" && presence.after == "in 1 of 2")
        // 1 and 1.5 are both numbers: which one a value is, is data.
        #expect(diff.findings.filter { $0.location.pointer == "/tags/*/score" }.isEmpty)
    }

    @Test func queryParametersAndHeaders() throws {
        let before = [F.api("/search?q=shoes&page=1", response: "[]", requestHeaders: [("X-Client", "ios")]),
                      F.api("/search?q=hats&page=2", response: "[]", requestHeaders: [("X-Client", "ios")])]
        let after = [F.api("/search?query=shoes&page=1", response: "[]", requestHeaders: [("X-Client", "ios")], responseHeaders: [("X-RateLimit-Limit", "100")]),
                     F.api("/search?query=hats&page=2", response: "[]", requestHeaders: [("X-Client", "ios")], responseHeaders: [("X-RateLimit-Limit", "100")])]
        let diff = try Self.diff(before, after)
        #expect(Self.only(diff, .removedParameter)?.location.description == "request query ?q")
        #expect(Self.only(diff, .addedParameter)?.location.description == "request query ?query")
        let header = try #require(Self.only(diff, .addedHeader))
        #expect(header.location.description == "response 200 header X-RateLimit-Limit")
        #expect(header.after == "100 (in every exchange)")
        #expect(diff.findings.count == 3, "\(diff.findings.map(\.message))")
    }

    @Test func stableValuesThatChangedAreReported() throws {
        let before = [F.api("/config", response: #"{"theme":"light","limit":20,"beta":false}"#, responseHeaders: [("Cache-Control", "max-age=60")]),
                      F.api("/config", response: #"{"theme":"light","limit":20,"beta":false}"#, responseHeaders: [("Cache-Control", "max-age=60")])]
        let after = [F.api("/config", response: #"{"theme":"dark","limit":50,"beta":false}"#, responseHeaders: [("Cache-Control", "max-age=60")]),
                     F.api("/config", response: #"{"theme":"dark","limit":50,"beta":false}"#, responseHeaders: [("Cache-Control", "max-age=60")])]
        let diff = try Self.diff(before, after)
        let theme = try #require(Self.only(diff, .value, at: "response 200 body /theme"))
        #expect(theme.before == #""light""# && theme.after == #""dark""#)
        #expect(Self.only(diff, .value, at: "response 200 body /limit")?.after == "50")
        #expect(diff.findings.count == 2, "\(diff.findings.map(\.message))")
    }

    @Test func volatileValuesAreNotReported() throws {
        func user(_ id: Int, _ uuid: String, _ at: String, _ token: String, _ greeting: String, epoch: Int) -> String {
            #"{"id":\#(id),"userId":\#(id + 1),"request_id":"\#(uuid)","createdAt":"\#(at)","updated":\#(epoch),"session":"\#(token)","note":"\#(greeting)","items":[{"sku":"A-\#(id)"},{"sku":"B-\#(id + 7)"}]}"#
        }
        // Each capture sees one value of each (so "varies within a capture" can't tell), and
        // `note` varies within each capture.
        let before = [
            F.api("/users/1", response: user(1, "7f3c9a1e-0b7d-4e52-9d7a-1a2b3c4d5e6f", "2026-11-20T10:00:00Z", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "hi Ada", epoch: 1_780_000_000),
                  responseHeaders: [("X-Request-Id", "req-8a7b6c5d4e"), ("ETag", "\"abc\"")]),
            F.api("/users/2", response: user(1, "7f3c9a1e-0b7d-4e52-9d7a-1a2b3c4d5e6f", "2026-11-20T10:00:00Z", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "hi Bo", epoch: 1_780_000_000),
                  responseHeaders: [("X-Request-Id", "req-8a7b6c5d4e"), ("ETag", "\"abc\"")]),
        ]
        let after = [
            F.api("/users/51", response: user(51, "00000000-1111-2222-3333-444444444444", "2026-11-28T09:30:12.5Z", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI1MSJ9.xyz", "hello Ada", epoch: 1_780_600_000),
                  responseHeaders: [("X-Request-Id", "req-1f2e3d4c5b"), ("ETag", "\"def\"")]),
            F.api("/users/52", response: user(51, "00000000-1111-2222-3333-444444444444", "2026-11-28T09:30:12.5Z", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI1MSJ9.xyz", "hello Bo", epoch: 1_780_600_000),
                  responseHeaders: [("X-Request-Id", "req-1f2e3d4c5b"), ("ETag", "\"def\"")]),
        ]
        // The app's own version differs between two builds by definition.
        func built(_ flows: [Flow], _ version: String) -> [Flow] {
            flows.map { flow in
                var flow = flow
                flow.request.headers.add("X-App-Version", version)
                return flow
            }
        }
        let diff = try Self.diff(built(before, "2.0.0"), built(after, "2.1.0"))
        #expect(diff.findings.isEmpty, "\(diff.findings.map(\.message))")
    }

    @Test func ignoredPlacesAreNotReported() throws {
        let before = [F.api("/config?v=1", response: #"{"theme":"light","meta":{"build":"a","flags":{"x":1}}}"#, responseHeaders: [("X-Served-From", "eu")])]
        let after = [F.api("/config?v=2", response: #"{"theme":"dark","meta":{"build":"b","flags":{"y":1}}}"#, responseHeaders: [("X-Served-From", "us")])]
        let all = try Self.diff(before, after)
        #expect(all.findings.count >= 4, "\(all.findings.map(\.message))")
        let quiet = try Self.diff(before, after, options: DiffOptions(ignore: ["/theme", "/meta", "x-served-from", "v"]))
        #expect(quiet.findings.isEmpty, "\(quiet.findings.map(\.message))")
        // An index names the elements, merged as `*`.
        let arrays = try Self.diff([F.api("/l", response: #"[{"a":1}]"#)], [F.api("/l", response: #"[{"b":1}]"#)], options: DiffOptions(ignore: ["/0"]))
        #expect(arrays.findings.isEmpty, "\(arrays.findings.map(\.message))")
    }

    @Test func slowerAndLargerPastTheThresholdsOnly() throws {
        let before = (0..<10).map { F.api("/feed", response: "[]", duration: 0.005 + Double($0) * 0.0001) }
        let slower = (0..<10).map { F.api("/feed", response: "[" + String(repeating: "1,", count: 2000) + "1]", duration: 0.3 + Double($0) * 0.001) }
        let diff = try Self.diff(before, slower)
        let finding = try #require(Self.only(diff, .slower))
        #expect(finding.before?.hasPrefix("p50 5.") == true, "\(finding)")
        #expect(finding.after?.hasPrefix("p50 30") == true, "\(finding)")
        #expect(finding.beforeExchanges.count == 1 && finding.afterExchanges.count == 1)
        #expect(Self.only(diff, .larger) != nil)
        // 5 ms to 9 ms is under the 50 ms floor; 1 s to 1.2 s is under the ratio.
        let jitter = try Self.diff(before, (0..<10).map { _ in F.api("/feed", response: "[]", duration: 0.009) })
        #expect(jitter.findings(.slower, .faster).isEmpty)
        let slow = (0..<10).map { _ in F.api("/feed", response: "[]", duration: 1.0) }
        #expect(try Self.diff(slow, (0..<10).map { _ in F.api("/feed", response: "[]", duration: 1.2) }).findings(.slower).isEmpty)
        #expect(try Self.only(Self.diff(slower, before), .faster) != nil)
    }

    @Test func mediaTypes() throws {
        let before = [F.api("/page", response: #"{"a":1}"#)]
        let after = [F.api("/page", response: "<html></html>", responseHeaders: [("Content-Type", "text/html; charset=utf-8")])]
        let finding = try #require(Self.only(try Self.diff(before, after), .mediaType))
        #expect(finding.before == "application/json ×1" && finding.after == "text/html ×1")
    }

    @Test func webSocketMessagesByKind() throws {
        let handshake = F.webSocket()
        var later = F.webSocket(start: Self.start(60))
        later.id = UUID()
        func text(_ direction: WebSocketMessage.Direction, _ json: String) -> WebSocketMessage {
            WebSocketMessage(direction: direction, time: Self.start(1), opcode: .text, data: Data(json.utf8), size: json.utf8.count)
        }
        let before = [text(.send, #"{"type":"join","room":"a"}"#), text(.receive, #"{"type":"chat","text":"hi","from":"ada"}"#)]
        let after = [text(.send, #"{"type":"join","room":"a"}"#), text(.receive, #"{"type":"chat","text":"hi"}"#), text(.receive, #"{"type":"typing","who":"bo"}"#)]
        let diff = try CaptureDiff(before: [handshake], after: [later], beforeMessages: [handshake.id: before], afterMessages: [later.id: after])
        let removed = try #require(Self.only(diff, .removedField))
        #expect(removed.location.description == "messages receive type=chat /from")
        #expect(Self.only(diff, .addedField)?.location.description == "messages receive type=typing (whole)")
    }

    @Test func gRPCMessageFields() throws {
        func call(_ payload: [UInt8]) -> Flow {
            let framed = Data([0, 0, 0, 0, UInt8(payload.count)] + payload)
            return Flow(
                mode: .forward,
                request: FlowRequest(method: "POST", scheme: "https", host: "grpc.example.com", port: 443, target: "/shop.Cart/Get", version: "HTTP/2.0",
                                     headers: HeaderFields([("content-type", "application/grpc")]), body: FlowBody(data: Data([0, 0, 0, 0, 2, 0x08, 0x01]))),
                response: {
                    var response = FlowResponse(status: 200, version: "HTTP/2.0", headers: HeaderFields([("content-type", "application/grpc")]), body: FlowBody(data: framed))
                    response.trailers = HeaderFields([("grpc-status", "0")])
                    return response
                }(),
                timings: FlowTimings(start: Self.start(0), end: Self.start(0.01)))
        }
        // Field 1 a varint, field 2 the text "hi"; after: field 2 gone, field 3 the text "new".
        let before = call([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69])
        let after = call([0x08, 0x96, 0x01, 0x1A, 0x03, 0x6E, 0x65, 0x77])
        let diff = try Self.diff([before], [after])
        #expect(Self.only(diff, .removedField)?.location.description == "response OK grpc /2")
        #expect(Self.only(diff, .addedField)?.location.description == "response OK grpc /3")
    }

    @Test func aDescriptionGroupsTheOperationsItDocuments() throws {
        let description = """
            openapi: 3.1.0
            info: {title: Notes, version: "1"}
            paths:
              /notes/{noteId}:
                get:
                  operationId: getNote
                  responses:
                    "200": {description: ok}
            """
        let contract = try ContractCheck(file: DescriptionFile(text: description, path: "notes.yaml"))
        // `draft` would be a template value beside the ids: the description says it is a note too.
        let before = [F.api("/notes/draft", response: #"{"t":1}"#), F.api("/other/x", response: "{}")]
        let after = [F.api("/notes/4711", response: #"{"t":1,"u":2}"#), F.api("/other/x", response: "{}")]
        let diff = try Self.diff(before, after, options: DiffOptions(contract: contract))
        let added = try #require(Self.only(diff, .addedField))
        #expect(added.operation.template == "/notes/{noteId}" && added.operation.name == "getNote")
        #expect(diff.operations.count == 2)
    }

    @Test func unusableInputIsRefusedNotReportedAsNoChange() throws {
        #expect(throws: DiffInputError.empty("the before capture")) { try Self.diff([], [F.api("/a")]) }
        #expect(throws: DiffInputError.empty("the after capture")) { try Self.diff([F.api("/a")], []) }
        #expect(throws: DiffInputError.nothingInCommon(before: ["api.example.com"], after: ["other.example.com"])) {
            try Self.diff([F.api("/a")], [F.api("/a", host: "other.example.com")])
        }
        let error = DiffInputError.nothingInCommon(before: ["a"], after: ["b"])
        #expect(error.description.contains("no operation in common"))
    }

    @Test func tunnelsAreOperationsToo() throws {
        var tunnel = F.api("tracker.example.com:443", method: "CONNECT", host: "tracker.example.com", response: nil)
        tunnel.mode = .tunnel
        let diff = try Self.diff([F.api("/a")], [F.api("/a"), tunnel])
        #expect(Self.only(diff, .addedOperation)?.operation.description == "CONNECT tracker.example.com:443")
    }

    @Test func reportsNameEveryFindingAndFailOnlyOnTheKindsGiven() throws {
        let before = [F.api("/me", response: #"{"name":"Ada","email":"a@example.com"}"#), F.api("/old", response: "{}")]
        let after = [F.api("/me", response: #"{"name":"Ada"}"#), F.api("/new", response: "{}")]
        let diff = try Self.diff(before, after)
        let passing = DiffReport(diff, beforeLabel: "v1.sqlite", afterLabel: "v2.sqlite", failOn: [.status])
        #expect(passing.exitCode == 0)
        let text = passing.text()
        #expect(text.hasPrefix("v1.sqlite (2 exchanges) → v2.sqlite (2 exchanges)\n3 operations: 1 in both, 1 added, 1 removed; 3 findings\n"), "\(text)")
        #expect(text.contains("\n~ GET /me  1 → 1 call\n    removed-field  response 200 body /email: string → absent\n"), "\(text)")
        #expect(text.contains("\n+ GET /new  0 → 1 call\n") && text.contains("\n- GET /old  1 → 0 calls\n"), "\(text)")
        #expect(passing.text(colour: true).contains("\u{1B}[32m+ GET /new\u{1B}[0m"))

        let failing = DiffReport(diff, failOn: [.removedField, .removedOperation])
        #expect(failing.exitCode == 1)
        #expect(failing.text().contains("  ✗ removed-field") && failing.text().contains("Failed: 2 findings"))
        let json = failing.json()
        #expect(json["summary"]?["failed"] == true && json["summary"]?["kinds"]?["removed-field"] == 1)
        let finding = try #require(json["findings"]?.arrayValue?.first { $0["kind"] == "removed-field" })
        #expect(finding["operation"] == "GET /me" && finding["host"] == "api.example.com" && finding["template"] == "/me")
        #expect(finding["location"] == "response 200 body /email" && finding["place"]?["pointer"] == "/email" && finding["place"]?["status"] == "200")
        #expect(finding["before"] == "string" && finding["after"] == .null)
        #expect(finding["beforeExchanges"] == [.string(before[0].id.uuidString)] && finding["afterExchanges"] == [.string(after[0].id.uuidString)])
        let junit = failing.junit()
        #expect(junit.contains(#"<testsuites name="kagami diff" tests="3" failures="2" errors="0">"#), "\(junit)")
        #expect(junit.contains(#"<failure type="removed-field" message="removed-field response 200 body /email: string → absent">"#), "\(junit)")
        #expect(failing.html().contains("<tr class=\"failing\"><td>removed-field</td><td>response 200 body /email</td>"))
        let none = DiffReport(try Self.diff([before[0]], [before[0]]))
        #expect(none.text().contains("No changes: every operation is called as before."))
        #expect(none.junit().contains(#"name="no changes""#))
    }

    @Test func aSegmentThatIsAWordPerExchangeDoesNotMakeAGroupEach() throws {
        var summary = CaptureSummary()
        for index in 0..<2000 { summary.add(F.api("/search/word\(String(UnicodeScalar(UInt8(97 + index % 26))))x\(index)", response: "[]")) }
        let diff = try CaptureDiff(before: summary, after: summary)
        #expect(diff.findings.isEmpty)
        #expect(diff.operations.count < 300, "\(diff.operations.count)")
    }
}
