// Comparable facts about a parsed description, read either from drafter's API Elements
// (refract JSON) parse result or from our contract model, so the two can be compared.
@testable import KagamiBlueprint
import KagamiContract
import KagamiJSON

struct MessageFacts: Equatable {
    var headers: [String] = []
    var body: String?
    var schema: String?

    static func == (lhs: MessageFacts, rhs: MessageFacts) -> Bool {
        lhs.headers == rhs.headers && sameText(lhs.body, rhs.body) && sameSchema(lhs.schema, rhs.schema)
    }

    /// JSON texts compare as JSON values; other texts without surrounding whitespace.
    static func sameText(_ lhs: String?, _ rhs: String?) -> Bool {
        sameText(lhs, rhs, normalising: { $0 })
    }

    /// Schemas compare after drafter's draft 7 form is written as draft 4 (see `draft4`).
    static func sameSchema(_ lhs: String?, _ rhs: String?) -> Bool {
        sameText(lhs, rhs, normalising: draft4)
    }

    /// drafter 5 writes MSON schemas as draft 7; Kagami writes the same schemas as draft 4, which
    /// differ only in `$schema` and in `const: x`, which draft 4 writes `enum: [x]`. One Of's
    /// `oneOf` is compared as the `anyOf` Kagami writes (see docs/CONFORMANCE.md).
    static func draft4(_ schema: JSONValue) -> JSONValue {
        switch schema {
        case .object(let members):
            var result = JSONObject()
            for (key, value) in members {
                switch key {
                case "$schema" where value.stringValue == "http://json-schema.org/draft-07/schema#":
                    result[key] = "http://json-schema.org/draft-04/schema#"
                case "const": result["enum"] = [draft4(value)]
                // One Of: Kagami writes drafter's unsatisfiable `oneOf` as `anyOf`.
                case "oneOf": result["anyOf"] = draft4(value)
                default: result[key] = draft4(value)
                }
            }
            return .object(result)
        case .array(let items):
            return .array(items.map(draft4))
        default:
            return schema
        }
    }

    private static func sameText(_ lhs: String?, _ rhs: String?, normalising: (JSONValue) -> JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (let left?, let right?):
            if let a = try? JSONValue(parsing: left), let b = try? JSONValue(parsing: right) { return normalising(a).isJSONEqual(to: normalising(b)) }
            return left.trimmedNewlines == right.trimmedNewlines
        default: return false
        }
    }
}

struct TransactionFacts: Equatable {
    var method: String?
    var request: MessageFacts?
    var status: Int?
    var response: MessageFacts?
}

struct ActionFacts: Equatable {
    var method: String
    var href: String
    var variables: [String]
    var transactions: [TransactionFacts]
}

struct DescriptionFacts {
    var actions: [ActionFacts] = []
    /// Named types (`# Data Structures` and named resources' attributes), sorted.
    var dataStructures: [String] = []
    var hasWarning = false
    var hasError = false

    /// What differs, or nil when the two agree. When `expected` reports an error, agreeing
    /// means reporting an error too.
    static func difference(expected: DescriptionFacts, actual: DescriptionFacts) -> String? {
        if expected.hasError || actual.hasError {
            return expected.hasError == actual.hasError ? nil : "error annotation: expected \(expected.hasError), got \(actual.hasError)"
        }
        if expected.hasWarning != actual.hasWarning {
            return "warning annotation: expected \(expected.hasWarning), got \(actual.hasWarning)"
        }
        if expected.dataStructures != actual.dataStructures {
            return "data structures: expected \(expected.dataStructures), got \(actual.dataStructures)"
        }
        if expected.actions.count != actual.actions.count {
            return "actions: expected \(expected.actions.map { "\($0.method) \($0.href)" }), got \(actual.actions.map { "\($0.method) \($0.href)" })"
        }
        for (wanted, found) in zip(expected.actions, actual.actions) where wanted != found {
            if wanted.method != found.method || wanted.href != found.href {
                return "action: expected \(wanted.method) \(wanted.href), got \(found.method) \(found.href)"
            }
            if wanted.variables != found.variables {
                return "\(wanted.method) \(wanted.href) parameters: expected \(wanted.variables), got \(found.variables)"
            }
            if wanted.transactions.count != found.transactions.count {
                return "\(wanted.method) \(wanted.href): expected \(wanted.transactions.count) transactions, got \(found.transactions.count)"
            }
            for (a, b) in zip(wanted.transactions, found.transactions) where a != b {
                return "\(wanted.method) \(wanted.href) transaction:\n      expected \(a)\n      got      \(b)"
            }
        }
        return nil
    }
}

