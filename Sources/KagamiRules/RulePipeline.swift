import Foundation
import KagamiFlow
import KagamiGRPC

/// Charles's Tools as one ordered pipeline over flows. The engine builds one pipeline per rules
/// document (patterns are compiled here, once) and swaps it whole when the rules change; a
/// pipeline never changes, so any number of connections may share it.
///
/// For each exchange the engine calls, in this order:
///
/// 1. `requestBodyNeeded(for:)` with the request head (body empty). True means a Rewrite Body
///    rule may change the request body: buffer the whole body before step 2. Otherwise stream
///    the body and pass the head alone.
/// 2. `processRequest(_:)`. The verdict is one of:
///    - `.block(.dropConnection)`: close the client connection without a response;
///    - `.block(.forbidden)`: answer `RulePipeline.forbiddenResponse`;
///    - `.respond(LocalResponse)`: answer from the file (Map Local), no server involved;
///    - `.forward(FlowRequest)`: send this request, which may be rewritten. Its scheme, host and
///      port are where to connect (Map Remote may have changed them; `https` means TLS), its
///      target and headers (Host included) are what to send.
///    Stages run in this order: Block List, Allow List, Map Local, Map Remote, Rewrite (request
///    side, sets in document order), No Caching. Locations are matched against the request as
///    the client sent it.
/// 3. `throttleProfile(for:)` with the client's request: nil, or the profile to shape both
///    directions with (`ThrottleShaper`, `ThrottleConditions`) and its latency to add once.
/// 4. `responseBodyNeeded(for:)` with the client's request, before the response body arrives.
///    True: buffer the whole response body (a Rewrite Body rule may act on it) before step 5.
/// 5. `processResponse(_:for:)` with the response (head only when not buffered) and the
///    client's request: Rewrite (response side), then No Caching. Local answers need not pass
///    through it, but may.
///
/// Every step returns `RuleApplication`s: append them to `Flow.appliedRules`.
///
/// A class: each exchange keeps the pipeline it started under, and a reference costs one retain
/// where a copy of its lists cost one per list.
public final class RulePipeline: Sendable {
    public let rules: RuleSet
    /// The folders Map Local answers from; relative paths start at their base (the rules
    /// file's directory).
    public let mapLocalFolders: MapLocalFolders
    /// The types Map Local writes a gRPC call's answer with, from a JSON file: the given
    /// schema, or what the server's reflection said of the method.
    public let grpcSchemas: GRPCSchemas

    let blockList: [(rule: BlockListRule, locations: [LocationMatcher])]
    let allowList: [(rule: AllowListRule, locations: [LocationMatcher])]
    let mapLocal: [(rule: MapLocalRule, source: LocationMatcher)]
    let mapRemote: [(rule: MapRemoteRule, source: LocationMatcher)]
    let rewrite: [(set: RewriteSet, locations: [LocationMatcher], rules: [CompiledRewriteRule])]
    let noCaching: [(rule: NoCachingRule, locations: [LocationMatcher])]
    let throttleHosts: [LocationMatcher]
    let throttle: ThrottleProfile?

