import Foundation
import KagamiFlow
import KagamiRules
import Synchronization

/// The breakpoints in force and the exchanges they hold. An exchange that hits a breakpoint
/// waits on its own connection (nothing blocks: its handler simply doesn't go on) until
/// `resolve` is called, its auto-continue time passes, or its client goes away. A scenario's
/// `loading` state holds its exchanges here too (`HeldExchange.reason` says so), so one list
/// shows and releases everything that waits.
public final class Breakpoints: Sendable {
    private let state: Mutex<State>

    private struct State {
        var settings: BreakpointSettings
        var held: [UUID: Entry] = [:]
        var order: [UUID] = []
        var listeners: [UInt64: AsyncStream<BreakpointEvent>.Continuation] = [:]
        var nextListener: UInt64 = 0
    }

    private struct Entry {
        var exchange: HeldExchange
        /// Hands the decision to the exchange's event loop.
        var resume: @Sendable (BreakpointResolution) -> Void
    }

    public init(_ settings: BreakpointSettings = BreakpointSettings()) {
        state = Mutex(State(settings: settings))
    }

    public var settings: BreakpointSettings {
        state.withLock { $0.settings }
    }

    /// Takes effect with the next exchange; exchanges already held stay held.
    public func replace(with settings: BreakpointSettings) {
        state.withLock { $0.settings = settings }
    }

    /// The exchanges waiting for a decision, oldest first.
    public var held: [HeldExchange] {
        state.withLock { state in state.order.compactMap { state.held[$0]?.exchange } }
    }

    public func held(id: UUID) -> HeldExchange? {
        state.withLock { $0.held[id]?.exchange }
    }

    /// Lets a held exchange go on (`execute`, `cancel`) or fails it (`abort`).
    public func resolve(_ id: UUID, with resolution: BreakpointResolution) throws(BreakpointError) {
        let taken = state.withLock { state -> Result<Entry, BreakpointError> in
            guard let entry = state.held[id] else { return .failure(.notHeld(id)) }
            switch (entry.exchange.phase, resolution) {
            case (.request, .executeResponse), (.request, .executeMessage): return .failure(.wrongPhase(id, expected: .request))
            case (.response, .executeRequest), (.response, .executeMessage): return .failure(.wrongPhase(id, expected: .response))
            case (.message, .executeRequest), (.message, .executeResponse): return .failure(.wrongPhase(id, expected: .message))
            default: break
            }
            state.held[id] = nil
            state.order.removeAll { $0 == id }
            return .success(entry)
        }
        let entry = try taken.get()
        publish(.released(id: id, flowID: entry.exchange.flowID, how: resolution.name))
        entry.resume(resolution)
    }

