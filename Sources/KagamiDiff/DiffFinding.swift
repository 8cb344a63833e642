// One thing that changed between two captures, said about one operation.
import Foundation

/// An operation of the API as both captures are grouped by: a method and a path template on a
/// host, from the description given (`--contract`) or inferred from both captures together.
/// The port and scheme are left out, so a local server on another port, or the same API over
/// HTTPS, still lines up.
public struct DiffOperation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Upper-cased; `CONNECT` for tunnels Kagami relayed without reading.
    public var method: String
    /// Lower-cased host name.
    public var host: String
    /// `/users/{userId}`; `host:port` for a tunnel.
    public var template: String
    /// The description's name for the operation (Blueprint action, OpenAPI operationId), when
    /// it came from one.
    public var name: String?

    public init(method: String, host: String, template: String, name: String? = nil) {
        self.method = method
        self.host = host
        self.template = template
        self.name = name
    }

    /// `GET /users/{userId}`.
    public var description: String { "\(method) \(template)" }

    public static func < (a: DiffOperation, b: DiffOperation) -> Bool {
        (a.host, a.template, a.method) < (b.host, b.template, b.method)
    }
}

/// What changed, and where, in one operation.
public struct DiffFinding: Sendable, Hashable {
    /// The kinds, as `--fail-on` and the JSON report spell them.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Comparable {
        /// The after capture calls an operation the before capture never called.
        case addedOperation = "added-operation"
        case removedOperation = "removed-operation"
        /// The operation is called a different number of times.
        case callCount = "call-count"
        /// The operation's first call moved among the others (`B calls /config before /feed`).
        case order
        /// Other response statuses (or gRPC statuses, or errors instead of a response).
        case status
        /// A body's media type is another.
        case mediaType = "media-type"
        /// A JSON member (or gRPC field) that only the after capture has.
        case addedField = "added-field"
        case removedField = "removed-field"
        /// A member's JSON type is another (`integer` → `string`); integers and fractions are one type here.
        case type
        /// A member is null where it never was, or never null where it was.
        case nullability
        /// A member is present in some messages where it was in all, or the other way round.
        case presence
        /// A query parameter only the after capture sends.
        case addedParameter = "added-parameter"
        case removedParameter = "removed-parameter"
        /// A selected header (one that says something about the API) only one side has.
        case addedHeader = "added-header"
        case removedHeader = "removed-header"
        /// A value that is the same in every exchange of each capture, but not the same in both.
        case value
        /// The operation's median or 95th percentile duration grew past the threshold.
        case slower
        case faster
        /// The response body's median or 95th percentile size grew past the threshold.
        case larger
        case smaller

        public static func < (a: Kind, b: Kind) -> Bool {
            allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
        }
    }

    public var operation: DiffOperation
    public var kind: Kind
    public var location: DiffLocation
    /// The before capture's side of it, in words or JSON (`integer`, `"premium"`, `200 ×3`); nil when it had nothing there.
    public var before: String?
    public var after: String?
    /// Exchanges that show it: a few of the before capture's…
    public var beforeExchanges: [UUID]
    /// …and of the after capture's.
    public var afterExchanges: [UUID]

    public init(
        operation: DiffOperation, kind: Kind, location: DiffLocation, before: String?, after: String?,
        beforeExchanges: [UUID] = [], afterExchanges: [UUID] = []
    ) {
        self.operation = operation
        self.kind = kind
        self.location = location
        self.before = before
        self.after = after
        self.beforeExchanges = beforeExchanges
        self.afterExchanges = afterExchanges
    }

    /// One line for people: `removed-field response 200 body /user/email (before string; after absent)`.
    public var message: String {
        switch kind {
        case .addedOperation: return "only the after capture calls it (\(after ?? ""))"
        case .removedOperation: return "only the before capture calls it (\(before ?? ""))"
        case .order: return "the after capture calls it \(after ?? ""); the before capture called it \(before ?? "")"
        default:
            let place = location.description
            return "\(kind.rawValue)\(place.isEmpty ? "" : " \(place)"): \(before ?? "absent") → \(after ?? "absent")"
        }
    }
}

