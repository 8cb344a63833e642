import KagamiRules
import NIOCore

/// One direction of a throttled link: bytes wait here, cut into MTU-sized chunks, until the
/// shaper's instant for each. Bookkeeping only, over any clock: `ThrottleHandler` drives it with
/// real time and event-loop timers, tests with a clock that moves when told.
struct ThrottleQueue<C: Clock, Tag> where C.Duration == Duration, C.Instant: Sendable {
    struct Chunk {
        var bytes: ByteBuffer
        var releaseAt: C.Instant
        /// Rides on the last chunk of what was queued, e.g. the promise of the write it came from.
        var tag: Tag?
    }

    let clock: C
    let direction: ThrottleDirection
    /// Above this many waiting bytes the queue asks for no more (reads stop, writes report the
    /// link not writable) until it has drained below `resumeBelow`.
    let pauseAbove: Int
    let resumeBelow: Int
    private(set) var isPaused = false
    private(set) var backlog = 0
    private var chunks = CircularBuffer<Chunk>()
    private var shaper: ThrottleShaper<C>?
    private var conditions: ThrottleConditions?

    init(clock: C, direction: ThrottleDirection, pauseAbove: Int = 64 * 1024, resumeBelow: Int = 16 * 1024) {
        self.clock = clock
        self.direction = direction
        self.pauseAbove = pauseAbove
        self.resumeBelow = resumeBelow
    }

    /// Starts shaping with `profile` at `quality` (a degraded period's share of bandwidth), or
    /// stops with nil. Bytes already waiting keep their instants; later ones queue behind them.
    mutating func shape(_ profile: ThrottleProfile?, quality: Double = 1) {
        shaper = profile.map { ThrottleShaper(profile: $0, direction: direction, clock: clock, quality: quality) }
        conditions = profile.map(ThrottleConditions.init)
    }

    var isShaping: Bool { shaper != nil }
    var isEmpty: Bool { chunks.isEmpty }
    var nextRelease: C.Instant? { chunks.first?.releaseAt }

    /// Queues bytes that are ready at `now`.
    mutating func enqueue(_ bytes: ByteBuffer, tag: Tag?, now: C.Instant) {
        var bytes = bytes
        let plan: [(byteCount: Int, releaseAt: C.Instant)]
        if var shaper {
            plan = shaper.schedule(byteCount: bytes.readableBytes, arrivingAt: now).map { ($0.byteCount, $0.releaseAt) }
            self.shaper = shaper
        } else {
            plan = bytes.readableBytes > 0 ? [(bytes.readableBytes, now)] : []
        }
        // A new profile's schedule may start earlier than what an old one left waiting.
        var notBefore = chunks.last?.releaseAt ?? now
        for (index, release) in plan.enumerated() {
            guard let slice = bytes.readSlice(length: release.byteCount) else { break }
            notBefore = max(notBefore, release.releaseAt)
            chunks.append(Chunk(bytes: slice, releaseAt: notBefore, tag: index == plan.count - 1 ? tag : nil))
            backlog += release.byteCount
        }
        if plan.isEmpty, let tag {
            // Nothing to send (an empty write): its promise still waits its turn.
            chunks.append(Chunk(bytes: bytes, releaseAt: notBefore, tag: tag))
        }
        if backlog > pauseAbove { isPaused = true }
    }

    /// The chunks due at `now`, in order. `lost` is true when the network lost one of them
    /// (reliability): it and everything after it are dropped, and the link must fail.
    mutating func takeDue(at now: C.Instant, using random: inout some RandomNumberGenerator) -> (chunks: [Chunk], lost: Bool) {
        var due: [Chunk] = []
        while let first = chunks.first, first.releaseAt <= now {
            let chunk = chunks.removeFirst()
            backlog -= chunk.bytes.readableBytes
            if let conditions, chunk.bytes.readableBytes > 0,
               !conditions.messageGetsThrough(byteCount: chunk.bytes.readableBytes, using: &random) {
                return (due, true)
            }
            due.append(chunk)
        }
        if isPaused && backlog <= resumeBelow { isPaused = false }
        return (due, false)
    }

    /// Empties the queue (the link closed); returns what was waiting so promises can fail.
    mutating func removeAll() -> [Chunk] {
        let waiting = Array(chunks)
        chunks.removeAll()
        backlog = 0
        isPaused = false
        return waiting
    }
}
