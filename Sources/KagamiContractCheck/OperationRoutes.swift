// The contract compiled for matching exchanges: routes ordered by specificity, schemas compiled
// once. The mock server answers from it and the contract check matches traffic with it.
import KagamiContract
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema
import KagamiURITemplate
import Synchronization

/// A body or parameter schema, compiled the first time a check needs it: a description of
/// thousands of operations is served or linted at once, and only the schemas its traffic
/// reaches are ever compiled. A schema that does not compile is nil, as it was compiled
/// eagerly.
final class RouteSchema: Sendable {
    private let source: JSONValue
    /// nil until compiled; then the outcome, itself nil when the schema does not compile.
    private let compiled = Mutex<JSONSchema??>(nil)

    init(_ source: JSONValue) {
        self.source = source
    }

    var schema: JSONSchema? {
        compiled.withLock { compiled in
            if let outcome = compiled { return outcome }
            let outcome = try? JSONSchema(compiling: source)
            compiled = .some(outcome)
            return outcome
        }
    }
}

/// One action of the description, ready to match requests and check messages.
public struct OperationRoute: Sendable {
    public let action: Action
    /// Upper-cased.
    public let method: String
    public let template: URITemplate
    public let pathTemplate: URITemplate
    /// Where the action is written in the description.
    public let sourceLocation: SourceLocation?
    /// The action's position among the description's actions.
    public let documentOrder: Int
    /// Request body schemas, by index into `action.examples[i].requests[j]`.
    let requestSchemaSources: [[RouteSchema?]]
    /// Response body schemas, by index into `action.examples[i].responses[j]`.
    let responseSchemaSources: [[RouteSchema?]]
    /// Parameter schemas (OpenAPI), by parameter name.
    let parameterSchemaSources: [String: RouteSchema]

    /// Compiled request body schemas, by index into `action.examples[i].requests[j]`.
    public var requestSchemas: [[JSONSchema?]] {
        requestSchemaSources.map { $0.map { $0?.schema } }
    }

    /// The compiled schema of `action.examples[example].requests[index]`.
    public func requestSchema(example: Int, index: Int) -> JSONSchema? {
        requestSchemaSources[example][index]?.schema
    }

    /// Compiled parameter schemas (OpenAPI), by parameter name.
    func parameterSchema(_ name: String) -> JSONSchema? {
        parameterSchemaSources[name]?.schema
    }

    /// How violations and reports name the operation.
    public var operation: ContractViolation.Operation {
        ContractViolation.Operation(name: action.name, method: method, template: action.uriTemplate)
    }

    /// Every documented response with the schema compiled for it, in document order.
    var responses: [(response: Response, schema: JSONSchema?)] {
        var result: [(Response, JSONSchema?)] = []
        for (index, example) in action.examples.enumerated() {
            for (responseIndex, response) in example.responses.enumerated() {
                result.append((response, responseSchemaSources[index][responseIndex]?.schema))
            }
        }
        return result
    }
}

public enum RouteLookup: Sendable {
    case matched(OperationRoute, URITemplate.Match)
    case methodNotAllowed(allowed: [String])
    case notFound(closest: [String])
}

public struct OperationRoutes: Sendable {
    public let contract: APIContract
    /// Most specific first, then document order.
    public let routes: [OperationRoute]
    /// Every route in document order.
    public var inDocumentOrder: [OperationRoute] { routes.sorted { $0.documentOrder < $1.documentOrder } }
    /// Actions whose template does not parse, with where the template is written.
    public let templateErrors: [Annotation]

