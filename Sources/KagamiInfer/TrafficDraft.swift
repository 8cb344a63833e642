// Recorded exchanges into a draft API description: operations, parameters, bodies and statuses.
import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON
import OrderedCollections

/// What `kagami infer` learns from a set of exchanges, before it is written as OpenAPI or API
/// Blueprint. Build one with `TrafficDraft(flows:options:)`.
public struct TrafficDraft: Sendable {
    public struct Options: Sendable {
        /// Keep only exchanges with these hosts (`host` or `host:port`); all when empty.
        public var hosts: [String]
        public var hints: [PathHint]
        public var maximumTemplates: Int
        /// Bodies larger than this are not parsed (they are listed as skipped).
        public var maximumBodyBytes: Int
        public var title: String

        public init(hosts: [String] = [], hints: [PathHint] = [], maximumTemplates: Int = 1000, maximumBodyBytes: Int = 8 * 1024 * 1024, title: String = "API drafted from traffic") {
            self.hosts = hosts
            self.hints = hints
            self.maximumTemplates = maximumTemplates
            self.maximumBodyBytes = maximumBodyBytes
            self.title = title
        }
    }

    public var title: String
    /// `http://127.0.0.1:3000`, one per host seen, most used first.
    public var servers: [String]
    /// Sorted by host, template and method.
    public var operations: [DraftOperation]
    public var exchangeCount: Int
    /// What could not be described, one line per reason (with a count and a few examples).
    public var skipped: [String]

    /// Drafts from flows held in memory. For a session too large for that, use a `Builder`.
    public init(flows: [Flow], options: Options = Options()) {
        var builder = Builder(options: options)
        builder.learnPaths(flows)
        builder.describe(flows)
        self = builder.draft()
    }

    init(title: String, servers: [String], operations: [DraftOperation], exchangeCount: Int, skipped: [String]) {
        self.title = title
        self.servers = servers
        self.operations = operations
        self.exchangeCount = exchangeCount
        self.skipped = skipped
    }

    /// Drafts in two passes over the exchanges, so they can be read a page at a time: first
    /// every path (bodies not needed), then every exchange with its bodies, in any order.
    public struct Builder: Sendable {
        public let options: Options
        private var skips = SkipLog()
        /// Each server's paths, one per exchange.
        private var paths: OrderedDictionary<String, [String]> = [:]
        private var templates: [String: PathGeneraliser.Result] = [:]
        private var operations: [String: OrderedDictionary<String, DraftOperation>] = [:]
        private var exchangeCount = 0

        public init(options: Options = Options()) {
            self.options = options
        }

        /// The server an exchange is described under, or nil when it is left out.
        private func server(of flow: Flow) -> String? {
            if flow.mode == .tunnel || flow.request.method == "CONNECT" { return nil }
            guard options.hosts.isEmpty || options.hosts.contains(where: { TrafficDraft.hostMatches($0, flow.request) }) else { return nil }
            return "\(flow.request.scheme)://\(flow.request.authority)"
        }

        /// First pass: the paths the templates are inferred from.
        public mutating func learnPaths(_ flows: some Sequence<Flow>) {
            for flow in flows {
                guard let server = server(of: flow) else { continue }
                paths[server, default: []].append(flow.request.path)
            }
        }

