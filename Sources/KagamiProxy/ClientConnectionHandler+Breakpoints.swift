import KagamiControl
import Foundation
import KagamiFlow
import KagamiRules
import NIOCore
import NIOHTTP1

/// Where an exchange stands with the breakpoints.
struct ExchangeBreakpoint {
    var stops: BreakpointStops?
    /// Set while the exchange is held.
    var heldID: UUID?
    /// The breakpoint hook's place in the hook list: the hooks after it go on once decided.
    var hookPosition = 0
    var heldSince: Date?
    var phase: HeldExchange.Phase = .request
    /// Request body bytes read while waiting for the request's end.
    var requestBytes = 0
    var autoContinue: Scheduled<Void>?
    /// Set when a scenario's loading state holds the exchange rather than a breakpoint.
    var loading: LoadingHold?

    var stopsAtRequest: Bool { stops?.request ?? false }
    var stopsAtResponse: Bool { stops?.response ?? false }
}

extension ClientConnectionHandler {
    /// The exchange waits at a breakpoint: the breakpoints are told, and their decision comes
    /// back on this connection's loop to the exchange (`Exchange.resolved`).
    func hold(_ held: HeldExchange, of exchange: Exchange, on loop: any EventLoop) {
        let breakpoints = settings.breakpoints
        let id = held.id
        let parties = NIOLoopBound((handler: self, exchange: exchange), eventLoop: loop)
        breakpoints.hold(held) { resolution in
            loop.execute {
                let (handler, exchange) = parties.value
                guard handler.context != nil, exchange.breakpoint.heldID == id else { return }
                exchange.breakpoint.autoContinue?.cancel()
                handler.execute(exchange.resolved(resolution, id: id, hooks: handler.settings.hooks), for: exchange)
            }
        }
        // A loading hold ends after its own seconds (never, without them), not the breakpoints'.
        let wait: TimeAmount? = if let loading = exchange.breakpoint.loading {
            loading.seconds.map { TimeAmount($0) }
        } else {
            breakpoints.autoContinueSeconds.map { .nanoseconds(Int64($0 * 1e9)) }
        }
        if let wait {
            exchange.breakpoint.autoContinue = loop.assumeIsolated().scheduleTask(in: wait) {
                breakpoints.autoContinue(id)
            }
        }
    }
}

/// A scenario's loading state holding an exchange: listed with the breakpoints' holds.
struct LoadingHold {
    /// "scenario empty-feed: loading", as the held list shows it.
    var reason: String
    /// Ends by itself after this long; nil: only when released or the client leaves.
    var seconds: Duration?
}
