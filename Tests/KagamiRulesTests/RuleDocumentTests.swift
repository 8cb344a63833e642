import Foundation
import Testing
@testable import KagamiRules

@Suite struct RuleDocumentTests {
    func error(_ text: String, file: String = "rules.yaml") -> RuleDocumentError? {
        do {
            _ = try RuleSet(parsing: text, file: file)
            return nil
        } catch {
            return error
        }
    }

    @Test func unknownRewriteTypeNamesFileLineAndField() throws {
        let text = """
            # staging tweaks
            rewrite:
              - name: auth
                rules:
                  - type: Add Header
                    replace: {name: X-Debug, value: "1"}
                  - type: Remove Header
                    match: {name: Cookie}
                  - type: Add Heder
                    replace: {name: X-Other}
            """
        let refused = try #require(error(text))
        #expect(refused.description == "rules.yaml:9:9: rewrite[0].rules[2].type: unknown rule type \"Add Heder\"")
    }

    @Test func typoInFieldNameIsRefused() throws {
        let refused = try #require(error("""
            blockList:
              - name: ads
                locations:
                  - hots: ads.example
            """))
        #expect(refused.line == 4 && refused.column == 9)
        #expect(refused.field == "blockList[0].locations[0].hots")
        #expect(refused.message.hasPrefix("unknown field \"hots\""))
    }

    @Test func wrongTypesAndMissingFields() throws {
        let port = try #require(error("mapRemote:\n  - name: x\n    from: {port: eighty}\n    to: {host: b}\n"))
        #expect(port.field == "mapRemote[0].from.port")
        #expect(port.line == 3)
        #expect(port.message == "expected a whole number, found \"eighty\"")
        let missing = try #require(error("mapLocal:\n  - name: x\n    from: {host: a}\n"))
        #expect(missing.field == "mapLocal[0].local")
        #expect(missing.message == "missing required field \"local\"")
        #expect(missing.line == 2)
        let action = try #require(error("blockList:\n  - {name: x, locations: [], action: reject}\n"))
        #expect(action.field == "blockList[0].action")
        #expect(action.message == "unknown block action \"reject\" (expected drop or 403)")
        let target = try #require(error("rewrite:\n  - name: s\n    rules:\n      - {type: Response Status, where: request}\n"))
        #expect(target.field == "rewrite[0].rules[0].where")
        #expect(target.message == "a Response Status rule can't act on the request")
    }

    @Test func invalidRegexAndPresets() throws {
        let regex = try #require(error("rewrite:\n  - name: s\n    rules:\n      - type: Body\n        match: {value: \"(unclosed\", regex: true}\n"))
        #expect(regex.field == "rewrite[0].rules[0].match.value")
        #expect(regex.line == 5)
        #expect(regex.message.hasPrefix("invalid regular expression \"(unclosed\""))
        let preset = try #require(error("throttling:\n  enabled: true\n  preset: 5G\n"))
        #expect(preset.field == "throttling.preset")
        #expect(preset.line == 3 && preset.column == 3)
        let badProfile = try #require(error("throttling:\n  profile: {downloadKbps: 10, uploadKbps: 10, utilisation: 150}\n"))
        #expect(badProfile.field == "throttling.profile.utilisation")
    }

    @Test func yamlSyntaxErrorsHavePositions() throws {
        let refused = try #require(error("rewrite:\n  - name: [unclosed\n"))
        #expect(refused.line != nil)
        #expect(refused.field.isEmpty)
        let duplicate = try #require(error("blockList: []\nblockList: []\n"))
        #expect(duplicate.message.contains("blockList"))
    }

    /// YAML's flow style starts as JSON does; in a YAML file it is read as YAML, errors worded by
    /// the YAML reader with their line.
    @Test func yamlInFlowStyleIsYAML() throws {
        let rules = try RuleSet(parsing: "{blockList: [{name: ads, locations: [{host: ads.test}]}]}", file: "rules.yaml")
        #expect(rules.blockList.map(\.name) == ["ads"])
        let broken = try #require(error("{blockList: [{name: ads,\n  locations: [}]}", file: "rules.yaml"))
        #expect(broken.file == "rules.yaml" && broken.line == 2, "\(broken)")
        #expect(!broken.message.contains("JSON"), "\(broken)")
    }

    @Test func jsonDocumentsWithSyntaxAndFieldErrors() throws {
        let syntax = try #require(error("{\n  \"blockList\": [\n    {\"name\": \"x\",}\n  ]\n}", file: "rules.json"))
        #expect(syntax.file == "rules.json")
        #expect(syntax.line == 3)
        let field = try #require(error("""
            {
              "rewrite": [
                {"name": "s", "rules": [
                  {"type": "Add Header", "replace": {"name": "A"}},
                  {"type": "Nope"}
                ]}
              ]
            }
            """, file: "rules.json"))
        #expect(field.description == "rules.json:5:8: rewrite[0].rules[1].type: unknown rule type \"Nope\"")
    }

    @Test func deepNestingIsRefusedWithoutCrashing() throws {
        let deep = "rewrite: " + String(repeating: "[", count: 80) + String(repeating: "]", count: 80)
        #expect(error(deep) != nil)
    }

    /// "Billion laughs": 465 bytes that stand for 10^9 values once the aliases are followed.
    static let billionLaughs = (["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + (1..<9).map { level -> String in
        let name = String(UnicodeScalar(UInt8(97 + level)))
        let previous = String(UnicodeScalar(UInt8(96 + level)))
        return "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 10).joined(separator: ", ") + "]"
    }).joined(separator: "\n") + "\nrewrite: *i\n"

    @Test func aliasBombsAreRefusedBeforeTheyAreExpanded() throws {
        let refused = try #require(error(Self.billionLaughs))
        #expect(refused.message.contains("once its aliases (*name) are expanded"), "\(refused)")
        #expect(refused.file == "rules.yaml")
        // Aliases a real document uses are fine.
        #expect(error("blockList:\n  - {name: a, locations: [&loc {host: api.internal}]}\n  - {name: b, locations: [*loc]}\n") == nil)
    }

    @Test func documentRoundTripsThroughJSON() throws {
        let text = """
            blockList:
              - {name: ads, locations: [{host: "ads.*"}], action: drop}
            allowList:
              - {name: ours, enabled: false, locations: [{host: "*.example.com", port: 8443}]}
            mapLocal:
              - {name: user, from: {path: /v1/user}, local: docs/user.json}
            mapRemote:
              - {name: staging, from: {host: a}, to: {protocol: https, host: b, path: "/v2/*"}, preserveHost: true}
            rewrite:
              - name: auth
                locations: [{host: api.example.com}]
                rules:
                  - {type: Modify Header, where: both, match: {name: A, value: "(x)", regex: true, wholeValue: true}, replace: {value: "$1"}, replaceAll: true}
            noCaching:
              - {name: fresh}
            throttling:
              enabled: true
              preset: Train
              presets:
                - {name: Train, downloadKbps: 300, uploadKbps: 100, latencyMs: 600}
            """
        let rules = try RuleSet(parsing: text, file: "rules.yaml")
        let again = try RuleSet(parsing: try rules.jsonText(), file: "rules.json")
        #expect(again == rules)
        // What PUT /api/rules writes back over a YAML rules file reads back the same.
        #expect(try RuleSet(parsing: try rules.yamlText(), file: "saved.yaml") == rules)
        #expect(rules.rewrite[0].rules[0].target == .both)
        #expect(rules.throttling.activeProfile?.name == "Train")
        #expect(try RuleSet(parsing: "", file: "empty.yaml") == RuleSet())
    }

    @Test func readsFiles() throws {
        let path = NSTemporaryDirectory() + "kagami-rules-\(UUID().uuidString).yaml"
        try Data("noCaching:\n  - {name: all}\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try RuleSet(contentsOf: path).noCaching.map(\.name) == ["all"])
        #expect(throws: RuleDocumentError.self) { try RuleSet(contentsOf: path + ".missing") }
    }
}
