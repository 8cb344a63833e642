import Foundation
import KagamiTesting
import Testing
@testable import KagamiRules

/// Seeded mutations of rules and breakpoints documents (YAML and JSON): each is read or refused
/// with a message, never a crash or a hang, and refusals of broken syntax say where.
@Suite struct RuleDocumentFuzzTests {
    static let seeds = [
        """
        blockList:
          - {name: ads, locations: [{host: "ads.*"}], action: drop}
        mapLocal:
          - {name: user, from: {path: /v1/user}, local: docs/user.json}
        mapRemote:
          - {name: staging, from: {host: api.internal, path: /v1/*}, to: {protocol: https, host: staging.internal}}
        rewrite:
          - name: debug
            locations: [{path: /api/*}]
            rules:
              - {type: Add Header, where: request, replaceName: X-Debug, replaceValue: "1"}
              - {type: Response Status, matchValue: "200", replaceValue: "503 Down"}
        throttling: {enabled: true, preset: 3G, onlyFor: [{host: &h api.internal}, {host: *h}]}
        """,
        #"{"noCaching":{"enabled":true,"locations":[{"path":"/x"}]},"allowList":[{"name":"ours","locations":[{"host":"*.corp"}]}]}"#,
    ]
    static let breakpointSeeds = [
        "breakpoints:\n  - {location: {host: api.internal, path: /v1/*}, request: true, response: false}\nautoContinue: 30\n",
        #"{"enabled":false,"breakpoints":[{"location":{"path":"/echo"},"response":true}]}"#,
    ]

    static func mutate(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        let alphabet = Array("{}[]:,-&*!|>'\"#\n \t?%@`".utf8)
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            guard !out.isEmpty else { break }
            let i = Int.random(in: 0..<out.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: out[i] = alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
            case 1: out.remove(at: i)
            case 2: out.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &rng)], at: i)
            case 3: out.insert(contentsOf: out[i..<min(out.count, i + 24)], at: i)
            default: out[i] = UInt8.random(in: 0...255, using: &rng)
            }
        }
        return out
    }

    @Test func mutatedDocumentsAreReadOrRefusedWithAMessage() {
        var rng = SeededGenerator(state: 0xB00B5)
        var read = 0
        var refused = 0
        for iteration in 0..<4000 {
            let rules = iteration % 4 != 3
            let pool = rules ? Self.seeds : Self.breakpointSeeds
            let text = String(decoding: Self.mutate(Array(pool[iteration % pool.count].utf8), &rng), as: UTF8.self)
            do {
                if rules { _ = try RuleSet(parsing: text, file: "fuzz.yaml") } else { _ = try BreakpointSettings(parsing: text, file: "fuzz.yaml") }
                read += 1
            } catch {
                refused += 1
                #expect(!error.message.isEmpty)
                #expect(error.description.hasPrefix("fuzz.yaml"))
            }
        }
        #expect(read > 0 && refused > 0)
    }
}
