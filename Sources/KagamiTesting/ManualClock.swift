/// A clock that stands still until a test moves it, so schedules computed from it are exact.
public struct ManualClock: Clock {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    public var now = Instant(offset: .zero)
    public var minimumResolution: Duration { .nanoseconds(1) }
    public init() {}
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {}

    public static func at(_ duration: Duration) -> Instant { Instant(offset: duration) }
    public static func at(_ seconds: Double) -> Instant { Instant(offset: .seconds(seconds)) }
}
