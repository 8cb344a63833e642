import Foundation

// Throttling as arithmetic: when each chunk of a byte stream may leave, whether a message is
// lost, how good a request's connection is. The engine supplies real time; tests a test clock.

/// One chunk of a throttled stream: how many bytes, and when they may be sent.
public struct ChunkRelease<Instant: InstantProtocol & Sendable>: Sendable, Hashable {
    public var byteCount: Int
    public var releaseAt: Instant
}

/// Shapes one direction of one exchange: bytes are released in MTU-sized chunks at the
/// profile's rate. Tokens for a chunk accrue while it waits and a chunk leaves once all of its
/// tokens have arrived; an idle link saves none up, so N bytes always take N ÷ rate to pass
/// (1 MB at 1 Mbps: the last chunk leaves 8 s after the first byte arrived).
public struct ThrottleShaper<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    public let clock: C
    public let mtu: Int
    /// Nil: no limit, every chunk leaves as soon as it arrives.
    public let bytesPerSecond: Double?
    /// When the current busy period began, and how many bytes it has carried.
    private var busySince: C.Instant?
    private var bytesSinceBusy = 0
    private var linkFreeAt: C.Instant?

    /// `quality` (0…1] scales bandwidth, as a degraded period from `ThrottleConditions.quality` does.
    public init(profile: ThrottleProfile, direction: ThrottleDirection, clock: C, quality: Double = 1) {
        self.clock = clock
        mtu = max(profile.mtu, 1)
        bytesPerSecond = profile.bytesPerSecond(direction).map { $0 * min(max(quality, 0.01), 1) }
    }

    /// Plans the release of `byteCount` bytes that are ready now.
    public mutating func schedule(byteCount: Int) -> [ChunkRelease<C.Instant>] {
        schedule(byteCount: byteCount, arrivingAt: clock.now)
    }

    public mutating func schedule(byteCount: Int, arrivingAt now: C.Instant) -> [ChunkRelease<C.Instant>] {
        guard byteCount > 0 else { return [] }
        guard let bytesPerSecond else { return [ChunkRelease(byteCount: byteCount, releaseAt: now)] }
        if busySince == nil || linkFreeAt.map({ now > $0 }) ?? true {
            busySince = now
            bytesSinceBusy = 0
        }
        guard let start = busySince else { return [] }
        var releases: [ChunkRelease<C.Instant>] = []
        releases.reserveCapacity(byteCount / mtu + 1)
        var remaining = byteCount
        while remaining > 0 {
            let chunk = min(mtu, remaining)
            remaining -= chunk
            bytesSinceBusy += chunk
            // From the start of the busy period, so rounding never accumulates across chunks.
            let nanoseconds = (Double(bytesSinceBusy) * 1e9 / bytesPerSecond).rounded()
            let release = start.advanced(by: .nanoseconds(Int64(nanoseconds)))
            releases.append(ChunkRelease(byteCount: chunk, releaseAt: release))
            linkFreeAt = release
        }
        return releases
    }
}

/// The chance parts of a profile: lost messages and degraded periods, drawn from a random
/// source the caller owns (seed it for repeatable runs).
public struct ThrottleConditions: Sendable, Hashable {
    public let profile: ThrottleProfile

    public init(profile: ThrottleProfile) {
        self.profile = profile
    }

    /// The chance that a message of `byteCount` bytes gets through: reliability per 10 KiB.
    public func deliveryChance(byteCount: Int) -> Double {
        let perMessage = profile.reliability / 100
        if perMessage >= 1 { return 1 }
        if perMessage <= 0 { return 0 }
        return pow(perMessage, Double(max(byteCount, 1)) / 10240)
    }

    public func messageGetsThrough(byteCount: Int, using random: inout some RandomNumberGenerator) -> Bool {
        let chance = deliveryChance(byteCount: byteCount)
        if chance >= 1 { return true }
        if chance <= 0 { return false }
        return Double.random(in: 0..<1, using: &random) < chance
    }

    /// The share of normal bandwidth a request gets: 1 most of the time, and within the unstable
    /// quality range for the share of requests that stability leaves over.
    public func quality(using random: inout some RandomNumberGenerator) -> Double {
        guard profile.stability < 100 else { return 1 }
        if Double.random(in: 0..<100, using: &random) < profile.stability { return 1 }
        let range = profile.unstableQuality
        let percent = range.low == range.high ? range.low : Double.random(in: range.low...range.high, using: &random)
        return percent / 100
    }
}
