import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiTesting
import Testing

/// Exchanges made of mutated pieces (targets, methods, statuses, headers, bodies, encodings)
/// checked against both descriptions: the check must answer every one, and every report must
/// hold together (a place, a message, pointers that are pointers). Seeded and bounded.
@Suite struct ContractCheckFuzzTests {
    static let targets = [
        "/v1/notes/1", "/v1/notes/", "/v1/notes/%ZZ", "/v1/notes/1/../2", "/v1/notes?limit=", "/v1/notes?limit=1&limit=x",
        "/v1/notes?%", "/v1", "/v1/", "/v1?x", "/v1/notes/{id}", "/v1/notes/" + String(repeating: "9", count: 400), "*", "/v1//notes",
        "/v1/notes?limit=" + String(repeating: "%41", count: 100), "/v1/notes/1#frag", "/v1/nöte",
    ]
    static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "", "CONNECT"]
    static let statuses = [0, 100, 200, 201, 204, 304, 404, 418, 500, 999, -1]
    static let contentTypes: [String?] = [nil, "application/json", "text/html", ";", "application/json; charset", "*/*", "application/problem+json", ""]
    static let encodings: [String?] = [nil, "gzip", "deflate", "br", "gzip, gzip", "identity"]
    static let bodies = [
        "", "{}", "[]", "null", #"{"id":1,"title":"x"}"#, #"{"id":"1"}"#, "[{", "\u{0}\u{1}", String(repeating: "[", count: 5_000),
        #"{"id":1e400,"title":"\ud800"}"#, #"[{"id":1,"title":"a"},{"id":{},"title":[]}]"#, "{\"a\":" + String(repeating: "{\"a\":", count: 300) + "1",
    ]

    @Test func randomExchangesAreCheckedWithoutCrashing() throws {
        let checks = try ContractCheckTests.descriptions.map { try ContractCheckTests.check($0) }
        var generator = SeededGenerator(state: 0x6b61_6761_6d69)
        var reported = 0
        for _ in 0..<3_000 {
            let method = Self.methods.randomElement(using: &generator) ?? "GET"
            let target = Self.targets.randomElement(using: &generator) ?? "/"
            let status = Self.statuses.randomElement(using: &generator) ?? 200
            var headers: [(String, String)] = []
            if let type = Self.contentTypes.randomElement(using: &generator) ?? nil { headers.append(("Content-Type", type)) }
            if let encoding = Self.encodings.randomElement(using: &generator) ?? nil { headers.append(("Content-Encoding", encoding)) }
            var flow = ContractCheckTests.flow(
                method, target, requestHeaders: headers, requestBody: Self.bodies.randomElement(using: &generator) ?? "",
                status: status, headers: headers, body: Self.bodies.randomElement(using: &generator) ?? "")
            if Bool.random(using: &generator) { flow.response?.body.isTruncated = true }
            for check in checks {
                guard let result = check.check(flow) else { continue }
                for violation in result.violations {
                    reported += 1
                    #expect(!violation.message.isEmpty)
                    #expect(!violation.place.isEmpty)
                    if let pointer = violation.instancePointer { #expect(pointer.isEmpty || pointer.hasPrefix("/"), "\(pointer)") }
                    if let pointer = violation.schemaPointer { #expect(pointer.isEmpty || pointer.hasPrefix("/"), "\(pointer)") }
                    #expect((violation.expected?.count ?? 0) <= 80 && (violation.actual?.count ?? 0) <= 80)
                }
            }
        }
        #expect(reported > 100, "the mutations reach the checks")
    }
}