/// Where in an operation's exchanges a finding is.
public struct DiffLocation: Sendable, Hashable, CustomStringConvertible {
    public enum Part: String, Sendable, Hashable {
        /// The operation as a whole (added, removed, call count, order, status, durations).
        case operation
        case query
        case header
        case body
        /// WebSocket messages of one direction, after the handshake.
        case messages
        /// gRPC messages (Protocol Buffers read without a `.proto`: field numbers for names).
        case grpc
    }

    public enum Side: String, Sendable, Hashable {
        case request
        case response
    }

    public var part: Part
    public var side: Side?
    /// The response status the place belongs to (`200`, or a gRPC status's name).
    public var status: String?
    /// A parameter or header name, a WebSocket direction with the message kind (`receive`,
    /// `send type=chat`).
    public var name: String?
    /// JSON Pointer into the body or message; `*` stands for every element of an array and
    /// every member of a map keyed by ids (`/items/*/price`).
    public var pointer: String?

    public init(part: Part, side: Side? = nil, status: String? = nil, name: String? = nil, pointer: String? = nil) {
        self.part = part
        self.side = side
        self.status = status
        self.name = name
        self.pointer = pointer
    }

    public static let operation = DiffLocation(part: .operation)

    /// `response 200 body /user/email`, `request query ?page`, `messages receive type=chat /text`.
    public var description: String {
        var words: [String] = []
        if let side { words.append(side.rawValue) }
        if let status { words.append(status) }
        switch part {
        case .operation: break
        case .query: words.append("query"); if let name { words.append("?" + name) }
        case .header: words.append("header"); if let name { words.append(name) }
        case .body: words.append("body")
        case .messages: words.append("messages"); if let name { words.append(name) }
        case .grpc: words.append("grpc")
        }
        if let pointer { words.append(pointer.isEmpty ? "(whole)" : pointer) }
        return words.joined(separator: " ")
    }
}

/// Why two captures can't be diffed: said instead of an empty report that would read as
/// "nothing changed".
public enum DiffInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A capture (named by its label) holds no exchange at all.
    case empty(String)
    /// No operation is in both: different apps or servers, most likely.
    case nothingInCommon(before: [String], after: [String])

    public var description: String {
        switch self {
        case .empty(let label):
            return "\(label) has no exchanges to compare"
        case .nothingInCommon(let before, let after):
            func hosts(_ list: [String]) -> String {
                list.prefix(5).joined(separator: ", ") + (list.count > 5 ? ", …" : "")
            }
            return "the captures have no operation in common (before: \(hosts(before)); after: \(hosts(after))): they look like different apps or servers, not two builds of one"
        }
    }
}

/// Two captures not compared, in words that name them by their labels (`v1.sqlite`,
/// `this session (path:/v2/*)`): what `kagami diff`, the web UI's Diff view and the MCP tool say.
public struct DiffRefusal: Error, Sendable, CustomStringConvertible {
    public var reason: DiffInputError
    public var description: String

    public init(_ reason: DiffInputError, labels: (before: String, after: String)) {
        self.reason = reason
        switch reason {
        case .empty(let side):
            let label = side.contains("before") ? labels.before : labels.after
            description = "\(label) has no exchanges to compare\(label.hasSuffix(")") ? " (none match the filter)" : "")"
        case .nothingInCommon:
            description = "\(labels.before) and \(labels.after): \(reason.description)"
        }
    }
}

extension CaptureDiff {
    /// Two captures summarised side by side (both read at once), then compared; throws
    /// `DiffRefusal` when either is empty or they have nothing in common, and what reading
    /// them throws.
    public static func comparing(
        _ before: @escaping @Sendable () async throws -> CaptureSummary, _ after: @escaping @Sendable () async throws -> CaptureSummary,
        labels: (before: String, after: String)
    ) async throws -> CaptureDiff {
        async let old = before()
        async let new = after()
        let (first, second) = try await (old, new)
        do {
            return try CaptureDiff(before: first, after: second)
        } catch {
            throw DiffRefusal(error, labels: labels)
        }
    }
}
