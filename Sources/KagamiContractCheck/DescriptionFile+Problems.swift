// The one list of a description's problems: what `kagami lint` prints is what keeps the mock
// and the contract check from using the description.
import Foundation
import KagamiContract
import KagamiDescription
import KagamiJSON
import KagamiJSONSchema
import Synchronization

extension DescriptionFile {
    /// `file:line:column: severity: message` lines, sorted by position, each once: the reader's
    /// annotations, the URI templates `routes` could not compile, and (unless `onlyErrors`)
    /// the examples the description writes that their own schema refuses.
    public func problems(routes: OperationRoutes, onlyErrors: Bool = false) -> [String] {
        diagnostics(onlyErrors: onlyErrors, adding: routes.templateErrors + (onlyErrors ? [] : Self.exampleProblems(routes)))
    }

    /// A warning at each example the document writes (a body's, a parameter's, a response
    /// header's) that the schema beside it refuses: the mock would send that value, and the
    /// contract check would then report the mock's own answer. A body is read as the request
    /// or the response it is, so a response example may hold readOnly properties and a
    /// request example writeOnly ones. Examples written from the schema are not looked at.
    static func exampleProblems(_ routes: OperationRoutes) -> [Annotation] {
        // Compiling the schemas is most of the cost: a large description's routes are shared
        // out over the cores, each share with its own (schema, example) pairs. In document
        // order: the operations that use a schema are written near one another, so each share
        // holds only the schemas of its last operations compiled (`WrittenExampleCheck`).
        let all = routes.routes
        let order = all.indices.sorted { all[$0].documentOrder < all[$1].documentOrder }
        let shares = min(ProcessInfo.processInfo.activeProcessorCount, 8, max(1, all.count / 256))
        let results = Mutex<[[Annotation]]>(Array(repeating: [], count: shares))
        DispatchQueue.concurrentPerform(iterations: shares) { share in
            let problems = exampleProblems(order[(order.count * share / shares)..<(order.count * (share + 1) / shares)], of: all)
            results.withLock { $0[share] = problems }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    private static func exampleProblems(_ indices: ArraySlice<Int>, of routes: [OperationRoute]) -> [Annotation] {
        var check = WrittenExampleCheck()
        for index in indices {
            let route = routes[index]
            for parameter in route.action.parameters {
                guard let written = parameter.writtenExample, let schema = route.parameterSchemaSources[parameter.name] else { continue }
                check.check(written.value, at: written.location, against: schema, direction: .request, naming: "the example of \(parameter.location.rawValue) parameter '\(parameter.name)'")
            }
            for (index, example) in route.action.examples.enumerated() {
                for (requestIndex, request) in example.requests.enumerated() {
                    guard let schema = route.requestSchemaSources[index][requestIndex] else { continue }
                    check.checkBody(request.payload, against: schema, direction: .request, naming: "the request body")
                }
                for (responseIndex, response) in example.responses.enumerated() {
                    let status = response.status == 0 ? "default" : response.isStatusClass ? "\(response.status / 100)XX" : "\(response.status)"
                    if let schema = route.responseSchemaSources[index][responseIndex] {
                        check.checkBody(response.payload, against: schema, direction: .response, naming: "the \(status) response's body")
                    }
                    for header in response.declaredHeaders {
                        guard let location = header.exampleLocation, let schema = header.schema.flatMap({ route.headerSchemaSources[$0] }),
                              let line = response.payload.header(header.name) else { continue }
                        guard let value = header.value(of: line) else {
                            check.problems.append(Annotation(.warning, "the example of response header '\(header.name)' is not JSON, as its \(header.mediaType ?? "") content says", at: location))
                            continue
                        }
                        check.check(value, at: location, against: schema, direction: .response, naming: "the example of response header '\(header.name)'")
                    }
                }
            }
        }
        return check.problems
    }
}

/// Checks examples against their schemas for lint: each distinct (schema, example) pair once,
/// each distinct schema compiled once while the operations near one another that use it are
/// checked (a component's schema and example are used by many operations of a large
/// description). The compiled schemas are not kept in the routes: a large description's
/// thousands of them held at once were most of lint's peak memory.
struct WrittenExampleCheck {
    var problems: [Annotation] = []
    /// The first route schema seen for each schema and direction, and its number.
    private var schemas: [SchemaKey: (number: Int, schema: RouteSchema)] = [:]
    /// (schema number, where the example is written) pairs already checked.
    private var checked: Set<Pair> = []
    /// The schemas compiled last, by number, at most `recentLimit`; `recentOrder` the numbers
    /// from the oldest.
    private var recent: [Int: JSONSchema?] = [:]
    private var recentOrder: [Int] = []
    private static let recentLimit = 128

    /// A body's schema by its `$ref` or, written in place, by where it is written: comparing
    /// whole schemas cost more than the checks. Other schemas (a parameter's, a header's) are
    /// small and compared whole.
    private enum SchemaKey: Hashable {
        case schema(JSONValue, JSONSchema.Direction)
        case reference(String, JSONSchema.Direction)
    }

    private struct Pair: Hashable {
        var schema: Int
        var example: SourceLocation
    }

    /// A body's example, when the document writes one for a JSON media type: other types' bodies
    /// are text the schema doesn't read as written.
    mutating func checkBody(_ payload: MessagePayload, against schema: RouteSchema, direction: JSONSchema.Direction, naming subject: String) {
        guard let location = payload.exampleLocation, let body = payload.body, let mediaType = payload.header("Content-Type"),
              MediaType.isJSON(mediaType), let value = try? JSONValue(parsing: body) else { return }
        let key: SchemaKey? = (payload.schemaReference ?? payload.schemaPointer).map { .reference($0, direction) }
        check(value, at: location, against: schema, key: key ?? .schema(schema.source, direction), naming: "the example of \(subject) (\(mediaType))")
    }

    mutating func check(_ value: JSONValue, at location: SourceLocation?, against schema: RouteSchema, direction: JSONSchema.Direction, naming subject: String) {
        check(value, at: location, against: schema, key: .schema(schema.source, direction), naming: subject)
    }

    /// A warning at `location` naming the first value `schema` refuses, where it is in the
    /// example, and why.
    private mutating func check(_ value: JSONValue, at location: SourceLocation?, against source: RouteSchema, key: SchemaKey, naming subject: String) {
        guard let location else { return }
        let count = schemas.count
        let known = schemas[key, default: (count, source)]
        if known.number == count { schemas[key] = known }
        // The same value under the same schema says the same thing: once per place it is written.
        guard checked.insert(Pair(schema: known.number, example: location)).inserted,
              let error = compiled(known.number, known.schema)?.validate(value).errors.first else { return }
        problems.append(.refusedExample(subject, error, at: location))
    }

    /// Schema `number` compiled, from the recent ones or anew (the oldest let go).
    private mutating func compiled(_ number: Int, _ source: RouteSchema) -> JSONSchema? {
        if let known = recent[number] { return known }
        let schema = source.compiledWithoutKeeping
        if recentOrder.count == Self.recentLimit { recent.removeValue(forKey: recentOrder.removeFirst()) }
        recent[number] = .some(schema)
        recentOrder.append(number)
        return schema
    }
}
