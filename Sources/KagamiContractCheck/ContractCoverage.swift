// What the traffic exercised of a description: operations, documented statuses, and response
// properties seen against those documented.
import KagamiContract
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema

/// The property paths each documented response body has, from its schema: `/id`,
/// `/items/*/name` (`*` for any array item).
struct DocumentedProperties: Sendable {
    /// Route (document order) → status text → paths.
    private let paths: [Int: [String: Set<String>]]

    init(routes: OperationRoutes) {
        var paths: [Int: [String: Set<String>]] = [:]
        for route in routes.routes {
            for (response, _) in route.responses {
                guard let schema = response.payload.schema else { continue }
                var found = paths[route.documentOrder]?[response.statusText] ?? []
                Self.collect(schema, prefix: "", depth: 0, into: &found)
                paths[route.documentOrder, default: [:]][response.statusText] = found
            }
        }
        self.paths = paths
    }

    func documented(route: Int, status: String) -> Set<String> {
        paths[route]?[status] ?? []
    }

    /// The documented paths `body` has.
    func seen(in body: JSONValue, route: Int, status: String) -> Set<String> {
        let documented = documented(route: route, status: status)
        guard !documented.isEmpty else { return [] }
        var seen = Set<String>()
        var budget = 10_000
        Self.walk(body, prefix: "", depth: 0, documented: documented, budget: &budget, into: &seen)
        return seen
    }

    private static func collect(_ schema: JSONValue, prefix: String, depth: Int, into paths: inout Set<String>) {
        guard depth < 16, case .object(let object) = schema else { return }
        if case .object(let properties)? = object["properties"] {
            for (name, property) in properties {
                let path = prefix + "/" + JSONPointer.escape(name)
                paths.insert(path)
                collect(property, prefix: path, depth: depth + 1, into: &paths)
            }
        }
        if let items = object["items"] { collect(items, prefix: prefix + "/*", depth: depth + 1, into: &paths) }
        for combinator in ["allOf", "anyOf", "oneOf", "prefixItems"] {
            for branch in object[combinator]?.arrayValue ?? [] {
                collect(branch, prefix: combinator == "prefixItems" ? prefix + "/*" : prefix, depth: depth + 1, into: &paths)
            }
        }
    }

    private static func walk(_ value: JSONValue, prefix: String, depth: Int, documented: Set<String>, budget: inout Int, into seen: inout Set<String>) {
        guard depth < 32, budget > 0 else { return }
        budget -= 1
        switch value {
        case .object(let object):
            for (name, member) in object {
                let path = prefix + "/" + JSONPointer.escape(name)
                guard documented.contains(path) else { continue }
                seen.insert(path)
                walk(member, prefix: path, depth: depth + 1, documented: documented, budget: &budget, into: &seen)
            }
        case .array(let items):
            for item in items { walk(item, prefix: prefix + "/*", depth: depth + 1, documented: documented, budget: &budget, into: &seen) }
        default:
            break
        }
    }
}

/// Coverage of one description by the exchanges checked against it.
public struct ContractCoverage: Sendable {
    public struct Operation: Sendable {
        public var operation: ContractViolation.Operation
        /// Line of the description where the operation is written.
        public var line: Int?
        /// Exchanges matched to the operation.
        public var exchanges: Int
        /// Documented statuses in document order, with how many exchanges got each.
        public var statuses: [(status: String, exchanges: Int)]
        /// Documented response properties (all statuses), and those seen in responses.
        public var documentedProperties: Set<String>
        public var seenProperties: Set<String>
        /// Violations found in the operation's exchanges (errors and warnings).
        public var violations: Int
    }

    public var path: String
    public var operations: [Operation]
    /// Exchanges in the description's scope that matched no operation.
    public var undocumentedExchanges: Int = 0

    public init(_ check: ContractCheck) {
        path = check.path
        operations = check.routes.inDocumentOrder.map { route in
            var statuses: [(String, Int)] = []
            var documented = Set<String>()
            for (response, _) in route.responses where !statuses.contains(where: { $0.0 == response.statusText }) {
                statuses.append((response.statusText, 0))
                documented.formUnion(check.documentedProperties.documented(route: route.documentOrder, status: response.statusText).map { "\(response.statusText) \($0)" })
            }
            return Operation(
                operation: route.operation, line: route.sourceLocation?.line, exchanges: 0, statuses: statuses,
                documentedProperties: documented, seenProperties: [], violations: 0)
        }
    }

    /// Counts one checked exchange.
    public mutating func record(_ result: ContractCheckResult) {
        guard let route = result.routeIndex, route < operations.count else {
            undocumentedExchanges += 1
            return
        }
        operations[route].exchanges += 1
        operations[route].violations += result.violations.filter(\.isDisagreement).count
        if let status = result.status, let index = operations[route].statuses.firstIndex(where: { $0.status == status }) {
            operations[route].statuses[index].exchanges += 1
            operations[route].seenProperties.formUnion(result.properties.map { "\(status) \($0)" })
        }
    }

    public var operationsSeen: Int { operations.filter { $0.exchanges > 0 }.count }
    public var statusesDocumented: Int { operations.reduce(0) { $0 + $1.statuses.count } }
    public var statusesSeen: Int { operations.reduce(0) { $0 + $1.statuses.filter { $0.exchanges > 0 }.count } }
    public var propertiesDocumented: Int { operations.reduce(0) { $0 + $1.documentedProperties.count } }
    public var propertiesSeen: Int { operations.reduce(0) { $0 + $1.seenProperties.count } }

    /// `{description, operations: {documented, seen}, statuses: {…}, properties: {…}, details: […]}`.
    public var json: JSONValue {
        let details: [JSONValue] = operations.map { operation in
            [
                "name": .string(operation.operation.name),
                "method": .string(operation.operation.method),
                "template": .string(operation.operation.template),
                "line": operation.line.map(JSONValue.integer) ?? .null,
                "exchanges": .integer(operation.exchanges),
                "violations": .integer(operation.violations),
                "statuses": .array(operation.statuses.map { ["status": .string($0.status), "exchanges": .integer($0.exchanges)] }),
                "properties": [
                    "documented": .integer(operation.documentedProperties.count),
                    "seen": .integer(operation.seenProperties.count),
                    "unseen": .array(operation.documentedProperties.subtracting(operation.seenProperties).sorted().map(JSONValue.string)),
                ],
            ]
        }
        return [
            "description": .string(path),
            "operations": ["documented": .integer(operations.count), "seen": .integer(operationsSeen)],
            "statuses": ["documented": .integer(statusesDocumented), "seen": .integer(statusesSeen)],
            "properties": ["documented": .integer(propertiesDocumented), "seen": .integer(propertiesSeen)],
            "undocumentedExchanges": .integer(undocumentedExchanges),
            "details": .array(details),
        ]
    }
}
