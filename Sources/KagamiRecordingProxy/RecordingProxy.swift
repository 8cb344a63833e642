// A proxy with its recording chain, built in one place from `ProxyOptions` for `kagami proxy`
// and KagamiKit alike.
import KagamiContractCheck
import KagamiFlow
import KagamiMock
import KagamiControl
import KagamiProxy
import KagamiRecording
import KagamiScenarios
import KagamiStore

/// `ProxyOptions` read whole before anything is opened or bound: the text options (reverse
/// target, allow list, client networks) and the descriptions of the contract check. A setup
/// that throws leaves nothing behind (no session file, no port).
public struct ProxySetup: Sendable {
    public let options: ProxyOptions
    /// The options' text, read.
    public let resolved: ProxyOptions.Resolved
    /// The descriptions every exchange is checked against; nil without `options.contracts`.
    public let contracts: LiveContracts?

    public init(_ options: ProxyOptions) throws(ProxySetupError) {
        do {
            resolved = try options.resolved()
        } catch {
            throw .option(error)
        }
        do {
            contracts = options.contracts.isEmpty ? nil : try LiveContracts(arguments: options.contracts, assertsFormat: options.assertsFormat)
        } catch {
            throw .contracts(error)
        }
        self.options = options
    }

    /// The recording chain (store, live views, the contract check, then `then`) and the proxy
    /// handing it every record; not yet listening (`RecordingProxy.start()`).
    public func build(
        store: (any FlowStore)?, hub: FlowHub? = nil, contractTiming: Recording.ContractTiming = .alongside,
        then: [any RecordingStage] = [], rules: ActiveRules = ActiveRules(), breakpoints: Breakpoints = Breakpoints(),
        scenarios: ActiveScenario = ActiveScenario()
    ) throws -> RecordingProxy {
        let recording = Recording(store: store, hub: hub, contracts: contracts, contractTiming: contractTiming, then: then)
        if let contracts {
            // Error and empty states answer as the descriptions document, as the mock does (read
            // from the descriptions in force when it answers: they reload as they change).
            scenarios.answersDocumented(by: DocumentedAnswers(contracts))
        }
        let server = try ProxyServer(options: options, sink: recording.chain, rules: rules, breakpoints: breakpoints, scenarios: scenarios)
        return RecordingProxy(server: server, recording: recording, contracts: contracts)
    }
}

/// A proxy and the recording chain it hands every exchange, WebSocket message and tunnel.
public struct RecordingProxy: Sendable {
    public let server: ProxyServer
    public let recording: Recording
    public let contracts: LiveContracts?

    /// Binds and starts accepting clients; returns the port (`ListenError` when it can't).
    public func start() async throws -> Int {
        let address = try await server.start()
        return address.port ?? server.options.port
    }

    /// Stops accepting clients, stops the contract check's watch, and returns once every
    /// record handed over is checked and durable.
    public func stop() async throws {
        try await server.stop()
        contracts?.stopWatching()
        try await recording.flush()
    }
}

/// Why a proxy could not be set up from its options.
public enum ProxySetupError: Error, Sendable, CustomStringConvertible {
    /// An option's text can't be read.
    case option(ProxyOptionsError)
    /// A description can't be read (file, line and what is wrong).
    case contracts(ContractCheckError)

    public var description: String {
        switch self {
        case .option(let error): error.description
        case .contracts(let error): error.description
        }
    }
}