        /// Second pass: every exchange, with its bodies.
        public mutating func describe(_ flows: some Sequence<Flow>) {
            if templates.isEmpty {
                for (server, serverPaths) in paths {
                    let result = PathGeneraliser(hints: options.hints, maximumTemplates: options.maximumTemplates).generalise(serverPaths)
                    if result.droppedTemplates > 0 {
                        skips.lines.append("\(server): \(result.droppedTemplates) path templates (\(result.droppedPaths) exchanges) beyond the cap of \(options.maximumTemplates) distinct paths were left out; give --path hints for the paths that are ids, or --host to draft one API at a time")
                    }
                    templates[server] = result
                }
            }
            for flow in flows {
                guard let server = server(of: flow) else {
                    if flow.mode == .tunnel || flow.request.method == "CONNECT" {
                        skips.note("CONNECT tunnels (their bytes are encrypted or unparsed)", flow)
                    }
                    continue
                }
                // A path the first pass didn't see, or one left out by the cap.
                guard let match = templates[server]?.matches[flow.request.path] else { continue }
                exchangeCount += 1
                let method = flow.request.method.uppercased()
                let key = method + " " + match.template.description
                var operation = operations[server]?[key] ?? DraftOperation(server: server, method: method, template: match.template)
                operation.add(flow, values: match.values, options: options, skips: &skips)
                operations[server, default: [:]][key] = operation
            }
        }

        /// Both passes over a store read a page at a time (`page(offset, limit, includeBodies)`,
        /// in capture order, until a page comes back short), so memory holds one page of bodies.
        public static func draft(
            options: Options, pageSize: Int = 500, page: (Int, Int, Bool) async throws -> [Flow]
        ) async rethrows -> TrafficDraft {
            var builder = Builder(options: options)
            for includeBodies in [false, true] {
                var offset = 0
                while true {
                    let flows = try await page(offset, pageSize, includeBodies)
                    if includeBodies { builder.describe(flows) } else { builder.learnPaths(flows) }
                    offset += flows.count
                    if flows.count < pageSize { break }
                }
            }
            return builder.draft()
        }

        public func draft() -> TrafficDraft {
            var all = operations.values.flatMap(\.values)
            all.sort {
                ($0.server, $0.template.description, DraftOperation.methodOrder($0.method)) < ($1.server, $1.template.description, DraftOperation.methodOrder($1.method))
            }
            var names: Set<String> = []
            for index in all.indices { all[index].name = all[index].uniqueName(taken: &names) }
            let servers = paths.sorted { $0.value.count > $1.value.count }.map(\.key)
            return TrafficDraft(title: options.title, servers: servers, operations: all, exchangeCount: exchangeCount, skipped: skips.lines + skips.summary())
        }
    }

    static func hostMatches(_ wanted: String, _ request: FlowRequest) -> Bool {
        let lowered = wanted.lowercased()
        return lowered == request.host.lowercased() || lowered == Authority(host: request.host, port: request.port).description.lowercased()
            || lowered == request.authority.lowercased()
    }
}

/// Reasons things were skipped, counted, with the first few exchanges of each.
struct SkipLog: Sendable {
    var lines: [String] = []
    private var reasons: OrderedDictionary<String, (count: Int, examples: [String])> = [:]

    /// Counts `flow` under `reason`; the first few are named, with `detail` (what a parser said).
    /// Reasons are fixed texts, so thousands of bad exchanges still make one line each.
    mutating func note(_ reason: String, _ flow: Flow, detail: String? = nil) {
        var entry = reasons[reason] ?? (0, [])
        entry.count += 1
        if entry.examples.count < 3 { entry.examples.append("\(flow.request.method) \(flow.request.url)" + (detail.map { " (\($0))" } ?? "")) }
        reasons[reason] = entry
    }

    func summary() -> [String] {
        reasons.map { reason, entry in
            let more = entry.count > entry.examples.count ? ", …" : ""
            return "\(entry.count) × \(reason): \(entry.examples.joined(separator: ", "))\(more)"
        }
    }
}

/// A parameter (query, header or path) as seen across requests.
public struct ParameterSketch: Sendable {
    public var name: String
    /// Requests that carried it.
    public var presence = 0
    public var values = ValueSketch()
    public var example: String?

    mutating func add(_ value: String) {
        presence += 1
        values.add(value)
        if example == nil { example = Redaction.isSecret(name) ? Redaction.placeholder : value }
    }
}

/// Text values (query, header and path parameters) and the scalar type they all share.
public struct ValueSketch: Sendable {
    public private(set) var count = 0
    var integers = 0
    var numbers = 0
    var booleans = 0
    var strings = SchemaSketch()

