// The one recording chain of a running proxy or mock, built in one place for `kagami proxy`,
// `kagami mock`, `kagami repeat`, `kagami serve`, the web UI's imports and KagamiKit.
import KagamiContractCheck
import KagamiFlow
import KagamiStore

/// Where what a running proxy or mock records goes, in order: the store (which keeps each
/// flow and arms its `stored`), the live views, the contract check; or, when the check comes
/// first, the check, then the store and the rest, each flow with its violations.
public struct Recording: Sendable {
    /// Whether the stages after the contract check wait for it.
    public enum ContractTiming: Sendable {
        /// The check runs beside the traffic: what it finds is added to the stored flow and
        /// announced to the live views (`kagami proxy --contract`).
        case alongside
        /// Every flow is checked before it is kept and shown (an in-process server whose flows
        /// a test reads with their violations).
        case first
    }

    /// What the engine is given.
    public let chain: RecordingChain
    public let store: (any FlowStore)?
    public let hub: FlowHub?
    public let contractCheck: ContractCheckStage?

    /// - Parameters:
    ///   - store: keeps flows and messages (a session file or a shared store).
    ///   - hub: the live views (the web UI's event streams).
    ///   - contracts: the descriptions every flow is checked against.
    ///   - then: stages after these (an in-process server's memory).
    public init(
        store: (any FlowStore)?, hub: FlowHub? = nil, contracts: LiveContracts? = nil,
        contractTiming: ContractTiming = .alongside, then: [any RecordingStage] = []
    ) {
        let keeping = store.map { KeepingStage(in: $0) }
        let stages: [any RecordingStage]
        let check: ContractCheckStage?
        switch contractTiming {
        case .alongside:
            check = contracts.map { contracts in
                ContractCheckStage(contracts: contracts, timing: .alongside { flow in
                    store?.updateViolations(flow.violations, ofFlow: flow.id)
                    hub?.announce(flow)
                })
            }
            stages = [keeping as (any RecordingStage)?, hub, check].compactMap { $0 }
        case .first:
            check = contracts.map { ContractCheckStage(contracts: $0, timing: .before) }
            stages = [check as (any RecordingStage)?, keeping, hub].compactMap { $0 }
        }
        self.chain = RecordingChain(stages + then)
        self.store = store
        self.hub = hub
        self.contractCheck = check
    }

    /// Returns once every record handed over before the call has been checked and is durable.
    public func flush() async throws {
        await contractCheck?.drain()
        try await store?.flush()
    }
}
