// The admin API of a running `kagami mock`: its scenarios, switched live by `kagami scenario`,
// and the requests their loading states hold.
import Foundation
import Hummingbird
import KagamiControl
import KagamiScenarios
import Synchronization

/// `/api/scenarios` of a mock (`ScenarioAPI`, as the proxy's web UI serves it) and
/// `/api/breakpoints/held` (the requests a loading state holds, released as a proxy's held
/// exchanges are) on a port of its own, never the one the app talks to: loopback only, behind
/// the same checks as every admin endpoint (`UIAccessMiddleware`: the installation's token,
/// loopback Host names, no change asked for by another site, wrong tokens counted per address).
public final class MockAdminServer: Sendable {
    public let scenarios: ActiveScenario
    public let holds: Breakpoints
    /// What every client must present (`kagami mock` gives the installation's).
    public let token: String
    private let port: Int
    private let wrongTokenWindow: Duration
    private let running = Mutex<Task<Void, any Error>?>(nil)
    private let stopping = StoppingFlag()

    /// Listens on 127.0.0.1 `port` (0 picks a free one) once started.
    public init(scenarios: ActiveScenario, holds: Breakpoints, token: String, port: Int, wrongTokenWindow: Duration = .seconds(60)) {
        self.scenarios = scenarios
        self.holds = holds
        self.token = token
        self.port = port
        self.wrongTokenWindow = wrongTokenWindow
    }

    /// Starts listening and returns the port.
    public func start() async throws -> Int {
        let router = Router(context: UIRequestContext.self)
        router.add(middleware: UIAccessMiddleware(token: token, loopbackOnly: true, guesses: TokenGuesses(window: wrongTokenWindow)))
        router.add(middleware: HummingbirdErrors())
        ScenarioAPI(scenarios: scenarios).register(on: router)
        BreakpointAPI(breakpoints: holds).registerHeld(on: router)
        let (listening, task) = try await runApplication(
            responder: router.buildResponder(), host: "127.0.0.1", port: port, stopping: stopping, what: "the mock's admin API")
        running.withLock { $0 = task }
        return listening
    }

    public func stop() async {
        guard let task = running.withLock({ $0 }) else { return }
        stopping.set()
        task.cancel()
        _ = try? await task.value
    }
}