    /// The reply to a request a Block or Allow List refuses with 403.
    public static let forbiddenResponse: FlowResponse = {
        let body = Data("Blocked by Kagami rules.\n".utf8)
        return FlowResponse(
            status: 403, reason: "Forbidden",
            headers: HeaderFields([
                ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count)), ("Connection", "close"),
            ]),
            body: FlowBody(data: body))
    }()

    /// Throws when a rule can't be used: a regular expression that doesn't compile, a Map Local
    /// path outside `mapLocalFolders`.
    public init(_ rules: RuleSet, mapLocalFolders: MapLocalFolders = .none, grpcSchemas: GRPCSchemas = GRPCSchemas()) throws(RuleDocumentError) {
        self.rules = rules
        self.mapLocalFolders = mapLocalFolders
        self.grpcSchemas = grpcSchemas
        for (index, rule) in rules.mapLocal.enumerated() where rule.isEnabled {
            let path = mapLocalFolders.absolute(rule.localPath)
            // What exists must be in the folders; what doesn't yet (a file saved later) must be
            // somewhere it could be saved.
            let inside = FileManager.default.fileExists(atPath: path)
                ? mapLocalFolders.readable(path) != nil
                : (try? mapLocalFolders.writable(path).get()) != nil
            guard inside else {
                throw RuleDocumentError(
                    file: "rules", line: nil, column: nil, field: "mapLocal[\(index)].local",
                    message: MapLocalFolders.AccessRefused(path: rule.localPath, folders: mapLocalFolders).description)
            }
        }
        blockList = rules.blockList.filter(\.isEnabled).map { ($0, $0.locations.map(LocationMatcher.init)) }
        allowList = rules.allowList.filter(\.isEnabled).map { ($0, $0.locations.map(LocationMatcher.init)) }
        mapLocal = rules.mapLocal.filter(\.isEnabled).map { ($0, LocationMatcher($0.from)) }
        mapRemote = rules.mapRemote.filter(\.isEnabled).map { ($0, LocationMatcher($0.from)) }
        noCaching = rules.noCaching.filter(\.isEnabled).map { ($0, $0.locations.map(LocationMatcher.init)) }
        var rewrite: [(set: RewriteSet, locations: [LocationMatcher], rules: [CompiledRewriteRule])] = []
        for (setIndex, set) in rules.rewrite.enumerated() where set.isEnabled {
            var compiled: [CompiledRewriteRule] = []
            for (ruleIndex, rule) in set.rules.enumerated() where rule.isEnabled {
                do {
                    compiled.append(try CompiledRewriteRule(rule))
                } catch {
                    throw RuleDocumentError(
                        file: "rules", line: nil, column: nil, field: "rewrite[\(setIndex)].rules[\(ruleIndex)].match",
                        message: "invalid regular expression \"\(error.pattern)\": \(error.reason)")
                }
            }
            rewrite.append((set, set.locations.map(LocationMatcher.init), compiled))
        }
        self.rewrite = rewrite
        throttle = rules.throttling.activeProfile
        throttleHosts = rules.throttling.onlyFor.map(LocationMatcher.init)
    }

    // MARK: Request

    public func requestBodyNeeded(for request: FlowRequest) -> Bool {
        rewrite.indices.contains { index in
            rewrite[index].rules.contains { $0.needsBody && $0.rule.target.includesRequest } && covers(rewrite[index].locations, request)
        }
    }

    public func processRequest(_ request: FlowRequest) -> RequestVerdict {
        var applications: [RuleApplication] = []
        // Indices, not `for entry in`: the loops look at every rule on every request, and copying
        // an entry out of its array costs a retain per string in it.
        for index in blockList.indices where blockList[index].locations.anyMatches(request) {
            let entry = blockList[index]
            applications.append(RuleApplication(name: "Block List '\(entry.rule.name)'", description: entry.rule.action.summary))
            return RequestVerdict(action: .block(entry.rule.action), applications: applications)
        }
        if let first = allowList.first, !allowList.contains(where: { $0.locations.anyMatches(request) }) {
            applications.append(RuleApplication(
                name: "Allow List '\(first.rule.name)'", description: "not on the allow list; \(first.rule.action.summary)"))
            return RequestVerdict(action: .block(first.rule.action), applications: applications)
        }
        for index in mapLocal.indices where mapLocal[index].source.matches(request) {
            let entry = mapLocal[index]
            guard let file = entry.rule.file(for: request, source: entry.source, folders: mapLocalFolders) else { continue }
            let base = mapLocalFolders.base
            let shown = file.path.hasPrefix(base + "/") ? String(file.path.dropFirst(base.count + 1)) : file.path
            var response = LocalResponse(filePath: file.path, size: file.size)
            var description = "mapped to local file \(shown)"
            if GRPCExchange.isGRPC(contentType: request.headers["content-type"]), file.path.lowercased().hasSuffix(".json") {
                let schema = grpcSchemas.knownSchema(for: request) ?? ProtobufSchema()
                let answer = LocalResponse.grpcAnswer(file: file.path, shown: shown, request: request, schema: schema)
                response = answer.response
                description += answer.note.map { ": \($0)" } ?? " as gRPC messages"
            }
            applications.append(RuleApplication(name: "Map Local '\(entry.rule.name)'", description: description))
            response.headers = applyingNoCaching(to: response.headers, for: request, applications: &applications)
            return RequestVerdict(action: .respond(response), applications: applications)
        }
        var forwarded = request
        for index in mapRemote.indices where mapRemote[index].source.matches(request) {
            let entry = mapRemote[index]
            forwarded = entry.rule.mapped(request, source: entry.source)
            applications.append(RuleApplication(name: "Map Remote '\(entry.rule.name)'", description: "mapped to \(forwarded.url)"))
            break
        }
        for index in rewrite.indices where covers(rewrite[index].locations, request) {
            let entry = rewrite[index]
            for rule in entry.rules {
                if let change = rule.apply(to: &forwarded) {
                    applications.append(RuleApplication(name: "Rewrite '\(entry.set.name)'", description: change))
                }
            }
        }
        for index in noCaching.indices where covers(noCaching[index].locations, request) {
            let entry = noCaching[index]
            let change = NoCachingRule.strip(&forwarded.headers)
            applications.append(RuleApplication(name: "No Caching '\(entry.rule.name)'", description: change))
            break
        }
        return RequestVerdict(action: .forward(forwarded), applications: applications)
    }

    /// Whether Map Local would answer this gRPC call from a JSON file whose method is still
    /// being learned from the server's reflection: the proxy waits for
    /// `grpcSchemas.reflected(for:)` before it asks `processRequest(_:)`.
    public func mapLocalAwaitsGRPCSchema(for request: FlowRequest) -> Bool {
        guard !mapLocal.isEmpty, GRPCExchange.isGRPC(contentType: request.headers["content-type"]), grpcSchemas.isLearning(request) else { return false }
        for index in mapLocal.indices where mapLocal[index].source.matches(request) {
            let entry = mapLocal[index]
            guard let file = entry.rule.file(for: request, source: entry.source, folders: mapLocalFolders) else { continue }
            return file.path.lowercased().hasSuffix(".json")
        }
        return false
    }

    /// Block List and Allow List for a tunnel (a CONNECT to `host:port`), decided before any of
    /// its bytes are read: nil lets it through. A Block List location blocks the tunnel when it
    /// names the whole host (its path and query blank or `*`, its protocol blank, `*` or
    /// `https`); one naming paths is left to the requests inside, when the tunnel is
    /// intercepted. With an Allow List, a tunnel to a host and port none of its locations names
    /// is refused.
    public func processTunnel(host: String, port: Int) -> RequestVerdict? {
        let request = FlowRequest(method: "CONNECT", scheme: "https", host: host, port: port, target: "/")
        for index in blockList.indices where blockList[index].locations.contains(where: { $0.coversWholeHost && $0.matches(request) }) {
            let entry = blockList[index]
            let application = RuleApplication(name: "Block List '\(entry.rule.name)'", description: entry.rule.action.summary)
            return RequestVerdict(action: .block(entry.rule.action), applications: [application])
        }
        if let first = allowList.first, !allowList.contains(where: { $0.locations.contains { $0.matches(host: host, port: port) } }) {
            let application = RuleApplication(name: "Allow List '\(first.rule.name)'", description: "not on the allow list; \(first.rule.action.summary)")
            return RequestVerdict(action: .block(first.rule.action), applications: [application])
        }
        return nil
    }

    // MARK: Throttling

    public func throttleProfile(for request: FlowRequest) -> ThrottleProfile? {
        guard let throttle else { return nil }
        guard throttleHosts.isEmpty || throttleHosts.anyMatches(request) else { return nil }
        return throttle
    }

    /// What to store on a throttled exchange.
    public static func throttleApplication(_ profile: ThrottleProfile) -> RuleApplication {
        RuleApplication(name: "Throttling", description: "throttled by \(profile.name)")
    }

    // MARK: Response

    public func responseBodyNeeded(for request: FlowRequest) -> Bool {
        rewrite.indices.contains { index in
            rewrite[index].rules.contains { $0.needsBody && $0.rule.target.includesResponse } && covers(rewrite[index].locations, request)
        }
    }

    /// Whether `processResponse(_:for:)` could change a response to `request`: a Rewrite set
    /// with a response-side rule, or a No Caching rule, covers it. When not, the engine leaves
    /// the response head as the server sent it without converting it to ask.
    public func hasResponseRules(for request: FlowRequest) -> Bool {
        rewrite.indices.contains { index in
            rewrite[index].rules.contains { $0.rule.target.includesResponse } && covers(rewrite[index].locations, request)
        } || noCaching.indices.contains { covers(noCaching[$0].locations, request) }
    }

    /// `request` is the request as the client sent it, which locations are matched against.
    public func processResponse(_ response: FlowResponse, for request: FlowRequest) -> ResponseVerdict {
        var response = response
        var applications: [RuleApplication] = []
        for index in rewrite.indices where covers(rewrite[index].locations, request) {
            let entry = rewrite[index]
            for rule in entry.rules {
                if let change = rule.apply(to: &response) {
                    applications.append(RuleApplication(name: "Rewrite '\(entry.set.name)'", description: change))
                }
            }
        }
        response.headers = applyingNoCaching(to: response.headers, for: request, applications: &applications)
        return ResponseVerdict(response: response, applications: applications)
    }

    private func applyingNoCaching(
        to headers: HeaderFields, for request: FlowRequest, applications: inout [RuleApplication]
    ) -> HeaderFields {
        var headers = headers
        if let index = noCaching.firstIndex(where: { covers($0.locations, request) }) {
            let entry = noCaching[index]
            let change = NoCachingRule.stripResponse(&headers)
            applications.append(RuleApplication(name: "No Caching '\(entry.rule.name)'", description: change))
        }
        return headers
    }

    /// An empty location list covers every request.
    func covers(_ locations: [LocationMatcher], _ request: FlowRequest) -> Bool {
        locations.isEmpty || locations.anyMatches(request)
    }
}