// MARK: From API Elements

/// Reads drafter's parse result: resources, transitions, HTTP transactions and annotations.
enum APIElementsAdapter {
    static func facts(_ parseResult: JSONValue) -> DescriptionFacts {
        var facts = DescriptionFacts()
        for element in parseResult["content"]?.arrayValue ?? [] {
            if element["element"]?.stringValue == "annotation" {
                let classes = element["meta"]?["classes"]?["content"]?.arrayValue?.compactMap { $0["content"]?.stringValue } ?? []
                if classes.contains("error") { facts.hasError = true }
                if classes.contains("warning") { facts.hasWarning = true }
            } else {
                collect(element, resourceHref: nil, resourceVariables: [], into: &facts)
            }
        }
        facts.dataStructures = Set(namedTypes(parseResult)).sorted()
        return facts
    }

    /// Ids of every `dataStructure` element in the result.
    private static func namedTypes(_ element: JSONValue) -> [String] {
        switch element {
        case .object(let members):
            var names: [String] = []
            if members["element"]?.stringValue == "dataStructure" {
                // The content is the type element, or (older results) a one-element array of it.
                let type = members["content"]?.arrayValue?.first ?? members["content"]
                if let id = type?["meta"]?["id"]?["content"]?.stringValue { names.append(id) }
            }
            for (_, value) in members { names += namedTypes(value) }
            return names
        case .array(let items):
            return items.flatMap(namedTypes)
        default:
            return []
        }
    }

    private static func collect(_ element: JSONValue, resourceHref: String?, resourceVariables: [String], into facts: inout DescriptionFacts) {
        switch element["element"]?.stringValue {
        case "resource":
            let href = element["attributes"]?["href"]?["content"]?.stringValue ?? ""
            let variables = variableNames(element["attributes"]?["hrefVariables"])
            for child in element["content"]?.arrayValue ?? [] {
                collect(child, resourceHref: href, resourceVariables: variables, into: &facts)
            }
        case "transition":
            let href = element["attributes"]?["href"]?["content"]?.stringValue ?? resourceHref ?? ""
            let variables = Set(resourceVariables + variableNames(element["attributes"]?["hrefVariables"])).sorted()
            var transactions: [TransactionFacts] = []
            for transaction in element["content"]?.arrayValue ?? [] where transaction["element"]?.stringValue == "httpTransaction" {
                var facts = TransactionFacts()
                for message in transaction["content"]?.arrayValue ?? [] {
                    switch message["element"]?.stringValue {
                    case "httpRequest":
                        facts.method = message["attributes"]?["method"]?["content"]?.stringValue
                        facts.request = messageFacts(message)
                    case "httpResponse":
                        facts.status = message["attributes"]?["statusCode"]?["content"]?.stringValue.flatMap { Int($0) }
                        facts.response = messageFacts(message)
                    default: continue
                    }
                }
                transactions.append(facts)
            }
            let method = transactions.first?.method ?? ""
            facts.actions.append(ActionFacts(method: method, href: href, variables: variables, transactions: transactions))
        case "category":
            for child in element["content"]?.arrayValue ?? [] {
                collect(child, resourceHref: resourceHref, resourceVariables: resourceVariables, into: &facts)
            }
        default:
            return
        }
    }

