// Recorded exchanges answered back: a session or HTTP Archive serving as the mock of its API.
import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON
import KagamiURITemplate

/// What makes two requests "the same call" when a recording answers: always the method, the
/// path and the query (its pairs in any order); the named headers' values and the body when
/// asked (a JSON body compared structurally: key order and spacing don't count).
public struct RecordedMatching: Sendable, Hashable {
    /// Header names whose values must match too (case-insensitive names).
    public var headers: [String]
    public var body: Bool

    public init(headers: [String] = [], body: Bool = false) {
        self.headers = headers
        self.body = body
    }
}

public enum RecordedTrafficError: Error, CustomStringConvertible, Equatable {
    /// The recording holds no exchange with a response to answer with.
    case noExchanges(source: String)

    public var description: String {
        switch self {
        case .noExchanges(let source):
            "\(source) holds no recorded exchange with a response to answer from"
        }
    }
}

/// Recorded exchanges grouped by call, each group answered in recorded order and then its last
/// answer again. A value: the server that answers from it keeps it behind a lock.
public struct RecordedTraffic: Sendable {
    /// One recorded request's answer.
    public struct Answer: Sendable, Equatable {
        /// The recorded exchange answered with.
        public var flowID: UUID
        public var status: Int
        /// The recorded headers less those that described the recorded connection and framing
        /// (the answering server frames the body itself).
        public var headers: [HeaderFields.Field]
        public var body: [UInt8]
    }

    /// What a request gets.
    public enum Reply: Sendable, Equatable {
        case recorded(Answer)
        /// No recorded call matches; the closest recorded requests (`GET /path?query`), best first.
        case unmatched(closest: [String])
    }

    private struct Call: Sendable {
        var request: String
        var answers: [Answer]
        var next = 0
    }

    public let matching: RecordedMatching
    private var calls: [CallKey: Call] = [:]
    /// The recorded hosts (lower case), in the order they first appear.
    private var hosts: [String] = []
    /// Distinct recorded requests in recorded order, for the closest-match list.
    private var requests: [(key: CallKey, line: String)] = []

    /// The exchanges of `flows` that ended with a response, in the order given (a session's
    /// capture order); one that failed (a refused server, Kagami's own 502) answered nothing the
    /// app should see again. `source` names the recording in the error when there is none.
    public init(flows: [Flow], matching: RecordedMatching = RecordedMatching(), source: String) throws(RecordedTrafficError) {
        self.matching = matching
        for flow in flows where !flow.isWebSocket {
            guard let response = flow.response, flow.error == nil else { continue }
            let host = flow.request.host.lowercased()
            let key = CallKey(
                host: host, method: flow.request.method, target: flow.request.target, headers: flow.request.headers, body: Array(flow.request.body.data),
                matching: matching)
            let answer = Self.answer(flow.id, response)
            if !hosts.contains(host) { hosts.append(host) }
            if calls[key] == nil {
                let line = "\(flow.request.method.uppercased()) \(Self.originForm(flow.request.target))"
                calls[key] = Call(request: line, answers: [])
                requests.append((key, line))
            }
            calls[key]?.answers.append(answer)
        }
        if calls.isEmpty { throw .noExchanges(source: source) }
    }

    /// The number of recorded exchanges that can answer.
    public var exchangeCount: Int { calls.values.reduce(0) { $0 + $1.answers.count } }

    /// The answer to a request: the next recorded answer of its call, the last one once all
    /// were given. A request whose `host` (its Host's name) is a recorded host is answered from
    /// that host's exchanges only; any other (the mock's own address) from the first recorded
    /// host that has the call.
    public mutating func reply(method: String, target: String, headers: HeaderFields, body: [UInt8], host: String? = nil) -> Reply {
        guard let key = recordedCall(method: method, target: target, headers: headers, body: body, host: host), var call = calls[key] else {
            let key = CallKey(
                host: Self.candidates(host, in: hosts).first ?? "", method: method, target: target, headers: headers, body: body, matching: matching)
            return .unmatched(closest: closest(to: key, limit: 3))
        }
        let answer = call.answers[min(call.next, call.answers.count - 1)]
        call.next += 1
        calls[key] = call
        return .recorded(answer)
    }

    /// Whether the recording has the call (`reply` would answer it), without answering it.
    public func answers(method: String, target: String, headers: HeaderFields, body: [UInt8], host: String? = nil) -> Bool {
        recordedCall(method: method, target: target, headers: headers, body: body, host: host) != nil
    }

