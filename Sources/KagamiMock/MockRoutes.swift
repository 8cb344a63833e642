// The contract compiled for serving: routes ordered by specificity, schemas compiled once.
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import KagamiURITemplate

/// One action of the description, ready to answer requests.
struct MockRoute: Sendable {
    let action: Action
    let method: String
    let template: URITemplate
    let pathTemplate: URITemplate
    /// Compiled request body schemas, by index into `action.examples[i].requests[j]`.
    let requestSchemas: [[JSONSchema?]]
    /// Compiled parameter schemas (OpenAPI), by parameter name.
    let parameterSchemas: [String: JSONSchema]
}

enum RouteLookup {
    case matched(MockRoute, URITemplate.Match)
    case methodNotAllowed(allowed: [String])
    case notFound(closest: [String])
}

struct MockRoutes: Sendable {
    let contract: APIContract
    /// Most specific first, then document order.
    let routes: [MockRoute]
    /// Actions whose template does not parse, as `file:line:column: error: message` lines.
    let errors: [String]

    init(contract: APIContract, path: String) {
        var routes: [MockRoute] = []
        var errors: [String] = []
        for (resource, action) in contract.resources.flatMap({ resource in resource.actions.map { (resource, $0) } }) {
            let template: URITemplate
            do {
                template = try URITemplate(action.uriTemplate)
            } catch {
                // The template is written on the resource's header unless the action has its own.
                let written = action.uriTemplate == resource.uriTemplate ? resource.sourceLocation : action.sourceLocation
                let line = written?.line ?? 1
                let column = written?.column ?? 1
                errors.append("\(path):\(line):\(column): error: \(action.method) \(action.uriTemplate): \(error)")
                continue
            }
            let requestSchemas = action.examples.map { example in
                example.requests.map { request in request.payload.schema.flatMap(Self.compile) }
            }
            var parameterSchemas: [String: JSONSchema] = [:]
            for parameter in action.parameters {
                if let schema = parameter.schema.flatMap(Self.compile) { parameterSchemas[parameter.name] = schema }
            }
            routes.append(MockRoute(
                action: action, method: action.method.uppercased(), template: template,
                pathTemplate: template.pathTemplate, requestSchemas: requestSchemas, parameterSchemas: parameterSchemas))
        }
        // Stable: among equally specific templates the earlier action wins.
        let ordered = routes.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element.pathTemplate.specificity, rhs.element.pathTemplate.specificity)
            return l != r ? r < l : lhs.offset < rhs.offset
        }.map(\.element)
        self.contract = contract
        self.routes = ordered
        self.errors = errors
    }

    private static func compile(_ schema: JSONValue) -> JSONSchema? {
        try? JSONSchema(compiling: schema)
    }

    func lookup(method: String, target: URITemplate.Target) -> RouteLookup {
        var allowed: [String] = []
        for route in routes {
            // The path decides the route; query variables are checked by validation, not routing.
            guard let pathMatch = route.pathTemplate.match(target) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .matched(route, route.template.match(target) ?? pathMatch)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if !allowed.isEmpty { return .methodNotAllowed(allowed: allowed) }
        return .notFound(closest: closestRoutes(to: target.path))
    }

    /// Up to three routes whose path template reads closest to `path`.
    func closestRoutes(to path: String) -> [String] {
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
