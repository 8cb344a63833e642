import Foundation
import KagamiFlow

extension RulePipeline {
    /// The Rewrite Body rules for the text messages of a WebSocket whose handshake was
    /// `request` (as the client sent it), in document order; nil when none covers it. A rule
    /// for the request acts on the messages the client sends, one for the response on those
    /// the server sends.
    public func messageRewrites(for request: FlowRequest) -> MessageRewrites? {
        var rules: [(set: String, rule: CompiledRewriteRule)] = []
        for index in rewrite.indices where covers(rewrite[index].locations, request) {
            for rule in rewrite[index].rules where rule.rule.type == .body {
                rules.append((rewrite[index].set.name, rule))
            }
        }
        return rules.isEmpty ? nil : MessageRewrites(rules: rules)
    }
}

/// Rewrite Body rules over the text messages of one WebSocket.
public struct MessageRewrites: Sendable {
    let rules: [(set: String, rule: CompiledRewriteRule)]

    /// True when some rule may change messages going that way.
    public func covers(_ direction: WebSocketMessage.Direction) -> Bool {
        rules.contains { Self.acts($0.rule.rule.target, on: direction) }
    }

    /// `text` after every rule for its direction, and what each rule changed.
    public func rewrite(_ text: String, going direction: WebSocketMessage.Direction) -> (text: String, applications: [RuleApplication]) {
        var text = text
        var applications: [RuleApplication] = []
        for (set, compiled) in rules where compiled.rule.isEnabled && Self.acts(compiled.rule.target, on: direction) {
            guard let replaced = compiled.rewriteText(text) else { continue }
            applications.append(RuleApplication(
                name: "Rewrite '\(set)'", description: "rewrote message (\(text.utf8.count) → \(replaced.utf8.count) bytes)"))
            text = replaced
        }
        return (text, applications)
    }

    private static func acts(_ target: RewriteTarget, on direction: WebSocketMessage.Direction) -> Bool {
        direction == .send ? target.includesRequest : target.includesResponse
    }
}
