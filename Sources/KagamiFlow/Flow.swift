import Foundation

/// One HTTP exchange as Kagami saw it: what the client asked, what came back, when, and what
/// went wrong. Every part of Kagami (proxy, rules, store, UI, exports) speaks in flows.
public struct Flow: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    /// How the exchange reached Kagami.
    public var mode: Mode
    /// `host:port` of the client connection.
    public var clientAddress: String?
    /// `host:port` of the server connection, once one was made.
    public var serverAddress: String?
    public var request: FlowRequest
    public var response: FlowResponse?
    public var timings: FlowTimings
    public var error: FlowError?
    public var tls: TLSInfo?
    /// Where the exchange disagreed with the API description.
    public var violations: [ContractViolation]
    /// The rules that changed this exchange, in the order they acted.
    public var appliedRules: [RuleApplication]
    /// Fields of an imported HTTP Archive entry that the flow's own values don't reproduce.
    public var archiveFields: [ArchiveField]? = nil
    /// The exchange this one sent again (Repeat, Repeat Advanced).
    public var repeatOf: UUID? = nil
    /// The HTTP/2 stream the exchange was on, on the client's connection (nil for HTTP/1).
    public var streamID: Int? = nil

    /// The request header a repeated request carries to the proxy, naming the exchange it
    /// repeats; the proxy removes it and sets `repeatOf`.
    public static let repeatHeaderName = "X-Kagami-Repeat-Of"

    public enum Mode: String, Sendable, Hashable, Codable {
        /// An absolute-form request sent to the proxy.
        case forward
        /// A request to the reverse-proxy listener, sent on to its fixed upstream.
        case reverse
        /// A CONNECT tunnel whose bytes were relayed untouched.
        case tunnel
        /// A request answered by the mock server from an API description.
        case mock
    }

    /// Without an `id`, a new time-ordered one for `timings.start`.
    public init(
        id: UUID? = nil,
        mode: Mode,
        clientAddress: String? = nil,
        serverAddress: String? = nil,
        request: FlowRequest,
        response: FlowResponse? = nil,
        timings: FlowTimings,
        error: FlowError? = nil,
        tls: TLSInfo? = nil,
        violations: [ContractViolation] = [],
        appliedRules: [RuleApplication] = []
    ) {
        self.id = id ?? .timeOrdered(at: timings.start)
        self.mode = mode
        self.clientAddress = clientAddress
        self.serverAddress = serverAddress
        self.request = request
        self.response = response
        self.timings = timings
        self.error = error
        self.tls = tls
        self.violations = violations
        self.appliedRules = appliedRules
    }

    // Written by hand only so that flows stored before `appliedRules` existed still decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        mode = try container.decode(Mode.self, forKey: .mode)
        clientAddress = try container.decodeIfPresent(String.self, forKey: .clientAddress)
        serverAddress = try container.decodeIfPresent(String.self, forKey: .serverAddress)
        request = try container.decode(FlowRequest.self, forKey: .request)
        response = try container.decodeIfPresent(FlowResponse.self, forKey: .response)
        timings = try container.decode(FlowTimings.self, forKey: .timings)
        error = try container.decodeIfPresent(FlowError.self, forKey: .error)
        tls = try container.decodeIfPresent(TLSInfo.self, forKey: .tls)
        violations = try container.decode([ContractViolation].self, forKey: .violations)
        appliedRules = try container.decodeIfPresent([RuleApplication].self, forKey: .appliedRules) ?? []
        archiveFields = try container.decodeIfPresent([ArchiveField].self, forKey: .archiveFields)
        repeatOf = try container.decodeIfPresent(UUID.self, forKey: .repeatOf)
        streamID = try container.decodeIfPresent(Int.self, forKey: .streamID)
    }

    /// Time from the request's start to the end of the exchange.
    public var duration: TimeInterval? {
        timings.end.map { $0.timeIntervalSince(timings.start) }
    }
}

public struct FlowRequest: Sendable, Hashable, Codable {
    public var method: String
    public var scheme: String
    public var host: String
    public var port: Int
    /// Path and query as sent (origin form), e.g. `/search?q=a`; `host:port` for CONNECT.
    public var target: String
    /// e.g. `HTTP/1.1`.
    public var version: String
    public var headers: HeaderFields
    public var body: FlowBody

