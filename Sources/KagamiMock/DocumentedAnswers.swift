// What a proxy's contract check descriptions document, answered as the mock answers it.
import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema
import KagamiScenarios

/// The responses the descriptions of a contract check document, rendered as `kagami mock`
/// renders them: a scenario's `error` state in the proxy answers the documented error of the
/// request's operation, and its `empty` state the empty answer the operation's description
/// shapes, as the mock's do. Read from the descriptions in force when asked (they reload).
public struct DocumentedAnswers: OperationDocumentation {
    private let contracts: LiveContracts

    public init(_ contracts: LiveContracts) {
        self.contracts = contracts
    }

    /// The response documented for `status` on the request's operation (exact, a status class
    /// or `default`, answered with `status`), from the first description whose base URL holds
    /// the request; nil when none documents it.
    public func response(status: Int, to request: FlowRequest) -> FlowResponse? {
        guard let (responder, asked) = described(request) else { return nil }
        return responder.documented(status: status, for: asked)?.flowResponse
    }

    /// The empty state's answer as the request's operation describes it (`MockResponder.emptied`).
    public func emptied(_ response: FlowResponse, to request: FlowRequest) -> FlowResponse? {
        guard let (responder, asked) = described(request) else { return nil }
        return responder.emptied(response, for: asked)
    }

    /// The responder of the first description whose base URL holds the request, and the request
    /// as that description's paths see it.
    private func described(_ request: FlowRequest) -> (MockResponder, MockRequest)? {
        let flow = Flow(mode: .forward, request: request, timings: FlowTimings(start: Date()))
        for check in contracts.set.checks {
            guard let target = check.relativeTarget(of: flow) else { continue }
            var asked = MockRequest(request)
            asked.target = target
            return (MockResponder(routes: check.routes, validates: false), asked)
        }
        return nil
    }
}

/// An answer emptied as its schema says: every array down to the fewest items the schema allows
/// (`minItems`, else none), a required array the answer left out or null given as `[]` (when
/// the schema lets it be empty), and,
/// in an object that holds a list (a page), its count members (`total`, `count`, `totalCount`…
/// typed as numbers) set to zero and its next-page members (`next`, `nextCursor`…) to null
/// where the schema allows null. Local `$ref`s resolve against the schema itself; `allOf`,
/// `anyOf` and `oneOf` branches lend their properties.
struct SchemaEmptying {
    let root: JSONValue

    /// Deeper schemas than this are not followed (self-referencing schemas stay finite).
    static let maximumDepth = 64

    func emptied(_ value: JSONValue) -> JSONValue {
        emptied(value, schema: root, depth: 0)
    }

    private func emptied(_ value: JSONValue, schema: JSONValue?, depth: Int) -> JSONValue {
        let facts = depth < Self.maximumDepth ? schema.map { Facts(of: $0, in: self, depth: 0) } : nil
        switch value {
        case .array(let items):
            let kept = max(0, facts?.minItems ?? 0)
            return .array(items.prefix(kept).map { emptied($0, schema: facts?.items, depth: depth + 1) })
        case .object(var members):
            let properties = facts?.properties ?? [:]
            var holdsList = false
            for (key, member) in members {
                if case .array = member { holdsList = true }
                members[key] = emptied(member, schema: properties[key] ?? facts?.additionalProperties, depth: depth + 1)
            }
            for key in facts?.required ?? [] where members[key] == nil || members[key] == .null {
                guard let property = properties[key].map({ Facts(of: $0, in: self, depth: 0) }), property.types.contains("array"),
                      (property.minItems ?? 0) == 0, members[key] == nil || !property.types.contains("null") else { continue }
                members[key] = .array([])
                holdsList = true
            }
            guard holdsList else { return .object(members) }
            for (key, member) in members {
                guard let property = properties[key].map({ Facts(of: $0, in: self, depth: 0) }) else { continue }
                let name = Self.plainName(key)
                if Self.countNames.contains(name), member.isNumber, property.types.contains("integer") || property.types.contains("number") {
                    members[key] = .integer(max(0, property.minimum ?? 0))
                } else if Self.nextNames.contains(name), member != .null, property.types.contains("null") {
                    members[key] = .null
                }
            }
            return .object(members)
        default:
            return value
        }
    }

    /// Names of a page's item count, compared lower-cased without `_` and `-`.
    static let countNames: Set<String> = [
        "total", "count", "totalcount", "totalitems", "totalresults", "totalelements", "totalentries", "totalrecords",
        "itemcount", "resultcount", "numitems", "numresults", "numberofitems", "numberofresults",
    ]
    /// Names of a link or cursor to the next page.
    static let nextNames: Set<String> = ["next", "nextcursor", "nextpage", "nextpagetoken", "nextlink", "nextpageurl", "nexturl"]

    static func plainName(_ key: String) -> String {
        String(key.lowercased().filter { $0 != "_" && $0 != "-" })
    }

    /// Local `$ref` followed against the root (a JSON Pointer fragment, percent-escapes
    /// decoded); nil when it points nowhere.
    func target(of reference: String) -> JSONValue? {
        guard reference.hasPrefix("#") else { return nil }
        let fragment = String(reference.dropFirst())
        guard let tokens = JSONPointer.tokens(fragment.removingPercentEncoding ?? fragment) else { return nil }
        return JSONPointer.resolve(tokens, in: root)
    }

    /// What one schema (with its references and branches) says about a value.
    struct Facts {
        var types: Set<String> = []
        var properties: [String: JSONValue] = [:]
        var additionalProperties: JSONValue?
        var required: [String] = []
        var items: JSONValue?
        var minItems: Int?
        var minimum: Int?

        init(of schema: JSONValue, in emptying: SchemaEmptying, depth: Int) {
            guard depth < SchemaEmptying.maximumDepth, case .object(let members) = schema else { return }
            if let reference = members["$ref"]?.stringValue, let target = emptying.target(of: reference) {
                add(Facts(of: target, in: emptying, depth: depth + 1))
            }
            for keyword in ["allOf", "anyOf", "oneOf"] {
                for branch in members[keyword]?.arrayValue ?? [] { add(Facts(of: branch, in: emptying, depth: depth + 1)) }
            }
            switch members["type"] {
            case .string(let type)?: types.insert(type)
            case .array(let list)?: types.formUnion(list.compactMap(\.stringValue))
            default: break
            }
            if members["nullable"]?.boolValue == true { types.insert("null") }
            if case .object(let declared)? = members["properties"] {
                for (key, value) in declared where properties[key] == nil { properties[key] = value }
            }
            if case .object? = members["additionalProperties"] { additionalProperties = additionalProperties ?? members["additionalProperties"] }
            required += members["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if let declared = members["items"], case .object = declared { items = items ?? declared }
            if let declared = members["minItems"]?.intValue { minItems = max(minItems ?? 0, declared) }
            if let declared = members["minimum"]?.intValue { minimum = max(minimum ?? declared, declared) }
            if types.isEmpty {
                if !properties.isEmpty { types.insert("object") }
                if items != nil { types.insert("array") }
            }
        }

        private mutating func add(_ other: Facts) {
            types.formUnion(other.types)
            for (key, value) in other.properties where properties[key] == nil { properties[key] = value }
            additionalProperties = additionalProperties ?? other.additionalProperties
            required += other.required
            items = items ?? other.items
            if let count = other.minItems { minItems = max(minItems ?? 0, count) }
            if let least = other.minimum { minimum = max(minimum ?? least, least) }
        }
    }
}

extension JSONValue {
    fileprivate var isNumber: Bool {
        switch self {
        case .integer, .number: true
        default: false
        }
    }
}