/// What to do with a request.
public struct RequestVerdict: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case forward(FlowRequest)
        case block(BlockAction)
        case respond(LocalResponse)
    }

    public var action: Action
    public var applications: [RuleApplication]
}

public struct ResponseVerdict: Sendable, Hashable {
    public var response: FlowResponse
    public var applications: [RuleApplication]
}

/// A Map Local answer: send the head, then the file's bytes.
public struct LocalResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var headers: HeaderFields
    /// Absolute path of the file whose bytes are the body.
    public var filePath: String
    public var size: Int
    /// The body made from the file (a gRPC call's messages written from its JSON); nil: the
    /// file's bytes as they are.
    public var body: Data?
    /// Fields sent after the body (a gRPC call's status).
    public var trailers: HeaderFields?

    init(filePath: String, size: Int) {
        status = 200
        reason = "OK"
        self.filePath = filePath
        self.size = size
        headers = HeaderFields([
            ("Content-Type", MapLocalRule.contentType(forFile: filePath)),
            ("Content-Length", String(size)),
        ])
    }

    /// The answer with the file read into it, for engines that don't stream files; nil when the
    /// file can no longer be read.
    public func loaded() -> FlowResponse? {
        guard let data = body ?? FileManager.default.contents(atPath: filePath) else { return nil }
        var headers = headers
        headers.set("Content-Length", String(data.count))
        var response = FlowResponse(status: status, reason: reason, headers: headers, body: FlowBody(data: data))
        response.trailers = trailers
        return response
    }
}
