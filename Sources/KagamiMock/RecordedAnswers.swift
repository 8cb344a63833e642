// A recording served by the mock: its answers first, the description (if any) for the rest.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiScenarios
import NIOConcurrencyHelpers

/// The recorded traffic a running mock answers from; its cursors move on with every answer, so
/// it sits behind a lock shared by the server's connections.
final class RecordedAnswers: Sendable {
    private let traffic: NIOLockedValueBox<RecordedTraffic>

    init(_ traffic: RecordedTraffic) {
        self.traffic = NIOLockedValueBox(traffic)
    }

    func reply(to request: MockRequest) -> RecordedTraffic.Reply {
        traffic.withLockedValue {
            $0.reply(method: request.method, target: request.target, headers: HeaderFields(request.headers), body: request.body, host: request.flowRequest.host)
        }
    }

    /// The recorded answer as the mock sends it, marked with the exchange it came from.
    static func response(_ answer: RecordedTraffic.Answer) -> MockResponse {
        MockResponse(
            status: answer.status,
            headers: answer.headers.map { ($0.name, $0.value) } + [(recordedHeaderName, answer.flowID.uuidString)],
            body: answer.body)
    }

    /// Names the recorded exchange an answer replays, for the app's logs and the session.
    static let recordedHeaderName = RecordedTraffic.recordedHeaderName

    /// No recorded call and no description to ask: a 404 naming the closest recorded requests.
    static func unmatched(_ request: MockRequest, closest: [String]) -> MockResponse {
        let path = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? request.target
        return .problem(
            status: 404, type: "urn:kagami:mock:not-recorded", title: "Not Found",
            detail: "No recorded exchange matches \(request.method) \(path).",
            extra: ["closestRecorded": .array(closest.map(JSONValue.string))])
    }
}