    private func recordedCall(method: String, target: String, headers: HeaderFields, body: [UInt8], host: String?) -> CallKey? {
        for candidate in Self.candidates(host, in: hosts) {
            let key = CallKey(host: candidate, method: method, target: target, headers: headers, body: body, matching: matching)
            if calls[key] != nil { return key }
        }
        return nil
    }

    /// The asked host when it was recorded, else every recorded host in order.
    private static func candidates(_ host: String?, in hosts: [String]) -> [String] {
        host.map { $0.lowercased() }.map { hosts.contains($0) ? [$0] : hosts } ?? hosts
    }

    /// Names the recorded exchange an answer replays, for the app's logs and the session.
    public static let recordedHeaderName = "X-Kagami-Recorded"

    /// Recorded requests ranked by how much of the request they share: method, then the path's
    /// leading segments, then query pairs.
    private func closest(to key: CallKey, limit: Int) -> [String] {
        let scored = requests.enumerated().map { index, entry in
            (score: entry.key.likeness(to: key), index: index, line: entry.line)
        }
        // The same call recorded on two hosts is one line.
        var seen: Set<String> = []
        return scored
            .filter { $0.score > 0 }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
            .filter { seen.insert($0.line).inserted }
            .prefix(limit)
            .map(\.line)
    }

    private static func answer(_ id: UUID, _ response: FlowResponse) -> Answer {
        var headers = response.headers.fields.filter { !framingFields.contains($0.name.lowercased()) }
        let body = response.body.data
        // A browser's or mitmproxy's archive holds the body decoded under the server's
        // Content-Encoding; sent as it is, the header would make the client decode it again.
        let encoding = response.headers["Content-Encoding"]
        if ContentCoding.isEncoded(encoding), (try? ContentCoding.decode(body, contentEncoding: encoding)) == nil {
            headers.removeAll { $0.name.caseInsensitiveCompare("Content-Encoding") == .orderedSame }
        }
        return Answer(flowID: id, status: response.status, headers: headers, body: Array(body))
    }

    /// A proxy records absolute-form targets (`http://host/path`); a mock is asked in origin form.
    static func originForm(_ target: String) -> String {
        guard !target.hasPrefix("/"), let url = try? AbsoluteURL(parsing: target) else { return target }
        return url.target
    }

    /// Fields about the recorded connection and framing, not about the answer.
    static let framingFields: Set<String> = [
        "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "trailer", "upgrade",
    ]
}

/// A request reduced to what `RecordedMatching` compares.
struct CallKey: Hashable, Sendable {
    /// Lower case; a recorded exchange's host, or the recorded host a request is looked up on.
    var host: String
    var method: String
    var segments: [String]
    /// Query pairs sorted, so their order doesn't count.
    var query: [String]
    var headers: [String]
    var body: String?

    init(host: String, method: String, target: String, headers: HeaderFields, body: [UInt8], matching: RecordedMatching) {
        self.host = host
        self.method = method.uppercased()
        let parsed = URITemplate.Target(RecordedTraffic.originForm(target))
        segments = parsed.path.split(separator: "/", omittingEmptySubsequences: false).map { Self.decoded(String($0)) }
        query = parsed.queryParameters.map { parameter in parameter.value.map { "\(parameter.name)=\($0)" } ?? parameter.name }.sorted()
        self.headers = matching.headers.map { name in headers.values(for: name).joined(separator: ", ") }
        self.body = matching.body ? Self.canonicalBody(body) : nil
    }

    /// JSON in one spelling (sorted keys, no spacing); any other body as its bytes.
    static func canonicalBody(_ body: [UInt8]) -> String {
        if let value = try? JSONValue(parsing: body) {
            return value.serialized(.sortedKeys)
        }
        return String(decoding: body, as: UTF8.self)
    }

    private static func decoded(_ segment: String) -> String {
        segment.removingPercentEncoding ?? segment
    }

    /// Grows with the leading path segments shared (the empty one before the first `/` doesn't
    /// count), the same number of segments, the same method and query pairs shared; 0 for
    /// requests with nothing in common.
    func likeness(to other: CallKey) -> Int {
        let shared = zip(segments, other.segments).prefix { $0 == $1 }.count - 1
        let pairs = Set(query).intersection(other.query).count
        let sameLength = segments.count == other.segments.count ? 2 : 0
        let sameMethod = method == other.method ? 3 : 0
        return max(shared, 0) * 8 + sameLength + sameMethod + pairs
    }
}
