import Foundation
import KagamiJSON
import Yams

/// A whole rules document: every tool's rules in their own ordered list, plus throttling.
/// Within a list, order is the order rules run in; across tools, `RulePipeline` fixes the order.
public struct RuleSet: Sendable, Hashable, Codable {
    public var blockList: [BlockListRule]
    public var allowList: [AllowListRule]
    public var mapLocal: [MapLocalRule]
    public var mapRemote: [MapRemoteRule]
    public var rewrite: [RewriteSet]
    public var noCaching: [NoCachingRule]
    public var throttling: ThrottleSettings
    /// What no session may keep in clear; nil when the document has no `redaction` section.
    public var redaction: RedactionSettings?

    public init(
        blockList: [BlockListRule] = [], allowList: [AllowListRule] = [], mapLocal: [MapLocalRule] = [],
        mapRemote: [MapRemoteRule] = [], rewrite: [RewriteSet] = [], noCaching: [NoCachingRule] = [],
        throttling: ThrottleSettings = ThrottleSettings(), redaction: RedactionSettings? = nil
    ) {
        self.blockList = blockList
        self.allowList = allowList
        self.mapLocal = mapLocal
        self.mapRemote = mapRemote
        self.rewrite = rewrite
        self.noCaching = noCaching
        self.throttling = throttling
        self.redaction = redaction
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case blockList, allowList, mapLocal, mapRemote, rewrite, noCaching, throttling, redaction
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        blockList = try container.decode(.blockList, default: [])
        allowList = try container.decode(.allowList, default: [])
        mapLocal = try container.decode(.mapLocal, default: [])
        mapRemote = try container.decode(.mapRemote, default: [])
        rewrite = try container.decode(.rewrite, default: [])
        noCaching = try container.decode(.noCaching, default: [])
        throttling = try container.decode(.throttling, default: ThrottleSettings())
        redaction = try container.decodeIfPresent(RedactionSettings.self, forKey: .redaction)
    }

    /// Reads a rules document, YAML or JSON; `file` names it in errors.
    public init(parsing text: String, file: String = "rules") throws(RuleDocumentError) {
        self = try RuleDocumentReader.decode(RuleSet.self, from: text, file: file)
    }

    /// Reads a rules file; its directory is where relative Map Local paths start.
    public init(contentsOf path: String) throws(RuleDocumentError) {
        let document = try RuleDocumentReader.text(contentsOf: path)
        try self.init(parsing: document.text, file: document.file)
    }

    /// The document as JSON, for the admin API and for saving.
    public func jsonText() throws -> String {
        try jsonValue().serialized([.prettyPrinted, .sortedKeys])
    }

    /// The document as a JSON value: every field written out, defaults included.
    public func jsonValue() throws -> JSONValue {
        try JSONValue(parsing: try JSONEncoder().encode(self))
    }

    /// The document as YAML, for saving over a YAML rules file.
    public func yamlText() throws -> String {
        try YAMLEncoder().encode(self)
    }
}
