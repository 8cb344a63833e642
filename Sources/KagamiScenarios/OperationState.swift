// The states an operation can be put in, as an app's screen has to handle them.
import Foundation
import KagamiFlow
import KagamiRules
import KagamiURITemplate

/// How an offline operation fails, as the app's HTTP stack sees it.
public enum OfflineKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The connection is reset (TCP RST) before any answer: `ECONNRESET`.
    case reset
    /// The answer's head and the first half of its body arrive, then the connection is reset.
    case resetMidBody = "reset-mid-body"
    /// The connection is closed without an answer: "empty reply", "connection lost".
    case closed
    /// No answer ever comes and the connection stays open, silent, until the client's own
    /// timeout ends it ("timed out"); the server is never asked.
    case timeout
}

/// What an operation does while its state is in force.
public enum OperationState: Sendable, Hashable {
    /// The real answer (the server's, the recording's or the description's), untouched.
    case asIs
    /// The real answer with its collections emptied: every JSON array `[]`; a body that is not
    /// JSON becomes an empty `204`.
    case empty
    /// The answer is held this long before the request goes on; nil holds it for good (the
    /// client waits until it gives up or the scenario is switched).
    case loading(Duration?)
    /// Answered at once with this status and body (a problem+json body naming the scenario
    /// when none is given); no server is asked.
    case error(status: Int, body: String?, contentType: String?)
    /// The connection fails instead of answering.
    case offline(OfflineKind)
    /// The real answer over a slow network: the profile's latency once, then its bandwidth
    /// (a throttling preset such as `3G`, or a profile of its own).
    case slow(ThrottleProfile)
    /// Answered from a recording (a session file or a HAR): its calls in recorded order, then
    /// the last again; a request the recording doesn't have goes on as-is.
    case recorded(RecordedReplay)

    /// The word a scenario file and the admin API use.
    public var name: String {
        switch self {
        case .asIs: "as-is"
        case .empty: "empty"
        case .loading: "loading"
        case .error: "error"
        case .offline: "offline"
        case .slow: "slow"
        case .recorded: "recorded"
        }
    }

    /// The state in words, for the exchange's mark and the UI: `error 503`, `loading 2.5 s`.
    public var summary: String {
        switch self {
        case .asIs, .empty: name
        case .loading(let hold?): "loading \(Self.seconds(hold)) s"
        case .loading(nil): "loading (until released)"
        case .error(let status, _, _): "error \(status)"
        case .offline(let kind): "offline (\(kind.rawValue))"
        case .slow(let profile): "slow (\(Self.describe(profile)))"
        case .recorded(let replay): "recorded (\(replay))"
        }
    }

    /// A preset by its name; a profile of the file's own by its figures: `64 kbps down, 300 ms`.
    static func describe(_ profile: ThrottleProfile) -> String {
        if ThrottleProfile.builtInPresets.contains(profile) { return profile.name }
        var parts: [String] = []
        parts.append(profile.downloadKbps > 0 ? "\(Self.number(profile.downloadKbps)) kbps down" : "unlimited down")
        if profile.uploadKbps > 0 { parts.append("\(Self.number(profile.uploadKbps)) kbps up") }
        if profile.latencyMs > 0 { parts.append("\(profile.latencyMs) ms") }
        return parts.joined(separator: ", ")
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        let milliseconds = whole * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? String(milliseconds / 1000) : String(Double(milliseconds) / 1000)
    }
}

/// Which requests a state applies to: an operation (`GET /users/{id}`: a method and an RFC 6570
/// path template, optionally on one host), or a location as the rules write it.
public struct OperationSelector: Sendable, Hashable {
    /// Upper case; nil for any method (a location without one).
    public let method: String?
    /// The operation's path template as written (`/users/{id}`); nil when a location selects.
    public let pathTemplate: String?
    /// A host the operation must be on (wildcards as in locations); nil for any.
    public let host: String?
    public let location: Location?
    private let template: URITemplate?
    private let hostPattern: WildcardPattern?
    private let matcher: LocationMatcher?

    /// `GET /users/{id}`; the errors say what is wrong with the text.
    public init(operation: String, host: String? = nil) throws(OperationSelectorError) {
        let parts = operation.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].allSatisfy({ $0.isLetter }) else {
            throw .malformedOperation(operation)
        }
        guard parts[1].hasPrefix("/") else { throw .malformedOperation(operation) }
        do {
            template = try URITemplate(String(parts[1]))
        } catch {
            throw .malformedTemplate(String(parts[1]), "\(error)")
        }
        method = parts[0].uppercased()
        pathTemplate = String(parts[1])
        self.host = host
        hostPattern = host.map { WildcardPattern($0, caseInsensitive: true) }
        location = nil
        matcher = nil
    }

    /// The requests a location matches, with any method or only `method`.
    public init(location: Location, method: String? = nil) {
        self.method = method?.uppercased()
        self.location = location
        matcher = LocationMatcher(location)
        pathTemplate = nil
        host = nil
        template = nil
        hostPattern = nil
    }

    public func matches(_ request: FlowRequest) -> Bool {
        if let method, method != request.method.uppercased() { return false }
        if let matcher {
            var originForm = request
            originForm.target = RecordedTraffic.originForm(request.target)
            return matcher.matches(originForm)
        }
        if let hostPattern, !hostPattern.matches(request.host) { return false }
        guard let template else { return false }
        let target = URITemplate.Target(RecordedTraffic.originForm(request.target))
        // The operation is its path: any query goes with it.
        return template.pathTemplate.match(path: target.path, query: nil) != nil
    }

    /// `GET /users/{id}`, `GET /users/{id} on api.example.com`, `api.example.com/search*`.
    public var displayString: String {
        if let location {
            return (method.map { $0 + " " } ?? "") + location.displayString
        }
        let operation = "\(method ?? "*") \(pathTemplate ?? "")"
        return host.map { "\(operation) on \($0)" } ?? operation
    }

    public static func == (lhs: OperationSelector, rhs: OperationSelector) -> Bool {
        lhs.method == rhs.method && lhs.pathTemplate == rhs.pathTemplate && lhs.host == rhs.host && lhs.location == rhs.location
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(pathTemplate)
        hasher.combine(host)
        hasher.combine(location)
    }
}

public enum OperationSelectorError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformedOperation(String)
    case malformedTemplate(String, String)

    public var description: String {
        switch self {
        case .malformedOperation(let text):
            "\"\(text)\" is not an operation: write a method and a path template, e.g. \"GET /users/{id}\""
        case .malformedTemplate(let template, let reason):
            "\"\(template)\" is not a path template: \(reason)"
        }
    }
}

/// One operation in one state.
public struct OperationStateRule: Sendable, Hashable {
    public var selector: OperationSelector
    public var state: OperationState

    public init(selector: OperationSelector, state: OperationState) {
        self.selector = selector
        self.state = state
    }
}

/// A named set of states (`empty-feed`, `checkout-fails`); the first rule that matches a
/// request decides its state, and a request none matches is as-is.
public struct Scenario: Sendable, Hashable {
    public var name: String
    public var rules: [OperationStateRule]

    public init(name: String, rules: [OperationStateRule]) {
        self.name = name
        self.rules = rules
    }

    public func state(for request: FlowRequest) -> OperationStateRule? {
        rules.first { $0.selector.matches(request) }
    }
}
