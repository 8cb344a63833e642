import KagamiContract
import KagamiContractCheck
import KagamiTesting
import KagamiURITemplate
import Testing

/// Routing through the index of literal segments, and the closest routes found by a pruned
/// search, give what trying every route gave.
@Suite struct RouteLookupTests {
    static let templates = [
        "/", "/notes", "/notes/", "/notes/{id}", "/notes/{id}/tags", "/notes/mine", "/notes/{id}{?fields}", "/v1/mod1/items",
        "/v1/mod1/items/{itemId}", "/v1/mod1/items/{itemId}/archive", "/v1/mod2/items", "/v1/mod12/items/{itemId}", "/files{/path*}",
        "/raw{+rest}", "{/tenant}/things", "/a%20b/c", "/caf\u{E9}/menu", "/items{.format}", "/items{;matrix}", "/x/{a}-{b}",
        "/x/y:z", "/x/@me", "/x/(1)", "/{any}", "/v1/mod1/items/{itemId}/{+rest}",
    ]

    static func routes() throws -> OperationRoutes {
        var actions: [Action] = []
        for (index, template) in templates.enumerated() {
            for method in index % 3 == 0 ? ["GET", "POST"] : ["GET"] {
                actions.append(Action(name: "\(method) \(template)", method: method, uriTemplate: template))
            }
        }
        let contract = APIContract(format: .openAPI31, groups: [ResourceGroup(name: "", resources: [Resource(name: "all", uriTemplate: "/", actions: actions)])])
        let routes = OperationRoutes(contract: contract)
        #expect(routes.templateErrors.isEmpty, "\(routes.templateErrors)")
        return routes
    }

    /// The lookup as it was: every route in order.
    static func scan(_ routes: OperationRoutes, method: String, target: URITemplate.Target) -> String {
        var allowed: [String] = []
        var resource: URITemplate.Specificity?
        for route in routes.routes {
            guard let match = route.pathTemplate.match(target) else { continue }
            if let resource, route.pathTemplate.specificity != resource { continue }
            resource = route.pathTemplate.specificity
            let headFallsBack = method == "HEAD" && route.method == "GET"
                && !routes.routes.contains { $0.method == "HEAD" && $0.pathTemplate.match(target) != nil }
            if route.method == method || headFallsBack {
                return "matched \(route.documentOrder) \(route.template.match(target) ?? match)"
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if !allowed.isEmpty { return "not allowed \(allowed)" }
        return "not found \(closest(routes, to: target.path))"
    }

    /// The closest routes as they were found: every route scored, sorted, the first three.
    static func closest(_ routes: OperationRoutes, to path: String) -> [String] {
        func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
            if a.isEmpty { return b.count }
            var previous = Array(0...b.count)
            var current = previous
            for i in 1...a.count {
                current[0] = i
                for j in stride(from: 1, through: b.count, by: 1) {
                    current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                }
                swap(&previous, &current)
            }
            return previous[b.count]
        }
        let scored = routes.routes.map { route in
            (text: "\(route.method) \(route.pathTemplate.text)", distance: distance(Array(path.utf8), Array(route.pathTemplate.text.utf8)))
        }
        var seen = Set<String>()
        return scored.enumerated()
            .sorted { $0.element.distance != $1.element.distance ? $0.element.distance < $1.element.distance : $0.offset < $1.offset }
            .map(\.element.text)
            .filter { seen.insert($0).inserted }
            .prefix(3).map { $0 }
    }

    static func describe(_ lookup: RouteLookup, target: URITemplate.Target) -> String {
        switch lookup {
        case .matched(let route, let match): "matched \(route.documentOrder) \(match)"
        case .methodNotAllowed(let allowed): "not allowed \(allowed)"
        case .notFound(let closest): "not found \(closest)"
        }
    }

    @Test func indexedLookupFindsWhatAScanFinds() throws {
        let routes = try Self.routes()
        var paths = [
            "/", "", "/notes", "/notes/", "/notes/7", "/notes/mine", "/notes/7/tags", "/v1/mod1/items", "/v1/mod1/items/b1-0001",
            "/v1/mod1/items/x/archive", "/v1/mod12/items/z", "/v1/mod3/items", "/files", "/files/a/b", "/raw/x/y", "/acme/things",
            "/a%20b/c", "/a b/c", "/a%2Fb/c", "/caf\u{E9}/menu", "/caf%C3%A9/menu", "/items.json", "/items;matrix=1", "/x/1-2",
            "/x/y:z", "/x/@me", "/x/(1)", "/anything", "/v1/mod1/items/a/b/c", "/NOTES", "/notes//7", "//notes",
        ]
        var generator = SeededGenerator(state: 0x51ED_2701_A5F3_0C4B)
        let pieces = ["/", "notes", "v1", "mod1", "mod12", "items", "7", "archive", "%20", "a", ".", ";", "x", "{", "files", "-", "é"]
        for _ in 0..<400 {
            paths.append((0..<Int.random(in: 1...6, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined())
        }
        var differences: [String] = []
        for path in paths {
            for method in ["GET", "POST", "HEAD", "DELETE"] {
                let target = URITemplate.Target(path: path, query: "fields=a")
                let indexed = Self.describe(routes.lookup(method: method, target: target), target: target)
                let scanned = Self.scan(routes, method: method, target: target)
                if indexed != scanned { differences.append("\(method) \(path):\n  index: \(indexed)\n  scan:  \(scanned)") }
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5).joined(separator: "\n"))")
    }
}
