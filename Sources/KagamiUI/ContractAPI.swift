import Foundation
import Hummingbird
import KagamiContractCheck
import KagamiFlow
import KagamiJSON

/// `GET /api/contract` (the descriptions in force, their coverage, reload problems) and
/// `GET /api/flows/{id}/violations` (one exchange's violations, with the exchange's method and URL).
struct ContractAPI: Sendable {
    let server: UIServer

    func register(on router: Router<some RequestContext>) {
        router.get("/api/contract") { _, _ in
            guard let contracts = self.server.contracts else {
                return jsonResponse(["checked": .integer(0), "skipped": .integer(0), "descriptions": .array([])])
            }
            return jsonResponse(contracts.json)
        }
        router.get("/api/flows/:id/violations") { _, context in
            let id = context.parameters.get("id")
            guard let flow = try await FlowAPI(server: self.server).flow(id) else { return FlowAPI(server: self.server).missing(id) }
            return jsonResponse([
                "flowId": .string(flow.id.uuidString),
                "violations": .array(flow.violations.map { $0.json(flowId: flow.id, method: flow.request.method, url: flow.request.url) }),
            ])
        }
    }
}