    mutating func add(_ text: String) {
        count += 1
        if Int(text) != nil { integers += 1 }
        if Double(text) != nil, text.unicodeScalars.allSatisfy({ PathSegmentShape.isDigit($0) || "+-.eE".unicodeScalars.contains($0) }) { numbers += 1 }
        if text == "true" || text == "false" { booleans += 1 }
        strings.add(.string(text))
    }

    mutating func merge(_ other: ValueSketch) {
        count += other.count
        integers += other.integers
        numbers += other.numbers
        booleans += other.booleans
        strings.merge(other.strings)
    }

    /// `integer`, `number` or `boolean` when every value was one, else a string schema with format or enum.
    public func schema() -> JSONValue {
        guard count > 0 else { return ["type": "string"] }
        if integers == count { return ["type": "integer"] }
        if numbers == count { return ["type": "number"] }
        if booleans == count { return ["type": "boolean"] }
        return strings.schema()
    }
}

/// One media type's bodies of a request or response.
public struct BodySketch: Sendable {
    public var mediaType: String
    public var count = 0
    /// Merged JSON (or form) bodies; nil for text and binary media types.
    public var sketch: SchemaSketch?
    /// The first body seen, secrets redacted (JSON or text; nil for binary).
    public var example: JSONValue?
    public var isJSON: Bool
}

/// A response status of an operation.
public struct ResponseSketch: Sendable {
    public var status: Int
    public var count = 0
    public var bodies: OrderedDictionary<String, BodySketch> = [:]
    public var headers: OrderedDictionary<String, ParameterSketch> = [:]
    /// Responses with no body at all.
    public var emptyCount = 0

    /// Some responses of this status had a body and some had none. A description can't say a
    /// body is optional, and one that shows a body makes every empty response a violation: such
    /// a status is described by its media types alone.
    public var bodyIsOptional: Bool { emptyCount > 0 && !bodies.isEmpty }
}

/// How requests of an operation authenticated, as OpenAPI security schemes name it.
public enum AuthenticationKind: String, Sendable, Hashable, Comparable {
    case bearer
    case basic
    case apiKeyHeader
    case apiKeyQuery

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One method at one path template.
public struct DraftOperation: Sendable {
    public var server: String
    public var method: String
    public var template: PathTemplate
    /// `getUsersByUserId`: unique in the draft (the OpenAPI operationId, the Blueprint action name).
    public var name = ""
    public var count = 0
    /// Path variables in template order.
    public var pathParameters: [ParameterSketch]
    public var query: OrderedDictionary<String, ParameterSketch> = [:]
    public var headers: OrderedDictionary<String, ParameterSketch> = [:]
    public var requestBodies: OrderedDictionary<String, BodySketch> = [:]
    public var requestsWithBody = 0
    public var responses: [Int: ResponseSketch] = [:]
    /// Requests that carried credentials, by kind; with the header or query name for API keys.
    public var authentication: [AuthenticationKind: String] = [:]

    init(server: String, method: String, template: PathTemplate) {
        self.server = server
        self.method = method
        self.template = template
        pathParameters = template.variableNames.map { ParameterSketch(name: $0) }
    }

    /// `getUsersByUserId`, with a number added when taken.
    func uniqueName(taken: inout Set<String>) -> String {
        var words: [String] = []
        var variables: [String] = []
        for segment in template.segments {
            switch segment {
            case .literal(let text): if let word = PathGeneraliser.camelCase(text) { words.append(word) }
            case .variable(let name): variables.append(name)
            }
        }
        var id = method.lowercased() + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if !variables.isEmpty { id += "By" + variables.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "And") }
        if id == method.lowercased() { id += "Root" }
        var candidate = id
        var index = 2
        while taken.contains(candidate) {
            candidate = "\(id)\(index)"
            index += 1
        }
        taken.insert(candidate)
        return candidate
    }