    public init(
        method: String, scheme: String, host: String, port: Int, target: String,
        version: String = "HTTP/1.1", headers: HeaderFields = HeaderFields(), body: FlowBody = FlowBody()
    ) {
        self.method = method
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The full URL, with the port only when it is not the scheme's default.
    public var url: String {
        if method == "CONNECT" { return target }
        return "\(scheme)://\(authority)\(target.hasPrefix("/") || target == "*" ? "" : "/")\(target)"
    }

    /// `host[:port]` as a Host header has it: the port only when it is not the scheme's default.
    public var authority: String {
        Authority(host: host, port: port).text(omittingPort: AbsoluteURL.defaultPort(for: scheme))
    }

    /// 443 for `https` and `wss`, 80 otherwise.
    public static func defaultPort(for scheme: String) -> Int { AbsoluteURL.defaultPort(for: scheme) }

    /// The path without the query.
    public var path: String {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
    }

    /// The query without the leading `?`, or nil when there is none.
    public var query: String? {
        guard let index = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: index)...])
    }
}

public struct FlowResponse: Sendable, Hashable, Codable {
    public var status: Int
    public var reason: String
    public var version: String
    public var headers: HeaderFields
    public var body: FlowBody
    /// Fields sent after the body (chunked trailers, HTTP/2 trailing HEADERS: gRPC's status).
    public var trailers: HeaderFields? = nil

    public init(status: Int, reason: String = "", version: String = "HTTP/1.1", headers: HeaderFields = HeaderFields(), body: FlowBody = FlowBody()) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
    }
}

/// A message body: the bytes kept (up to the capture limit) and the real size.
///
/// The kept bytes are held in the parts they arrived in: a proxy keeps each large part in the
/// buffer it was read into (shared, not copied) and writes the parts to the session as they are.
/// `data` joins them, a copy when there are several, for whoever needs the body whole.
public struct FlowBody: Sendable, Hashable, Codable {
    /// The kept bytes, in order.
    public private(set) var parts: [Data]
    /// How many bytes are kept: the sum of the parts.
    public private(set) var keptCount: Int
    /// Bytes of body that passed through, which may exceed `keptCount`.
    public var size: Int
    /// True when the kept bytes are only the first part of the body.
    public var isTruncated: Bool
    /// The last part was copied in by `append(copying:)`, so more bytes may be added to it.
    private var lastPartGrows = false

    public init(data: Data = Data(), size: Int? = nil, isTruncated: Bool = false) {
        parts = data.isEmpty ? [] : [data]
        keptCount = data.count
        self.size = size ?? data.count
        self.isTruncated = isTruncated
    }

    /// The body as received (after de-chunking, before any content decoding), up to the limit.
    public var data: Data {
        get {
            switch parts.count {
            case 0: return Data()
            case 1: return parts[0]
            default:
                var joined = Data(capacity: keptCount)
                for part in parts { joined.append(part) }
                return joined
            }
        }
        set {
            parts = newValue.isEmpty ? [] : [newValue]
            keptCount = newValue.count
            lastPartGrows = false
        }
    }

    /// Keeps `part` as it is (a `Data` sharing the buffer it was read into, say).
    public mutating func append(_ part: Data) {
        guard !part.isEmpty else { return }
        parts.append(part)
        keptCount += part.count
        lastPartGrows = false
    }

    /// Keeps a copy of `bytes`, added to the last part when that is a copy too: small pieces
    /// are gathered rather than each held apart.
    public mutating func append(copying bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if lastPartGrows, !parts.isEmpty {
            parts[parts.count - 1].append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        } else {
            parts.append(Data(bytes: base, count: bytes.count))
            lastPartGrows = true
        }
        keptCount += bytes.count
    }

    public static func == (lhs: FlowBody, rhs: FlowBody) -> Bool {
        lhs.size == rhs.size && lhs.isTruncated == rhs.isTruncated && lhs.keptCount == rhs.keptCount && lhs.data == rhs.data
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(data)
        hasher.combine(size)
        hasher.combine(isTruncated)
    }

    private enum CodingKeys: String, CodingKey {
        case data, size, isTruncated
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            data: try container.decode(Data.self, forKey: .data),
            size: try container.decode(Int.self, forKey: .size),
            isTruncated: try container.decode(Bool.self, forKey: .isTruncated))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(data, forKey: .data)
        try container.encode(size, forKey: .size)
        try container.encode(isTruncated, forKey: .isTruncated)
    }
}

/// When each phase of the exchange happened.
public struct FlowTimings: Sendable, Hashable, Codable {
    /// The request head arrived from the client.
    public var start: Date
    /// The connection to the server was ready.
    public var connected: Date?
    /// The last byte of the request went to the server.
    public var requestSent: Date?
    /// The first byte of the response arrived from the server.
    public var firstByte: Date?
    /// The exchange ended: response fully relayed, or failed.
    public var end: Date?
    /// Phases measured by another tool (a browser's HAR) that Kagami's own points don't cover:
    /// waiting for a connection, the DNS lookup, and the TLS handshake within `connected`.
    public var blocked: TimeInterval? = nil
    public var dns: TimeInterval? = nil
    public var ssl: TimeInterval? = nil
    /// Time the request waited at a breakpoint, right after `start` (before the connection):
    /// someone deciding, not the network.
    public var heldAtRequest: TimeInterval? = nil
    /// Time the response waited at a breakpoint, right after `firstByte`.
    public var heldAtResponse: TimeInterval? = nil

