// The recorded state: an operation answered from a recording kept beside the scenario file.
import Foundation
import KagamiFlow
import Synchronization

/// Reads the exchanges of a recording (a session file or an HTTP Archive) at a path.
public typealias RecordingReader = @Sendable (_ path: String) async throws -> [Flow]

/// The recording a `recorded` state answers from: read when the scenario file is loaded, its
/// calls answered in recorded order and then the last again, as `kagami mock --session` does.
public final class RecordedReplay: Sendable, Hashable, CustomStringConvertible {
    /// The recording's path as the scenario file writes it (relative to the file's folder).
    public let source: String
    /// Where the file names it (`scenarios[0].states[1].recording`), for errors.
    public let field: String
    private let traffic = Mutex<RecordedTraffic?>(nil)

    init(source: String, field: String) {
        self.source = source
        self.field = field
    }

    /// Takes the recording's exchanges; throws when none of them can answer.
    public func load(_ flows: [Flow]) throws(RecordedTrafficError) {
        let recorded = try RecordedTraffic(flows: flows, source: source)
        traffic.withLock { $0 = recorded }
    }

    /// Whether the recording has `request`'s call; a request it hasn't goes on as-is.
    public func answers(_ request: FlowRequest) -> Bool {
        traffic.withLock { traffic in
            traffic?.answers(
                method: request.method, target: request.target, headers: request.headers, body: Array(request.body.data), host: request.host) ?? false
        }
    }

    /// The next recorded answer to `request`, with `X-Kagami-Recorded` naming the exchange it
    /// replays; nil when the recording has no such call (the real answer goes on).
    public func reply(to request: FlowRequest) -> FlowResponse? {
        let reply = traffic.withLock { traffic in
            traffic?.reply(
                method: request.method, target: request.target, headers: request.headers, body: Array(request.body.data), host: request.host)
        }
        guard case .recorded(let answer)? = reply else { return nil }
        var headers = HeaderFields(answer.headers)
        headers.set(RecordedTraffic.recordedHeaderName, answer.flowID.uuidString)
        headers.set("Content-Length", String(answer.body.count))
        return FlowResponse(status: answer.status, headers: headers, body: FlowBody(data: Data(answer.body)))
    }

    public var description: String { (source as NSString).lastPathComponent }

    public static func == (lhs: RecordedReplay, rhs: RecordedReplay) -> Bool {
        lhs.source == rhs.source && lhs.field == rhs.field
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(source)
        hasher.combine(field)
    }
}