    static func methodOrder(_ method: String) -> Int {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"].firstIndex(of: method) ?? 99
    }

    public var sortedResponses: [ResponseSketch] { responses.values.sorted { $0.status < $1.status } }

    /// A query parameter or header is required when every request had it.
    public func isRequired(_ parameter: ParameterSketch) -> Bool { parameter.presence == count }

    mutating func add(_ flow: Flow, values: [String], options: TrafficDraft.Options, skips: inout SkipLog) {
        count += 1
        for (index, value) in values.enumerated() where index < pathParameters.count {
            pathParameters[index].add(value.removingPercentEncoding ?? value)
        }
        if let query = flow.request.query {
            var seen: Set<String> = []
            for (name, value) in Self.formFields(query) where !name.isEmpty {
                if let kind = Redaction.apiKeyQueryName(name) {
                    authentication[kind] = name
                    continue
                }
                // Descriptions list query parameters as URI template variables (`{?limit}`),
                // whose names are letters, digits, `_` and `.` only.
                guard name.unicodeScalars.allSatisfy({ PathSegmentShape.isLetter($0) || PathSegmentShape.isDigit($0) || $0 == "_" || $0 == "." }) else {
                    skips.note("query parameters whose names can't be URI template variables (only letters, digits, _ and . can)", flow)
                    continue
                }
                // A repeated name counts once for presence.
                if seen.insert(name).inserted {
                    self.query[name, default: ParameterSketch(name: name)].add(value)
                } else {
                    self.query[name]?.values.add(value)
                }
            }
        }
        for field in flow.request.headers {
            let lowered = field.name.lowercased()
            if lowered == "authorization" {
                let scheme = field.value.split(separator: " ").first?.lowercased()
                if scheme == "bearer" { authentication[.bearer] = "Authorization" } else if scheme == "basic" { authentication[.basic] = "Authorization" } else { authentication[.apiKeyHeader] = field.name }
                continue
            }
            if Redaction.isAPIKeyHeader(lowered) {
                authentication[.apiKeyHeader] = field.name
                continue
            }
            guard !HeaderSelection.ignoredInRequests(lowered) else { continue }
            if headers[lowered] == nil { headers[lowered] = ParameterSketch(name: field.name) }
            headers[lowered]?.add(field.value)
        }
        if let body = Self.body(of: flow.request.body, headers: flow.request.headers, flow: flow, side: "request", options: options, skips: &skips) {
            requestsWithBody += 1
            Self.merge(body, into: &requestBodies)
        }
        guard let response = flow.response else {
            skips.note("exchanges without a response (request described, no response)", flow)
            return
        }
        var sketch = responses[response.status] ?? ResponseSketch(status: response.status)
        sketch.count += 1
        for field in response.headers {
            let lowered = field.name.lowercased()
            guard !HeaderSelection.ignoredInResponses(lowered) else { continue }
            if sketch.headers[lowered] == nil { sketch.headers[lowered] = ParameterSketch(name: field.name) }
            sketch.headers[lowered]?.add(field.value)
        }
        let noBody = flow.request.method == "HEAD" || response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        if !noBody, let body = Self.body(of: response.body, headers: response.headers, flow: flow, side: "response", options: options, skips: &skips) {
            Self.merge(body, into: &sketch.bodies)
        } else if response.body.size == 0 || noBody {
            sketch.emptyCount += 1
        }
        responses[response.status] = sketch
    }

    /// One body read: media type, parsed value (JSON or form) and whether it is JSON.
    struct ReadBody {
        var mediaType: String
        var value: JSONValue?
        var text: String?
        var isJSON: Bool
    }