    public init(
        start: Date, connected: Date? = nil, requestSent: Date? = nil, firstByte: Date? = nil, end: Date? = nil,
        blocked: TimeInterval? = nil, dns: TimeInterval? = nil, ssl: TimeInterval? = nil,
        heldAtRequest: TimeInterval? = nil, heldAtResponse: TimeInterval? = nil
    ) {
        self.start = start
        self.connected = connected
        self.requestSent = requestSent
        self.firstByte = firstByte
        self.end = end
        self.blocked = blocked
        self.dns = dns
        self.ssl = ssl
        self.heldAtRequest = heldAtRequest
        self.heldAtResponse = heldAtResponse
    }
}

/// Why an exchange did not complete normally.
public struct FlowError: Sendable, Hashable, Codable, CustomStringConvertible {
    public var kind: Kind
    public var message: String

    public enum Kind: String, Sendable, Hashable, Codable {
        case connectionRefused
        case connectionReset
        case timeout
        case badResponse
        case dnsFailure
        case clientDisconnected
        case badRequest
        case tlsFailure
        case aborted
        /// The destination is outside the proxy's upstream allow list.
        case notAllowed
        case other
    }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// What was negotiated on a TLS connection.
public struct TLSInfo: Sendable, Hashable, Codable {
    /// Negotiated with the server.
    public var version: String?
    /// Negotiated with the client (intercepted connections).
    public var clientVersion: String?
    public var cipherSuite: String?
    public var alpn: String?
    public var serverName: String?
    public var certificateSubject: String?
    public var certificateIssuer: String?
    public var certificateFingerprintSHA256: String?
    /// True when upstream certificate checks were turned off for this exchange.
    public var upstreamVerificationDisabled: Bool

    public init(
        version: String? = nil, clientVersion: String? = nil, cipherSuite: String? = nil, alpn: String? = nil, serverName: String? = nil,
        certificateSubject: String? = nil, certificateIssuer: String? = nil,
        certificateFingerprintSHA256: String? = nil, upstreamVerificationDisabled: Bool = false
    ) {
        self.version = version
        self.clientVersion = clientVersion
        self.cipherSuite = cipherSuite
        self.alpn = alpn
        self.serverName = serverName
        self.certificateSubject = certificateSubject
        self.certificateIssuer = certificateIssuer
        self.certificateFingerprintSHA256 = certificateFingerprintSHA256
        self.upstreamVerificationDisabled = upstreamVerificationDisabled
    }
}

/// One rule acting on an exchange, as the UI lists it: "Map Local 'user'" and
/// "mapped to local file docs/user.json".
public struct RuleApplication: Sendable, Hashable, Codable {
    /// The rule's kind and name, e.g. `Rewrite 'auth'`.
    public var name: String
    /// What it changed, in words.
    public var description: String

    public init(name: String, description: String) {
        self.name = name
        self.description = description
    }
}

/// A place where an exchange disagrees with the API description (or could not be checked
/// against it): which operation, which side and part of the message, the JSON pointers into the
/// body and into the description's schema, and what was expected and found.
public struct ContractViolation: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// No operation of the description has this path.
        case undocumentedPath = "undocumented-path"
        /// The path is documented, but not for this method.
        case undocumentedMethod = "undocumented-method"
        /// The operation documents no response with this status.
        case undocumentedStatus = "undocumented-status"
        /// A required parameter or header is absent.
        case missing
        /// A parameter's value does not fit its type, enumeration or schema.
        case parameter
        /// The body's media type is not one the description documents here.
        case contentType = "content-type"
        /// The description documents a JSON body and what came is not JSON.
        case notJSON = "not-json"
        /// A gRPC message does not decode as its method's message type (a wire type its field
        /// does not use, a string that is not UTF-8, broken framing).
        case messageType = "message-type"
        /// The body does not validate against the documented schema.
        case schema
        /// The body could not be checked (over the capture limit, an unknown encoding).
        case notChecked = "not-checked"
        /// The exchange uses what the description marks deprecated (a response header).
        case deprecated