    public init(contract: APIContract) {
        var routes: [OperationRoute] = []
        var errors: [Annotation] = []
        for (resource, action) in contract.resources.flatMap({ resource in resource.actions.map { (resource, $0) } }) {
            let template: URITemplate
            do {
                template = try URITemplate(action.uriTemplate)
            } catch {
                // The template is written on the resource's header unless the action has its own.
                let written = action.uriTemplate == resource.uriTemplate ? resource.sourceLocation : action.sourceLocation
                errors.append(Annotation(.error, "invalid URI template in \(action.method) \(action.uriTemplate): \(error)", at: written))
                continue
            }
            let requestSchemas = action.examples.map { example in
                example.requests.map { request in request.payload.schema.map(RouteSchema.init) }
            }
            let responseSchemas = action.examples.map { example in
                example.responses.map { response in response.payload.schema.map(RouteSchema.init) }
            }
            var parameterSchemas: [String: RouteSchema] = [:]
            for parameter in action.parameters {
                if let schema = parameter.schema { parameterSchemas[parameter.name] = RouteSchema(schema) }
            }
            routes.append(OperationRoute(
                action: action, method: action.method.uppercased(), template: template,
                pathTemplate: template.pathTemplate, sourceLocation: action.sourceLocation ?? resource.sourceLocation, documentOrder: routes.count,
                requestSchemaSources: requestSchemas, responseSchemaSources: responseSchemas, parameterSchemaSources: parameterSchemas))
        }
        // Stable: among equally specific templates the earlier action wins.
        let ordered = routes.sorted { lhs, rhs in
            let (l, r) = (lhs.pathTemplate.specificity, rhs.pathTemplate.specificity)
            return l != r ? r < l : lhs.documentOrder < rhs.documentOrder
        }
        self.contract = contract
        self.routes = ordered
        self.templateErrors = errors
        self.basePaths = Self.basePaths(of: contract.servers)
    }

    /// The path parts of the description's servers (`/v1` of `https://api.example.com/v1`),
    /// longest first: requests arrive with them, the templates are written without.
    public let basePaths: [String]

    /// Path prefixes of `servers` (as the contract check reads them), the root left out.
    static func basePaths(of servers: [Server]) -> [String] {
        var paths: [String] = []
        for server in servers {
            guard let path = BaseURL(server.url)?.path, !path.isEmpty, !paths.contains(path) else { continue }
            paths.append(path)
        }
        return paths.sorted { $0.count > $1.count }
    }

    /// The route for `method` at `target` (under one of the servers' base paths, or not);
    /// HEAD falls back to GET.
    public func lookup(method: String, target: URITemplate.Target) -> RouteLookup {
        var underBase: RouteLookup?
        for base in basePaths where target.path == base || target.path.hasPrefix(base + "/") {
            let rest = String(target.path.dropFirst(base.count))
            let inner = URITemplate.Target(path: rest.isEmpty ? "/" : rest, query: target.query)
            switch lookupWithoutBase(method: method, target: inner) {
            case .matched(let route, let match): return .matched(route, match)
            case .methodNotAllowed(let allowed): underBase = underBase ?? .methodNotAllowed(allowed: allowed)
            case .notFound: continue
            }
        }
        let whole = lookupWithoutBase(method: method, target: target)
        if case .notFound = whole, let underBase { return underBase }
        return whole
    }

    private func lookupWithoutBase(method: String, target: URITemplate.Target) -> RouteLookup {
        var allowed: [String] = []
        // The most specific path that matches is the resource (`/pets/mine` before
        // `/pets/{id}`, as OpenAPI matches concrete paths first); only its methods answer.
        var resourceSpecificity: URITemplate.Specificity?
        for route in routes {
            // The path decides the route; query variables are checked by validation, not routing.
            guard let pathMatch = route.pathTemplate.match(target) else { continue }
            if let resourceSpecificity, route.pathTemplate.specificity != resourceSpecificity { continue }
            resourceSpecificity = route.pathTemplate.specificity
            if route.method == method || (method == "HEAD" && route.method == "GET" && !hasRoute(method: "HEAD", at: target)) {
                return .matched(route, route.template.match(target) ?? pathMatch)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if !allowed.isEmpty { return .methodNotAllowed(allowed: allowed) }
        return .notFound(closest: closestRoutes(to: target.path))
    }

    private func hasRoute(method: String, at target: URITemplate.Target) -> Bool {
        routes.contains { $0.method == method && $0.pathTemplate.match(target) != nil }
    }

    /// Up to three routes whose path template reads closest to `path`.
    public func closestRoutes(to path: String) -> [String] {
        let scored = routes.map { route in
            (text: "\(route.method) \(route.pathTemplate.text)", distance: Self.editDistance(Array(path.utf8), Array(route.pathTemplate.text.utf8)))
        }
        var seen = Set<String>()
        return scored.enumerated()
            .sorted { $0.element.distance != $1.element.distance ? $0.element.distance < $1.element.distance : $0.offset < $1.offset }
            .map(\.element.text)
            .filter { seen.insert($0).inserted }
            .prefix(3).map { $0 }
    }

    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
