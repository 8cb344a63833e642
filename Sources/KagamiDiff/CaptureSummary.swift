// One capture read once, an exchange at a time, into what a diff compares: the exchanges of
// each operation tallied, and the paths the operations' templates are inferred from. Memory
// grows with the number of operations and places in their bodies, not with the exchanges.
import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiInfer
import KagamiURITemplate

/// One side of a diff. Add every exchange in capture order (with its WebSocket messages), then
/// hand both sides to `CaptureDiff`.
public struct CaptureSummary: Sendable {
    public let options: DiffOptions
    /// Exchanges added.
    public private(set) var exchangeCount = 0
    /// Exchanges grouped before the templates are known: by a provisional path in which every
    /// segment that is a value (`42`, a UUID) is already `{}` (or by the description's
    /// operation, or a tunnel's host and port). Groups that turn out to be one template (its
    /// literal siblings collapsed, `/users/jake` beside `/users/42`) are merged at the end.
    var groups: [GroupKey: Group] = [:]
    /// Every path of each host's grouped-by-path exchanges, with how often it came: what the
    /// templates are inferred from (with the other capture's).
    var paths: [String: [String: Int]] = [:]
    /// Literal segments seen after each provisional prefix, to stop a segment that is really a
    /// value (search words, file names) making a group per exchange.
    private var literals: [String: Set<String>] = [:]

    /// Past this many literal segments after one prefix, new ones join the prefix's `{}` group.
    static let literalsPerPrefix = 200

    struct GroupKey: Hashable, Sendable {
        var method: String
        var host: String
        /// The provisional path (`/users/{}`), or a fixed operation's template.
        var path: String
        /// The operation is known already (the description's, or a tunnel's).
        var fixed: Bool
    }

    struct Group: Sendable {
        /// The operation, when fixed.
        var operation: DiffOperation?
        /// A path of the group, to look its template up by.
        var samplePath: String
        var tally = OperationTally()
    }

    public init(options: DiffOptions = DiffOptions()) {
        self.options = options
    }

    /// Adds the next exchange of the capture, with its WebSocket messages (for a handshake).
    public mutating func add(_ flow: Flow, messages: [WebSocketMessage] = []) {
        let position = exchangeCount
        exchangeCount += 1
        let host = flow.request.host.lowercased()
        let method = flow.request.method.uppercased()
        let key: GroupKey
        var operation: DiffOperation?
        if flow.mode == .tunnel || method == "CONNECT" {
            let target = flow.request.method == "CONNECT" ? flow.request.target : Authority(host: flow.request.host, port: flow.request.port).description
            operation = DiffOperation(method: "CONNECT", host: host, template: target.lowercased())
            key = GroupKey(method: "CONNECT", host: host, path: target.lowercased(), fixed: true)
        } else if let documented = documentedOperation(of: flow) {
            operation = DiffOperation(method: documented.method, host: host, template: documented.template, name: documented.name.isEmpty ? nil : documented.name)
            key = GroupKey(method: documented.method, host: host, path: documented.template, fixed: true)
        } else {
            let path = flow.request.path
            paths[host, default: [:]][path, default: 0] += 1
            key = GroupKey(method: method, host: host, path: provisionalPath(path, host: host, method: method), fixed: false)
        }
        if groups[key] == nil { groups[key] = Group(operation: operation, samplePath: flow.request.path) }
        groups[key]?.tally.add(flow, messages: messages, position: position, options: options)
    }

    /// The description's operation the flow matches, when a description is given.
    private func documentedOperation(of flow: Flow) -> ContractViolation.Operation? {
        guard let contract = options.contract, let relative = contract.relativeTarget(of: flow) else { return nil }
        guard case .matched(let route, _) = contract.routes.lookup(method: flow.request.method.uppercased(), target: URITemplate.Target(relative)) else {
            return nil
        }
        return route.operation
    }

    /// `/users/42/posts` → `/users/{}/posts`: value segments as `PathGeneraliser` would see
    /// them, before it has seen the other paths.
    private mutating func provisionalPath(_ path: String, host: String, method: String) -> String {
        var prefix = method + " " + host
        var result = ""
        for segment in PathGeneraliser.segments(of: path) {
            var shown = segment
            // A literal kept already was classified a word when it was kept.
            let known = literals[prefix]?.contains(segment) == true
            if !known, PathSegmentShape.of(segment).isValue {
                shown = "{}"
            } else if !known {
                if literals[prefix, default: []].count < Self.literalsPerPrefix {
                    literals[prefix, default: []].insert(segment)
                } else {
                    shown = "{}"
                }
            }
            result += "/" + shown
            prefix += "/" + shown
        }
        return result.isEmpty ? "/" : result
    }
}

extension CaptureSummary {
    /// Adds a page of exchanges in capture order, asking `messages` for the messages of each
    /// WebSocket handshake among them (a store keeps them apart from the flows).
    public mutating func add(_ page: [Flow], messages: (UUID) async throws -> [WebSocketMessage]) async rethrows {
        for flow in page {
            add(flow, messages: flow.isWebSocket ? try await messages(flow.id) : [])
        }
    }
}
