// One description in force: which exchanges it covers (its base URLs), and the check of one
// flow against it — matching to an operation, then the request and the response.
import Foundation
import KagamiContract
import KagamiDescription
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiURITemplate

/// Why a description cannot be used for checking.
public struct ContractCheckError: Error, CustomStringConvertible, Sendable {
    /// `file:line:column: error: message` lines, or one sentence.
    public var lines: [String]

    public init(_ lines: [String]) { self.lines = lines }

    public var description: String { lines.joined(separator: "\n") }
}

/// Where a description's API is served: scheme, host and port (nil: any), and a path prefix.
public struct BaseURL: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String?
    public var host: String?
    public var port: Int?
    /// Without a trailing slash; `""` for the root.
    public var path: String

    /// `https://api.example.com/v2`, `http://127.0.0.1:8080`, `/v2`; a host written as a
    /// template (`{region}.example.com`) matches any host.
    public init?(_ text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            rest = rest[authorityEnd...]
            if scheme.contains("{") || authority.contains("{") {
                self.scheme = nil
                host = nil
                port = nil
            } else {
                guard scheme == "http" || scheme == "https", !authority.isEmpty else { return nil }
                self.scheme = scheme
                guard let parsed = Authority(parsing: String(authority), defaultPort: scheme == "https" ? 443 : 80) else { return nil }
                host = parsed.host.lowercased()
                port = parsed.port
            }
        } else {
            guard rest.hasPrefix("/") || rest.isEmpty else { return nil }
            scheme = nil
            host = nil
            port = nil
        }
        var path = String(rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        // A templated path segment (`/{version}`) can't be a literal prefix: keep what precedes it.
        if let brace = path.firstIndex(of: "{") { path = String(path[..<brace]) }
        while path.hasSuffix("/") { path.removeLast() }
        self.path = path
    }

    /// The request's path and query relative to this base, or nil when the request is elsewhere.
    public func relativeTarget(of request: FlowRequest) -> String? {
        if let scheme, scheme != request.scheme.lowercased() { return nil }
        if let host, host != request.host.lowercased() { return nil }
        if let port, port != request.port { return nil }
        let target = request.target
        guard !path.isEmpty else { return target }
        guard target.hasPrefix(path) else { return nil }
        let rest = target.dropFirst(path.count)
        if rest.isEmpty { return "/" }
        guard let first = rest.first, first == "/" || first == "?" else { return nil }
        return first == "?" ? "/" + rest : String(rest)
    }

    public var description: String {
        guard let host else { return path.isEmpty ? "any host" : path }
        let scheme = scheme ?? "http"
        let defaultPort = AbsoluteURL.defaultPort(for: scheme)
        return "\(scheme)://\(Authority(host: host, port: port ?? defaultPort).text(omittingPort: defaultPort))\(path)"
    }
}

/// What checking one flow found.
public struct ContractCheckResult: Sendable {
    public var violations: [ContractViolation]
    /// The matched operation's `documentOrder`, or nil.
    var routeIndex: Int?
    /// The documented status the response was matched to (`200`, `2XX`, `default`).
    var status: String?
    /// Property paths of the response body (`/items/*/id`) that the matched responses document.
    var properties: Set<String> = []
}

/// One description ready for checking traffic. A class though nothing in it changes once read:
/// what holds one (`DiffOptions`, the mock, the recording chain) holds a reference, so a field
/// added here changes no other type's layout. SwiftPM's incremental build does not recompile
/// code that sees such a layout only through a re-exported module (an app's suite calling
/// KagamiKit's `diff`), and that code would write a grown value past the space it made for it.
public final class ContractCheck: Sendable {
    /// The description file (or a label for text given directly).
    public let path: String
    public let contract: APIContract
    public let routes: OperationRoutes
    /// Where the API is served; checked in this order. Empty: every exchange is in scope.
    public let baseURLs: [BaseURL]
    let documentedProperties: DocumentedProperties
    /// For a description of gRPC methods (`.proto` files, a descriptor set): the schema their
    /// messages are read with. Such a description covers gRPC calls only.
    public let protobuf: ProtobufSchema?

    /// Reads `file`; a description with errors (or a template that doesn't parse) is refused
    /// with its lint lines. `baseURL` (`FILE=URL` on the command line) replaces the
    /// description's own servers.
    /// `assertsFormat` false accepts any value for a format (`--no-assert-format`).
    public init(file: DescriptionFile, baseURL: String? = nil, assertsFormat: Bool = true) throws(ContractCheckError) {
        let routes = OperationRoutes(contract: file.contract, assertsFormat: assertsFormat)
        let errors = file.problems(routes: routes, onlyErrors: true)
        guard errors.isEmpty else { throw ContractCheckError(errors) }
        var bases: [BaseURL] = []
        if let baseURL {
            guard let base = BaseURL(baseURL) else {
                throw ContractCheckError(["\(file.path): the base URL \(baseURL) is not an http(s) URL or a path"])
            }
            bases = [base]
        } else {
            bases = file.contract.servers.compactMap { BaseURL($0.url) }
        }
        self.path = file.path
        self.contract = file.contract
        self.routes = routes
        self.baseURLs = bases
        self.documentedProperties = DocumentedProperties(routes: routes)
        self.protobuf = nil
    }