    /// Live `held` and `released` events, for the web UI's event stream.
    public func events(bufferLimit: Int = 256) -> AsyncStream<BreakpointEvent> {
        let (stream, continuation) = AsyncStream<BreakpointEvent>.makeStream(bufferingPolicy: .bufferingNewest(max(1, bufferLimit)))
        let id = state.withLock { state -> UInt64 in
            state.nextListener += 1
            state.listeners[state.nextListener] = continuation
            return state.nextListener
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Engine side

    package func stops(for request: FlowRequest) -> BreakpointStops? {
        state.withLock { $0.settings.stops(for: request) }
    }

    /// The message breakpoints over a WebSocket whose handshake was `request`, as they stand now.
    package func messageStops(for request: FlowRequest) -> MessageBreakpoints? {
        state.withLock { $0.settings.messageStops(for: request) }
    }

    package var autoContinueSeconds: Double? {
        state.withLock { $0.settings.autoContinueSeconds }
    }

    package func hold(_ exchange: HeldExchange, resume: @escaping @Sendable (BreakpointResolution) -> Void) {
        state.withLock { state in
            state.held[exchange.id] = Entry(exchange: exchange, resume: resume)
            state.order.append(exchange.id)
        }
        publish(.held(exchange))
    }

    /// The auto-continue time passed: the exchange goes on unchanged.
    package func autoContinue(_ id: UUID) {
        let entry = state.withLock { state -> Entry? in
            guard let entry = state.held.removeValue(forKey: id) else { return nil }
            state.order.removeAll { $0 == id }
            return entry
        }
        guard let entry else { return }
        publish(.released(id: id, flowID: entry.exchange.flowID, how: "auto-continue"))
        entry.resume(.cancel)
    }

    /// Forgets a held exchange without resuming it: its client went away.
    package func release(_ id: UUID) {
        let flowID = state.withLock { state -> UUID? in
            guard let entry = state.held.removeValue(forKey: id) else { return nil }
            state.order.removeAll { $0 == id }
            return entry.exchange.flowID
        }
        if let flowID { publish(.released(id: id, flowID: flowID, how: "client disconnected")) }
    }

    private func publish(_ event: BreakpointEvent) {
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners { listener.yield(event) }
    }
}

/// An exchange paused at a breakpoint, as it would go on: the request as it would be sent, the
/// response as the client would get it (after the rules, in both cases), or one WebSocket
/// message of it as the peer would get it.
public struct HeldExchange: Sendable, Hashable, Identifiable {
    public enum Phase: String, Sendable, Hashable {
        case request, response, message
    }

    public var id: UUID
    /// The id the exchange is stored under when it ends.
    public var flowID: UUID
    public var phase: Phase
    public var heldAt: Date
    public var request: FlowRequest
    /// Set in the response phase (and the message phase: the 101).
    public var response: FlowResponse?
    /// Set in the message phase: the message, whole.
    public var message: WebSocketMessage?
    /// The breakpoint locations that matched.
    public var locations: [Location]
    /// Why it is held when no breakpoint holds it: a scenario's loading state
    /// ("scenario empty-feed: loading"). Released by `cancel`, as a breakpoint's hold is.
    public var reason: String?

    package init(
        id: UUID, flowID: UUID, phase: Phase, heldAt: Date, request: FlowRequest, response: FlowResponse? = nil,
        message: WebSocketMessage? = nil, locations: [Location], reason: String? = nil
    ) {
        self.id = id
        self.flowID = flowID
        self.phase = phase
        self.heldAt = heldAt
        self.request = request
        self.response = response
        self.message = message
        self.locations = locations
        self.reason = reason
    }
}

/// What to do with a held exchange.
public enum BreakpointResolution: Sendable, Hashable {
    /// Send this request instead (request phase); Content-Length follows the body.
    case executeRequest(FlowRequest)
    /// Give the client this response instead (response phase); Content-Length follows the body.
    case executeResponse(FlowResponse)
    /// Send this message instead (message phase).
    case executeMessage(WebSocketMessage)
    /// Fail the exchange: the client gets an error and the exchange is stored as aborted. A
    /// held message is dropped; its connection goes on.
    case abort
    /// Go on unchanged.
    case cancel

    /// How the admin API and the `released` event name it: execute, abort, cancel.
    public var name: String { names.action }

    /// How the exchange's list of what acted on it says it.
    package var outcome: String { names.outcome }

    private var names: (action: String, outcome: String) {
        switch self {
        case .executeRequest, .executeResponse, .executeMessage: ("execute", "executed with edits")
        case .abort: ("abort", "aborted")
        case .cancel: ("cancel", "continued unchanged")
        }
    }
}

public enum BreakpointEvent: Sendable, Hashable {
    case held(HeldExchange)
    /// `how`: execute, abort, cancel, auto-continue or client disconnected.
    case released(id: UUID, flowID: UUID, how: String)
}

public enum BreakpointError: Error, Sendable, Hashable, CustomStringConvertible {
    case notHeld(UUID)
    case wrongPhase(UUID, expected: HeldExchange.Phase)

    public var description: String {
        switch self {
        case .notHeld(let id):
            "no exchange is held with id \(id.uuidString) (it may have been resolved, timed out, or its client left)"
        case .wrongPhase(let id, let expected):
            "held exchange \(id.uuidString) is paused at its \(expected.rawValue): execute it with a \(expected.rawValue)"
        }
    }
}