    /// Name, required or optional, example and default of each href variable.
    private static func variableNames(_ hrefVariables: JSONValue?) -> [String] {
        (hrefVariables?["content"]?.arrayValue ?? []).compactMap { member in
            guard let name = member["content"]?["key"]?["content"]?.stringValue else { return nil }
            let attributes = member["attributes"]?["typeAttributes"]?["content"]?.arrayValue?.compactMap { $0["content"]?.stringValue } ?? []
            let value = member["content"]?["value"]
            var example = value?["content"]?.stringValue ?? value?["content"].map { $0.serialized() } ?? ""
            if value?["element"]?.stringValue == "enum" {
                example = value?["content"]?["content"]?.stringValue ?? ""
            }
            let fallback = value?["attributes"]?["default"]
            let defaultValue = fallback?["content"]?.stringValue ?? fallback?["content"]?["content"]?.stringValue ?? ""
            return DescriptionFacts.variable(name, required: !attributes.contains("optional"), example: example, defaultValue: defaultValue)
        }
    }

    private static func messageFacts(_ message: JSONValue) -> MessageFacts {
        var facts = MessageFacts()
        for header in message["attributes"]?["headers"]?["content"]?.arrayValue ?? [] {
            let name = header["content"]?["key"]?["content"]?.stringValue ?? ""
            let value = header["content"]?["value"]?["content"]?.stringValue ?? ""
            facts.headers.append("\(name): \(value)")
        }
        for asset in message["content"]?.arrayValue ?? [] where asset["element"]?.stringValue == "asset" {
            let classes = asset["meta"]?["classes"]?["content"]?.arrayValue?.compactMap { $0["content"]?.stringValue } ?? []
            if classes.contains("messageBody") { facts.body = asset["content"]?.stringValue }
            if classes.contains("messageBodySchema") { facts.schema = asset["content"]?.stringValue }
        }
        return facts
    }
}

// MARK: From the contract model

extension DescriptionFacts {
    init(_ contract: APIContract) {
        hasWarning = !contract.warnings.isEmpty
        hasError = !contract.errors.isEmpty
        dataStructures = Set(contract.dataStructures.map(\.name)).sorted()
        for action in contract.actions {
            var transactions: [TransactionFacts] = []
            for example in action.examples {
                let requests: [Request?] = example.requests.isEmpty ? [nil] : example.requests
                let responses: [Response?] = example.responses.isEmpty ? [nil] : example.responses
                for request in requests {
                    for response in responses {
                        transactions.append(TransactionFacts(
                            method: action.method, request: request.map { Self.message($0.payload) } ?? MessageFacts(),
                            status: response?.status, response: response.map { Self.message($0.payload) } ?? MessageFacts()))
                    }
                }
            }
            let method = transactions.isEmpty ? "" : action.method
            actions.append(ActionFacts(
                method: method, href: action.uriTemplate,
                variables: Set(action.parameters.map {
                    Self.variable($0.name, required: $0.required, example: $0.example ?? "", defaultValue: $0.defaultValue ?? "")
                }).sorted(),
                transactions: transactions))
        }
    }

    static func variable(_ name: String, required: Bool, example: String, defaultValue: String) -> String {
        "\(name) \(required ? "required" : "optional") example=\(example) default=\(defaultValue)"
    }

    /// Only what the description itself states: a body written or rendered from MSON, a
    /// schema written or generated from MSON (not ones Kagami derives for the mock).
    private static func message(_ payload: MessagePayload) -> MessageFacts {
        MessageFacts(
            headers: payload.headers.map { "\($0.name): \($0.value)" },
            body: payload.bodySource == .schema ? nil : payload.body,
            schema: payload.schemaSource == .body ? nil : payload.schemaText ?? payload.schema.map { $0.serialized() })
    }
}