    /// gRPC methods described by a Protocol Buffers schema, read as a contract
    /// (`ProtobufSchema.contract`); `path` names it in reports.
    public init(protobuf schema: ProtobufSchema, path: String, baseURL: String? = nil, assertsFormat: Bool = true) throws(ContractCheckError) {
        guard !schema.methods.isEmpty else {
            throw ContractCheckError(["\(path): the Protocol Buffers definitions have no service, so no gRPC method to check calls against"])
        }
        var bases: [BaseURL] = []
        if let baseURL {
            guard let base = BaseURL(baseURL) else {
                throw ContractCheckError(["\(path): the base URL \(baseURL) is not an http(s) URL or a path"])
            }
            bases = [base]
        }
        let contract = schema.contract(name: path)
        let routes = OperationRoutes(contract: contract, assertsFormat: assertsFormat)
        self.path = path
        self.contract = contract
        self.routes = routes
        self.baseURLs = bases
        self.documentedProperties = DocumentedProperties(routes: routes)
        self.protobuf = schema
    }

    /// Whether a `--contract` path is Protocol Buffers definitions rather than a description:
    /// a folder of `.proto` files, one `.proto` file, or a descriptor set (`.pb`, `.protoset`,
    /// `.desc`, `.binpb`).
    public static func isProtobuf(path: String) -> Bool {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { return true }
        let lowered = path.lowercased()
        return [".proto", ".pb", ".protoset", ".desc", ".binpb"].contains { lowered.hasSuffix($0) }
    }

    /// `grpc-reflection=URL`: the gRPC methods of the server at URL, as its server reflection
    /// lists them (`reflected(_:send:assertsFormat:)`), covering that server's calls.
    public static let reflectionName = "grpc-reflection"

    /// The server a `grpc-reflection=URL` argument names (scheme, host and port); nil for any
    /// other argument.
    public static func reflectionServer(_ argument: String) throws(ContractCheckError) -> (host: String, port: Int, tls: Bool)? {
        let (path, baseURL) = Self.split(argument)
        guard path == reflectionName else { return nil }
        guard let text = baseURL, let base = BaseURL(text), let host = base.host else {
            throw ContractCheckError(["\(argument): name the server whose reflection describes its methods, such as \(reflectionName)=http://127.0.0.1:50051 (https for TLS)"])
        }
        let tls = base.scheme == "https"
        return (host, base.port ?? (tls ? 443 : 80), tls)
    }

    /// The gRPC methods of every service the server's reflection lists (asked through `send`),
    /// as the description of that server's calls; `argument` is `grpc-reflection=URL`.
    public static func reflected(_ argument: String, send: ServerReflection.Send, assertsFormat: Bool = true) async throws(ContractCheckError) -> ContractCheck {
        let schema: ProtobufSchema
        do {
            schema = try await ServerReflection.schema(send: send)
        } catch {
            throw ContractCheckError(["\(argument): the server's reflection answered: \(error)"])
        }
        return try ContractCheck(protobuf: schema, path: argument, baseURL: split(argument).baseURL, assertsFormat: assertsFormat)
    }

    /// Reads the description in `path` (`FILE` or `FILE=BASEURL`): API Blueprint, OpenAPI, or
    /// Protocol Buffers definitions (`isProtobuf`).
    public static func load(_ argument: String, assertsFormat: Bool = true) throws(ContractCheckError) -> ContractCheck {
        let (path, baseURL) = Self.split(argument)
        if path == reflectionName {
            throw ContractCheckError(["\(argument): server reflection is asked of a running server: kagami proxy --contract and kagami validate --contract take it"])
        }
        if isProtobuf(path: path) {
            let schema: ProtobufSchema
            do {
                schema = try ProtoFiles.schema(contract: path)
            } catch {
                throw ContractCheckError([error.description])
            }
            return try ContractCheck(protobuf: schema, path: path, baseURL: baseURL, assertsFormat: assertsFormat)
        }
        let file: DescriptionFile
        do {
            file = try DescriptionFile(path: path)
        } catch {
            throw ContractCheckError([error.description])
        }
        return try ContractCheck(file: file, baseURL: baseURL, assertsFormat: assertsFormat)
    }

