import Foundation
import Hummingbird
import KagamiContractCheck
import KagamiFlow
import KagamiJSON
import KagamiStore

/// `GET /api/contract` (the descriptions in force, their coverage, reload problems) and
/// `GET /api/flows/{id}/violations` (one exchange's violations, with the exchange's method and URL).
struct ContractAPI: Sendable {
    /// The descriptions in force; nil when the proxy checks none (or none runs).
    let contracts: LiveContracts?
    let store: any FlowStore

    func register(on router: Router<some RequestContext>) {
        router.get("/api/contract") { _, _ in
            guard let contracts = self.contracts else {
                return jsonResponse(["checked": .integer(0), "skipped": .integer(0), "descriptions": .array([])])
            }
            return jsonResponse(contracts.json)
        }
        router.get("/api/flows/:id/violations") { _, context in
            let flow = try await self.store.flow(named: context.parameters.get("id"))
            return jsonResponse([
                "flowId": .string(flow.id.uuidString),
                "violations": .array(flow.violations.map { $0.json(flowId: flow.id, method: flow.request.method, url: flow.request.url) }),
            ])
        }
    }
}