        /// The exchange reached something the description does not mention.
        public var isUndocumented: Bool {
            self == .undocumentedPath || self == .undocumentedMethod || self == .undocumentedStatus
        }
    }

    public enum Side: String, Sendable, Hashable, Codable {
        case request
        case response
    }

    /// The part of the message.
    public enum Location: String, Sendable, Hashable, Codable {
        case method
        case status
        case header
        case query
        case path
        case cookie
        case body
    }

    public enum Severity: String, Sendable, Hashable, Codable {
        case error
        case warning
        /// Not a disagreement: something that was not checked, said so rather than called valid.
        case info
    }

    /// The description's operation the exchange was matched to.
    public struct Operation: Sendable, Hashable, Codable {
        /// Blueprint action name or OpenAPI operationId.
        public var name: String
        public var method: String
        /// The URI template as the description writes it.
        public var template: String

        public init(name: String, method: String, template: String) {
            self.name = name
            self.method = method
            self.template = template
        }
    }

    public var kind: Kind
    public var severity: Severity
    /// Nil when no operation matched (an undocumented path or method).
    public var operation: Operation?
    public var side: Side
    public var location: Location
    /// The header or parameter name, for those locations.
    public var name: String?
    /// JSON Pointer into the body (`/items/0/id`; `""` is the whole body).
    public var instancePointer: String?
    /// JSON Pointer of the failing keyword in the description (or in the schema it documents).
    public var schemaPointer: String?
    /// The schema keyword that failed (`type`, `required`, `enum`...).
    public var keyword: String?
    /// What the description allows, shortened.
    public var expected: String?
    /// What the exchange had, shortened.
    public var actual: String?
    /// The schema around the failing keyword (its JSON, shortened), to show beside the value.
    public var schemaExcerpt: String?
    public var message: String

    public init(
        kind: Kind, severity: Severity = .error, operation: Operation? = nil, side: Side, location: Location,
        name: String? = nil, instancePointer: String? = nil, schemaPointer: String? = nil, keyword: String? = nil,
        expected: String? = nil, actual: String? = nil, schemaExcerpt: String? = nil, message: String
    ) {
        self.kind = kind
        self.severity = severity
        self.operation = operation
        self.side = side
        self.location = location
        self.name = name
        self.instancePointer = instancePointer
        self.schemaPointer = schemaPointer
        self.keyword = keyword
        self.expected = expected
        self.actual = actual
        self.schemaExcerpt = schemaExcerpt
        self.message = message
    }

    // Written by hand so that violations stored in the first shape (`location` as free text
    // and a message) still decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try container.decode(String.self, forKey: .message)
        let locationText = try container.decodeIfPresent(String.self, forKey: .location) ?? ""
        guard let kindText = try container.decodeIfPresent(String.self, forKey: .kind) else {
            kind = .schema
            severity = .error
            side = locationText.hasPrefix("request") ? .request : .response
            location = Location.allCases.first { locationText.contains($0.rawValue) } ?? .body
            return
        }
        kind = Kind(rawValue: kindText) ?? .schema
        severity = try container.decodeIfPresent(String.self, forKey: .severity).flatMap(Severity.init(rawValue:)) ?? .error
        operation = try container.decodeIfPresent(Operation.self, forKey: .operation)
        side = try container.decodeIfPresent(String.self, forKey: .side).flatMap(Side.init(rawValue:)) ?? .response
        location = Location(rawValue: locationText) ?? .body
        name = try container.decodeIfPresent(String.self, forKey: .name)
        instancePointer = try container.decodeIfPresent(String.self, forKey: .instancePointer)
        schemaPointer = try container.decodeIfPresent(String.self, forKey: .schemaPointer)
        keyword = try container.decodeIfPresent(String.self, forKey: .keyword)
        expected = try container.decodeIfPresent(String.self, forKey: .expected)
        actual = try container.decodeIfPresent(String.self, forKey: .actual)
        schemaExcerpt = try container.decodeIfPresent(String.self, forKey: .schemaExcerpt)
    }

    /// Disagreements count; `info` entries only say what was not checked.
    public var isDisagreement: Bool { severity != .info }
}

extension ContractViolation.Location: CaseIterable {}

/// A field of an imported HTTP Archive entry that the flow's own values don't reproduce (a page
/// reference, a comment, a browser's own `_` field, a size the browser measured), kept as JSON
/// text so that exporting the flow again writes it back unchanged.
public struct ArchiveField: Sendable, Hashable, Codable {
    /// Member names from the entry down, e.g. `["response", "content", "compression"]`; paths
    /// that start with `log` belong to the archive around the entry.
    public var path: [String]
    /// The field's JSON text, or nil when the entry did not have a field Kagami would write.
    public var json: String?

    public init(path: [String], json: String?) {
        self.path = path
        self.json = json
    }
}