    /// `notes.apib=http://127.0.0.1:3000/v1` → the file and the URL; a bare path has no URL.
    public static func split(_ argument: String) -> (path: String, baseURL: String?) {
        guard let equals = argument.firstIndex(of: "="), !FileManager.default.fileExists(atPath: argument) else {
            return ((argument as NSString).expandingTildeInPath, nil)
        }
        let path = String(argument[..<equals])
        return ((path as NSString).expandingTildeInPath, String(argument[argument.index(after: equals)...]))
    }

    /// The flow's target relative to the description's base URL, or nil when it is outside.
    public func relativeTarget(of flow: Flow) -> String? {
        guard flow.mode != .tunnel, flow.request.method != "CONNECT" else { return nil }
        if protobuf != nil, !GRPCExchange.isGRPC(contentType: flow.request.headers["content-type"]) { return nil }
        if baseURLs.isEmpty { return flow.request.target }
        for base in baseURLs {
            if let target = base.relativeTarget(of: flow.request) { return target }
        }
        return nil
    }

    /// Checks `flow`, or returns nil when it is outside this description's base URLs or got
    /// no response to check.
    public func check(_ flow: Flow) -> ContractCheckResult? {
        guard let relative = relativeTarget(of: flow), let response = flow.response else { return nil }
        let method = flow.request.method.uppercased()
        let target = URITemplate.Target(relative)
        switch routes.lookup(method: method, target: target) {
        case .notFound(let closest):
            if let protobuf { return ContractCheckResult(violations: [Self.unknownMethod(target.path, schema: protobuf)]) }
            let hint = closest.isEmpty ? "" : " (closest: \(closest.joined(separator: ", ")))"
            return ContractCheckResult(violations: [ContractViolation(
                kind: .undocumentedPath, severity: .warning, side: .request, location: .path,
                expected: closest.isEmpty ? nil : Shortened.text(closest.joined(separator: ", ")), actual: Shortened.text(target.path),
                message: "no operation of the description matches \(method) \(target.path)\(hint)")])
        case .methodNotAllowed(let allowed):
            return ContractCheckResult(violations: [ContractViolation(
                kind: .undocumentedMethod, severity: .warning, side: .request, location: .method,
                expected: Shortened.text(allowed.joined(separator: ", ")), actual: Shortened.text(method),
                message: "\(target.path) is documented for \(allowed.joined(separator: ", ")), not \(method)")])
        case .matched(let route, let match):
            var result = ContractCheckResult(violations: [])
            result.routeIndex = route.documentOrder
            if let protobuf {
                let outcome = GRPCCallCheck.check(flow, route: route, schema: protobuf)
                result.violations = outcome.violations
                if response.status == 200 {
                    result.status = "200"
                    for message in outcome.responseMessages {
                        result.properties.formUnion(documentedProperties.seen(in: message, route: route.documentOrder, status: "200"))
                    }
                }
                return result
            }
            let outcome = ResponseCheck.check(response, method: method, route: route, format: contract.format)
            // A documented 4xx is the server rightly refusing the request: not the client's fault to report.
            let refusedAsDocumented = (400..<500).contains(response.status) && !outcome.documented.isEmpty
            if !refusedAsDocumented {
                // Parsed only when a documented schema will look at it.
                var body: JSONValue?
                if route.requestSchemas.contains(where: { $0.contains { $0 != nil } }), !flow.request.body.isTruncated,
                   case .json(let value) = MessageBody.read(flow.request.body, headers: flow.request.headers) {
                    body = value
                }
                result.violations += RequestCheck.violations(of: flow.request, route: route, match: match, target: target, body: body)
            }
            result.violations += outcome.violations
            if let first = outcome.documented.first {
                result.status = first.response.statusText
                if let body = outcome.body, let index = result.routeIndex {
                    result.properties = documentedProperties.seen(in: body, route: index, status: first.response.statusText)
                }
            }
            return result
        }
    }

    /// A gRPC path the schema has no method for: which service, and what it has.
    static func unknownMethod(_ path: String, schema: ProtobufSchema) -> ContractViolation {
        let service = ProtobufSchema.service(ofPath: path)
        let siblings = schema.methods.values.filter { $0.service == service }.map(\.name).sorted()
        let message: String
        let expected: String
        if let service, !siblings.isEmpty {
            message = "the schema's service \(service) has no method \(path.split(separator: "/").last.map(String.init) ?? path) (it has \(siblings.joined(separator: ", ")))"
            expected = siblings.map { "/\(service)/\($0)" }.joined(separator: ", ")
        } else {
            let services = Set(schema.methods.values.map(\.service)).sorted()
            message = "the schema has no service \(service ?? path) (it has \(services.joined(separator: ", ")))"
            expected = services.joined(separator: ", ")
        }
        return ContractViolation(
            kind: .undocumentedPath, severity: .warning, side: .request, location: .path,
            expected: Shortened.text(expected), actual: Shortened.text(path), message: message)
    }
}
