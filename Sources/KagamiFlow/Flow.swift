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

    public init(
        id: UUID = UUID(),
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
        self.id = id
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

    public var authority: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? bracketed : "\(bracketed):\(port)"
    }

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

    public init(status: Int, reason: String = "", version: String = "HTTP/1.1", headers: HeaderFields = HeaderFields(), body: FlowBody = FlowBody()) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
    }
}

/// A message body: the bytes kept (up to the capture limit) and the real size.
public struct FlowBody: Sendable, Hashable, Codable {
    /// The body as received (after de-chunking, before any content decoding), up to the limit.
    public var data: Data
    /// Bytes of body that passed through, which may exceed `data.count`.
    public var size: Int
    /// True when `data` holds only the first part of the body.
    public var isTruncated: Bool

    public init(data: Data = Data(), size: Int? = nil, isTruncated: Bool = false) {
        self.data = data
        self.size = size ?? data.count
        self.isTruncated = isTruncated
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

    public init(
        start: Date, connected: Date? = nil, requestSent: Date? = nil, firstByte: Date? = nil, end: Date? = nil,
        blocked: TimeInterval? = nil, dns: TimeInterval? = nil, ssl: TimeInterval? = nil
    ) {
        self.start = start
        self.connected = connected
        self.requestSent = requestSent
        self.firstByte = firstByte
        self.end = end
        self.blocked = blocked
        self.dns = dns
        self.ssl = ssl
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

/// A place where an exchange disagrees with the API description.
public struct ContractViolation: Sendable, Hashable, Codable {
    /// Where in the exchange, e.g. `response.body/items/0/id` or `request.header.Authorization`.
    public var location: String
    public var message: String

    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }
}

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