    static func merge(_ body: ReadBody, into bodies: inout OrderedDictionary<String, BodySketch>) {
        var sketch = bodies[body.mediaType] ?? BodySketch(mediaType: body.mediaType, sketch: body.value == nil ? nil : SchemaSketch(), isJSON: body.isJSON)
        sketch.count += 1
        if let value = body.value {
            if sketch.sketch == nil { sketch.sketch = SchemaSketch() }
            sketch.sketch?.add(value)
            if sketch.example == nil { sketch.example = Redaction.redacted(value) }
        } else if sketch.example == nil, let text = body.text {
            sketch.example = .string(text)
        }
        bodies[body.mediaType] = sketch
    }

    /// The body decoded and parsed, or nil when there is none or it can't be described (noted in `skips`).
    static func body(of body: FlowBody, headers: HeaderFields, flow: Flow, side: String, options: TrafficDraft.Options, skips: inout SkipLog) -> ReadBody? {
        guard body.size > 0 else { return nil }
        let mediaType = MediaTypeText.essence(headers["Content-Type"]) ?? "application/octet-stream"
        if body.isTruncated || body.keptCount < body.size {
            skips.note("\(side) bodies kept only in part by the capture limit (media type noted, not described)", flow)
            return ReadBody(mediaType: mediaType, isJSON: MediaTypeText.isJSON(mediaType))
        }
        if body.size > options.maximumBodyBytes {
            skips.note("\(side) bodies over \(options.maximumBodyBytes) bytes (media type noted, not parsed)", flow)
            return ReadBody(mediaType: mediaType, isJSON: MediaTypeText.isJSON(mediaType))
        }
        var data = body.data
        if let coding = headers["Content-Encoding"], ContentCoding.isEncoded(coding) {
            do {
                data = try ContentCoding.decode(data, contentEncoding: coding, limit: options.maximumBodyBytes)
            } catch {
                skips.note("\(side) bodies in an encoding that could not be decoded (\(coding))", flow)
                return ReadBody(mediaType: mediaType, isJSON: MediaTypeText.isJSON(mediaType))
            }
        }
        if MediaTypeText.isJSON(mediaType) {
            do {
                return ReadBody(mediaType: mediaType, value: try JSONValue(parsing: data), isJSON: true)
            } catch {
                skips.note("\(side) bodies labelled \(mediaType) that are not valid JSON", flow, detail: "\(error)")
                return ReadBody(mediaType: mediaType, isJSON: true)
            }
        }
        if mediaType == "application/x-www-form-urlencoded" {
            let text = String(decoding: data, as: UTF8.self)
            var object = JSONObject()
            for (name, value) in formFields(text) where !name.isEmpty { object[name] = .string(value) }
            return ReadBody(mediaType: mediaType, value: .object(object), isJSON: false)
        }
        if MediaTypeText.isText(mediaType), let text = String(data: data, encoding: .utf8) {
            return ReadBody(mediaType: mediaType, text: String(text.prefix(2048)), isJSON: false)
        }
        skips.note("binary \(side) bodies (media type noted, no schema or example)", flow)
        return ReadBody(mediaType: mediaType, isJSON: false)
    }

