import Foundation
import Synchronization

/// The stage of a `RecordingChain` that shows each flow to every live subscriber (the web UI's
/// event streams) as it passes. Subscribers that read too slowly lose their oldest undelivered
/// flows rather than holding the proxy back, and are told how many they missed.
public final class FlowHub: RecordingStage {
    /// What a subscriber receives.
    public enum Delivery: Sendable {
        /// A flow just recorded (body bytes left out unless the subscription asked for them).
        case flow(Flow)
        /// A change made to the proxy, kept in the session (`SessionNote`).
        case note(SessionNote)
        /// This many flows were dropped because the subscriber fell behind (0: how many is not
        /// known, see `announceMissed()`); read them from the store.
        case missed(Int)
        /// Nothing happened for a while (sent on request by `Subscription.heartbeat()`).
        case heartbeat
    }

    fileprivate struct Subscriber {
        var continuation: AsyncStream<Delivery>.Continuation
        var includeBodies: Bool
        /// Flows dropped and not yet reported.
        var missed = 0
    }

    private let subscribers = Mutex<[UInt64: Subscriber]>([:])
    private let nextID = Atomic<UInt64>(0)

    public init() {}

    public var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// Subscribers never hold the chain back: they lose flows instead.
    public var isBehind: Bool { false }

    public func handle(_ record: FlowRecord, next: @escaping @Sendable (FlowRecord) -> Void) {
        switch record {
        case .flow(let flow, _): publish(flow)
        // Live views read a socket's messages from the store when they show it.
        case .messages: break
        case .note(let note): publish(note)
        }
        next(record)
    }

    /// Tells live subscribers about a flow that changed after it was recorded (the contract
    /// check adds its violations); whoever changed it updates the store.
    public func announce(_ flow: Flow) {
        publish(flow)
    }

    /// Tells every subscriber that flows may have gone by without reaching it (recorded by
    /// another process while it was not followed), so that it reads them from the store.
    public func announceMissed() {
        subscribers.withLock { subscribers in
            for id in subscribers.keys {
                guard var subscriber = subscribers[id] else { continue }
                let missed = subscriber.missed
                subscriber.missed = 0
                subscriber.account(subscriber.continuation.yield(.missed(missed)))
                subscribers[id] = subscriber
            }
        }
    }

    private func publish(_ note: SessionNote) {
        subscribers.withLock { subscribers in
            for id in subscribers.keys {
                guard var subscriber = subscribers[id] else { continue }
                subscriber.account(subscriber.continuation.yield(.note(note)))
                subscribers[id] = subscriber
            }
        }
    }

    private func publish(_ flow: Flow) {
        subscribers.withLock { subscribers in
            guard !subscribers.isEmpty else { return }
            var stripped: Flow?
            for id in subscribers.keys {
                guard var subscriber = subscribers[id] else { continue }
                if subscriber.missed > 0 {
                    let missed = subscriber.missed
                    subscriber.missed = 0
                    subscriber.account(subscriber.continuation.yield(.missed(missed)))
                }
                let delivered: Flow
                if subscriber.includeBodies {
                    delivered = flow
                } else {
                    if stripped == nil { stripped = flow.withoutBodyBytes }
                    delivered = stripped ?? flow
                }
                subscriber.account(subscriber.continuation.yield(.flow(delivered)))
                subscribers[id] = subscriber
            }
        }
    }

    /// Starts a subscription holding at most `bufferLimit` undelivered items.
    public func subscribe(bufferLimit: Int = 1024, includeBodies: Bool = false) -> Subscription {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Delivery>.makeStream(bufferingPolicy: .bufferingNewest(max(1, bufferLimit)))
        subscribers.withLock { $0[id] = Subscriber(continuation: continuation, includeBodies: includeBodies) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return Subscription(stream: stream, continuation: continuation)
    }

    /// One subscriber's stream; ends when `cancel()` is called or the hub is gone.
    public struct Subscription: AsyncSequence, Sendable {
        public typealias Element = Delivery
        let stream: AsyncStream<Delivery>
        let continuation: AsyncStream<Delivery>.Continuation

        public func makeAsyncIterator() -> AsyncStream<Delivery>.Iterator { stream.makeAsyncIterator() }

        /// Queues a `.heartbeat` so a reader waiting on the stream wakes up (to ping its client).
        public func heartbeat() { continuation.yield(.heartbeat) }

        public func cancel() { continuation.finish() }
    }

    deinit {
        subscribers.withLock { subscribers in
            for subscriber in subscribers.values { subscriber.continuation.finish() }
        }
    }
}

extension FlowHub.Subscriber {
    fileprivate mutating func account(_ result: AsyncStream<FlowHub.Delivery>.Continuation.YieldResult) {
        guard case .dropped(let dropped) = result else { return }
        switch dropped {
        case .flow: missed += 1
        case .note: break
        case .missed(let count): missed += count
        case .heartbeat: break
        }
    }
}

extension Flow {
    /// The flow with body sizes kept and bytes left out, as lists and live views need it.
    public var withoutBodyBytes: Flow {
        var flow = self
        flow.request.body.data = Data()
        flow.response?.body.data = Data()
        return flow
    }
}
