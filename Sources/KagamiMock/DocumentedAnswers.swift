// What a proxy's contract check descriptions document, answered as the mock answers it.
import Foundation
import KagamiContractCheck
import KagamiFlow

/// The responses the descriptions of a contract check document, rendered as `kagami mock`
/// renders them: a scenario's `error` state in the proxy answers the documented error of the
/// request's operation, as the mock's does.
public struct DocumentedAnswers: Sendable {
    private let checks: [ContractCheck]

    public init(_ set: ContractSet) {
        checks = set.checks
    }

    /// The response documented for `status` on the request's operation (exact, a status class
    /// or `default`, answered with `status`), from the first description whose base URL holds
    /// the request; nil when none documents it.
    public func response(status: Int, to request: FlowRequest) -> FlowResponse? {
        let flow = Flow(mode: .forward, request: request, timings: FlowTimings(start: Date()))
        for check in checks {
            guard let target = check.relativeTarget(of: flow) else { continue }
            var asked = MockRequest(request)
            asked.target = target
            return MockResponder(routes: check.routes, validates: false).documented(status: status, for: asked)?.flowResponse
        }
        return nil
    }
}