    /// `a=1&b=x+y` into decoded pairs, in order.
    static func formFields(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// Media types as `Content-Type` carries them.
enum MediaTypeText {
    /// `application/json; charset=utf-8` → `application/json`.
    static func essence(_ value: String?) -> String? {
        guard let value else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.contains("/") ? type : nil
    }

    static func isJSON(_ mediaType: String) -> Bool {
        mediaType.hasSuffix("/json") || mediaType.hasSuffix("+json")
    }

    static func isText(_ mediaType: String) -> Bool {
        mediaType.hasPrefix("text/") || mediaType.hasSuffix("/xml") || mediaType.hasSuffix("+xml")
            || mediaType == "application/javascript" || mediaType == "application/yaml"
    }
}

/// Which headers say something about the API. Transport, caching, browser and proxy headers
/// don't; credentials become security schemes instead. `kagami diff` compares the same ones.
public enum HeaderSelection {
    static let transport: Set<String> = [
        "host", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "content-length",
        "content-type", "content-encoding", "date", "via", "forwarded", "alt-svc", "expect", "priority",
    ]
    static let requestOnly: Set<String> = [
        "accept", "accept-encoding", "accept-language", "accept-charset", "user-agent", "referer", "origin",
        "cache-control", "pragma", "cookie", "dnt", "upgrade-insecure-requests", "prefer", "range",
        "x-real-ip", "x-requested-with", "x-kagami-repeat-of",
    ]
    static let responseOnly: Set<String> = [
        "server", "cache-control", "expires", "pragma", "etag", "last-modified", "vary", "age", "set-cookie",
        "strict-transport-security", "x-powered-by", "accept-ranges", "x-content-type-options", "x-frame-options",
        "x-xss-protection", "referrer-policy", "report-to", "nel", "server-timing", "content-security-policy",
        "content-security-policy-report-only", "permissions-policy", "x-cache", "x-served-by", "x-timer", "cf-ray",
    ]

    public static func ignoredInRequests(_ lowered: String) -> Bool {
        transport.contains(lowered) || requestOnly.contains(lowered) || lowered.hasPrefix("proxy-")
            || lowered.hasPrefix("if-") || lowered.hasPrefix("sec-") || lowered.hasPrefix("x-forwarded-")
            || lowered.hasPrefix(":") || Redaction.isSecret(lowered)
    }

    public static func ignoredInResponses(_ lowered: String) -> Bool {
        transport.contains(lowered) || responseOnly.contains(lowered) || lowered.hasPrefix("proxy-")
            || lowered.hasPrefix("access-control-") || lowered.hasPrefix(":") || Redaction.isSecret(lowered)
    }
}

/// Secrets never reach a drafted description: credentials become security schemes, and values
/// under names that hold secrets are replaced in examples.
public enum Redaction {
    public static let placeholder = "REDACTED"

    private static let secretWords = ["password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "authorization", "cookie", "session", "signature", "credential", "private_key", "privatekey"]

    private static let secretWordBytes = secretWords.map { Array($0.utf8) }

    /// True for a header, parameter or property name whose value is a secret: one of the
    /// secret words anywhere in it, ASCII letters compared without case (a byte search: this
    /// runs for every header of every exchange `kagami diff` and `kagami infer` read).
    public static func isSecret(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            secretWordBytes.contains { word in
                guard bytes.count >= word.count else { return false }
                search: for start in 0...(bytes.count - word.count) {
                    for offset in 0..<word.count {
                        var byte = bytes[start + offset]
                        if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
                        if byte != word[offset] { continue search }
                    }
                    return true
                }
                return false
            }
        }
    }

    static func isAPIKeyHeader(_ lowered: String) -> Bool {
        ["x-api-key", "api-key", "apikey", "x-apikey", "x-auth-token", "x-access-token"].contains(lowered)
    }

    static func apiKeyQueryName(_ name: String) -> AuthenticationKind? {
        ["api_key", "apikey", "api-key", "access_token", "key", "token", "auth"].contains(name.lowercased()) ? .apiKeyQuery : nil
    }

    /// The value with every member under a secret name replaced (strings by the placeholder).
    public static func redacted(_ value: JSONValue, depth: Int = 0) -> JSONValue {
        guard depth < SchemaSketch.Limits.depth else { return value }
        switch value {
        case .object(let members):
            var result = JSONObject()
            for (key, member) in members {
                if isSecret(key), case .string = member {
                    result[key] = .string(placeholder)
                } else {
                    result[key] = redacted(member, depth: depth + 1)
                }
            }
            return .object(result)
        case .array(let items):
            return .array(items.map { redacted($0, depth: depth + 1) })
        case .string(let text):
            // JSON carried as text (an echo, a queued message) is redacted inside too.
            guard let first = text.utf8.first(where: { $0 != 0x20 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
                  let inner = try? JSONValue(parsing: text) else { return value }
            let cleaned = redacted(inner, depth: depth + 1)
            return cleaned == inner ? value : .string(cleaned.serialized())
        default:
            return value
        }
    }
}
