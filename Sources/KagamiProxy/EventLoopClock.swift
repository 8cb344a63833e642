import NIOCore

/// Time as an event loop keeps it, as a `Clock` the throttle shaper takes. The loop's timers run
/// on the same time, so a chunk's release instant is exactly a timer deadline; on an
/// `EmbeddedEventLoop` it is the test's virtual time.
struct EventLoopClock: Clock {
    struct Instant: InstantProtocol {
        var deadline: NIODeadline

        init(_ deadline: NIODeadline) { self.deadline = deadline }

        func advanced(by duration: Duration) -> Instant { Instant(deadline + TimeAmount(duration)) }
        func duration(to other: Instant) -> Duration { .nanoseconds((other.deadline - deadline).nanoseconds) }
        static func < (a: Instant, b: Instant) -> Bool { a.deadline < b.deadline }
    }

    var now: Instant { Instant(.now()) }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await Task.sleep(for: now.duration(to: deadline))
    }
}
