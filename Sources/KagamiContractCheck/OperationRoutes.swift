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
    let source: JSONValue
    /// Formats asserted, and which message the schema describes (for readOnly/writeOnly).
    private let options: JSONSchema.Options
    /// nil until compiled; then the outcome, itself nil when the schema does not compile.
    private let compiled = Mutex<JSONSchema??>(nil)

    init(_ source: JSONValue, options: JSONSchema.Options) {
        self.source = source
        self.options = options
    }

    var schema: JSONSchema? {
        compiled.withLock { compiled in
            if let outcome = compiled { return outcome }
            let outcome = try? JSONSchema(compiling: source, options: options)
            compiled = .some(outcome)
            return outcome
        }
    }

    /// The schema compiled for a use that doesn't keep it (lint's example check): the one
    /// compiled already when there is one, else compiled anew and not kept here.
    var compiledWithoutKeeping: JSONSchema? {
        if let outcome = compiled.withLock({ $0 }) { return outcome }
        return try? JSONSchema(compiling: source, options: options)
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
    /// `pathTemplate`'s specificity, worked out once: sorting and routing compare it often.
    let specificity: URITemplate.Specificity
    /// The action's position among the description's actions.
    public let documentOrder: Int
    /// Request body schemas, by index into `action.examples[i].requests[j]`.
    let requestSchemaSources: [[RouteSchema?]]
    /// Response body schemas, by index into `action.examples[i].responses[j]`.
    let responseSchemaSources: [[RouteSchema?]]
    /// Parameter schemas (OpenAPI), by parameter name.
    let parameterSchemaSources: [String: RouteSchema]
    /// The schemas of the headers responses declare (OpenAPI), by the schema: a header such
    /// as `X-Rate-Limit` is declared alike on many responses.
    let headerSchemaSources: [JSONValue: RouteSchema]

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

    /// The compiled schema of a header a response declares.
    func headerSchema(_ header: ResponseHeader) -> JSONSchema? {
        header.schema.flatMap { headerSchemaSources[$0]?.schema }
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

    /// `assertsFormat`: formats with a precise definition (date-time, email, uuid, int32…) are
    /// checked in bodies and parameters (`--no-assert-format` turns it off).
    public init(contract: APIContract, assertsFormat: Bool = true) {
        let requestOptions = JSONSchema.Options(assertsFormat: assertsFormat, direction: .request)
        let responseOptions = JSONSchema.Options(assertsFormat: assertsFormat, direction: .response)
        var routes: [OperationRoute] = []
        var errors: [Annotation] = []
        // The actions of a resource share its template: each is read once, with the path part
        // and the specificity routing needs.
        var templates: [String: (template: URITemplate, path: URITemplate, specificity: URITemplate.Specificity)] = [:]
        // Built on one core: routes built on all cores were allocated apart from the memory
        // the document's values had just given back, 25 MB more at the peak of a large
        // description's mock.
        for resource in contract.resources {
            for action in resource.actions {
                let template: URITemplate
                let pathTemplate: URITemplate
                let specificity: URITemplate.Specificity
                do {
                    if let known = templates[action.uriTemplate] {
                        (template, pathTemplate, specificity) = known
                    } else {
                        template = try URITemplate(action.uriTemplate)
                        pathTemplate = template.pathTemplate
                        specificity = pathTemplate.specificity
                        templates[action.uriTemplate] = (template, pathTemplate, specificity)
                    }
                } catch {
                    // The template is written on the resource's header unless the action has its own.
                    let written = action.uriTemplate == resource.uriTemplate ? resource.sourceLocation : action.sourceLocation
                    errors.append(Annotation(.error, "invalid URI template in \(action.method) \(action.uriTemplate): \(error)", at: written))
                    continue
                }
                let requestSchemas = action.examples.map { example in
                    example.requests.map { request in request.payload.schema.map { RouteSchema($0, options: requestOptions) } }
                }
                let responseSchemas = action.examples.map { example in
                    example.responses.map { response in response.payload.schema.map { RouteSchema($0, options: responseOptions) } }
                }
                var parameterSchemas: [String: RouteSchema] = [:]
                for parameter in action.parameters {
                    if let schema = parameter.schema { parameterSchemas[parameter.name] = RouteSchema(schema, options: requestOptions) }
                }
                var headerSchemas: [JSONValue: RouteSchema] = [:]
                for example in action.examples {
                    for response in example.responses {
                        for header in response.declaredHeaders {
                            guard let schema = header.schema, headerSchemas[schema] == nil else { continue }
                            headerSchemas[schema] = RouteSchema(schema, options: responseOptions)
                        }
                    }
                }
                routes.append(OperationRoute(
                    action: action, method: action.method.uppercased(), template: template,
                    pathTemplate: pathTemplate, sourceLocation: action.sourceLocation ?? resource.sourceLocation,
                    specificity: specificity, documentOrder: routes.count,
                    requestSchemaSources: requestSchemas, responseSchemaSources: responseSchemas, parameterSchemaSources: parameterSchemas,
                    headerSchemaSources: headerSchemas))
            }
        }
        // Stable: among equally specific templates the earlier action wins. Positions are
        // sorted, not the routes: moving a route copies all it holds (a description of tens of
        // thousands of actions spent seconds there).
        let specificities = routes.map(\.specificity)
        let order = routes.indices.sorted { lhs, rhs in
            specificities[lhs] != specificities[rhs] ? specificities[rhs] < specificities[lhs] : lhs < rhs
        }
        let ordered = order.map { routes[$0] }
        self.contract = contract
        self.routes = ordered
        self.templateErrors = errors
        self.basePaths = Self.basePaths(of: contract.servers)
        self.index = RouteIndex(ordered)
    }

    /// Which routes a path can reach, by the literal segments their templates start with.
    let index: RouteIndex

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
        let candidates = index.candidates(for: target.path)
        // The most specific path that matches is the resource (`/pets/mine` before
        // `/pets/{id}`, as OpenAPI matches concrete paths first); only its methods answer.
        var resourceSpecificity: URITemplate.Specificity?
        for position in candidates {
            let route = routes[position]
            // The path decides the route; query variables are checked by validation, not routing.
            guard let pathMatch = route.pathTemplate.match(target) else { continue }
            if let resourceSpecificity, route.specificity != resourceSpecificity { continue }
            resourceSpecificity = route.specificity
            if route.method == method || (method == "HEAD" && route.method == "GET" && !hasRoute(method: "HEAD", at: target, among: candidates)) {
                return .matched(route, route.template.match(target) ?? pathMatch)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if !allowed.isEmpty { return .methodNotAllowed(allowed: allowed) }
        return .notFound(closest: closestRoutes(to: target.path))
    }

    private func hasRoute(method: String, at target: URITemplate.Target, among candidates: [Int]) -> Bool {
        candidates.contains { routes[$0].method == method && routes[$0].pathTemplate.match(target) != nil }
    }

    /// Up to three routes whose path template reads closest to `path` (by edit distance; the
    /// more specific, then the earlier, of equally close ones), each `METHOD template` once.
    public func closestRoutes(to path: String) -> [String] {
        let wanted = Array(path.utf8)
        // The three closest so far, closest first. A route can only join them by being
        // closer than the third, and no distance is below the difference in length, so most
        // of a large description is passed over or given up on after a few rows.
        var closest: [(distance: Int, text: String)] = []
        for route in routes {
            let template = Array(route.pathTemplate.text.utf8)
            let bound = closest.count == 3 ? closest[2].distance : Int.max
            guard abs(template.count - wanted.count) < bound,
                  let distance = Self.editDistance(wanted, template, below: bound) else { continue }
            let text = "\(route.method) \(route.pathTemplate.text)"
            // The same operation written twice: its first place stands.
            guard !closest.contains(where: { $0.text == text }) else { continue }
            let place = closest.firstIndex { $0.distance > distance } ?? closest.count
            closest.insert((distance, text), at: place)
            if closest.count > 3 { closest.removeLast() }
        }
        return closest.map(\.text)
    }

    /// The edit distance between `a` and `b` when it is below `bound`, else nil (given up on
    /// as soon as every way through the table is at the bound).
    static func editDistance(_ a: [UInt8], _ b: [UInt8], below bound: Int = .max) -> Int? {
        if a.isEmpty { return b.count < bound ? b.count : nil }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            var smallest = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                smallest = min(smallest, current[j])
            }
            if smallest >= bound { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] < bound ? previous[b.count] : nil
    }
}

/// Routes by the literal path segments their templates start with (`/v1/pets/{id}`: `v1`,
/// `pets`), so that a request is matched against the routes that can reach its path rather
/// than every route of a description of thousands. A path holding a byte that percent-encoding
/// normalisation could change (`%`, a space, non-ASCII) is matched against every route, as are
/// templates whose first segment holds anything but plain characters.
struct RouteIndex: Sendable {
    private struct Node: Sendable {
        /// Positions in `nodes` of the nodes one literal segment further.
        var children: [Substring: Int] = [:]
        /// Positions in the routes, ascending.
        var routes: [Int] = []
    }

    /// The root first.
    private var nodes = [Node()]
    private let count: Int

    init(_ routes: [OperationRoute]) {
        count = routes.count
        for (position, route) in routes.enumerated() {
            var node = 0
            // Whole literal segments before the first expression; the last segment before it
            // is partly a variable (`/items{?q}` is only `items` when the query is cut off,
            // which `pathTemplate` does), so it is left out.
            let text = route.pathTemplate.text
            let literal = text.prefix { $0 != "{" }
            var segments = literal.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            if literal.count < text.count { segments = segments.dropLast() }
            if !literal.hasPrefix("/") { segments = [] }
            for segment in segments {
                guard segment.utf8.allSatisfy(Self.isPlain) else { break }
                if let child = nodes[node].children[segment] {
                    node = child
                } else {
                    nodes.append(Node())
                    nodes[node].children[segment] = nodes.count - 1
                    node = nodes.count - 1
                }
            }
            nodes[node].routes.append(position)
        }
    }

    /// Positions of the routes that may match `path`, ascending.
    func candidates(for path: String) -> [Int] {
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ $0 == UInt8(ascii: "/") || Self.isPlain($0) }) else {
            return Array(0..<count)
        }
        var found = nodes[0].routes
        var node = 0
        var merged = false
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let child = nodes[node].children[segment] else { break }
            node = child
            if !nodes[child].routes.isEmpty {
                found += nodes[child].routes
                merged = true
            }
        }
        if merged { found.sort() }
        return found
    }

    /// Bytes that percent-encoding normalisation leaves as they are (unreserved characters and
    /// sub-delimiters, `:` and `@`), other than `/`.
    static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
             UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            true
        default:
            false
        }
    }
}
