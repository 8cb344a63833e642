import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the proxy's client connections and keeps their number under the limit, so clients
/// that hold connections open (idle, or sending a byte a second) can't use up the process's
/// file descriptors. At the limit a new client is still served when some connection is only
/// waiting — idle between keep-alive requests, or not done sending its first head — for longer
/// than `grace`: the one waiting longest is closed to make room (as nginx closes keep-alive
/// connections when it runs out), so a flood of silent sockets can't lock real clients out.
/// Only when every connection is busy is the new one refused. Says so, at most every ten
/// seconds, through `notice`.
final class ClientConnectionLimit: Sendable {
    let maximum: Int
    /// How long a connection waits before it may be closed to make room.
    let grace: TimeAmount
    private let open = Atomic<Int>(0)
    private let lastNotice = Atomic<Int64>(0)
    private let notice: (@Sendable (String) -> Void)?
    /// Connections waiting for a request head, and since when.
    private let waiting = Mutex<[ObjectIdentifier: (channel: any Channel, since: NIODeadline)]>([:])

    init(maximum: Int, grace: TimeAmount = .seconds(1), notice: (@Sendable (String) -> Void)?) {
        self.maximum = maximum
        self.grace = grace
        self.notice = notice
    }

    var openConnections: Int { open.load(ordering: .relaxed) }

    /// Admits `channel` (and counts it until it closes), or returns false: then the caller closes it.
    func admit(_ channel: any Channel) -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        if count > maximum, !closeLongestWaiting() {
            open.wrappingSubtract(1, ordering: .relaxed)
            let now = NIODeadline.now().uptimeNanoseconds
            let last = lastNotice.load(ordering: .relaxed)
            if now &- UInt64(last) > 10_000_000_000 || last == 0,
               lastNotice.compareExchange(expected: last, desired: Int64(truncatingIfNeeded: now), ordering: .relaxed).exchanged {
                notice?("Kagami: \(maximum) client connections are open and busy, the most allowed; refusing new ones until some close")
            }
            return false
        }
        let key = ObjectIdentifier(channel)
        waiting.withLock { $0[key] = (channel, .now()) }
        channel.closeFuture.whenComplete { _ in
            self.open.wrappingSubtract(1, ordering: .relaxed)
            _ = self.waiting.withLock { $0.removeValue(forKey: key) }
        }
        return true
    }

    /// `channel` is in the middle of an exchange, a tunnel or HTTP/2: not to be closed for room.
    func busy(_ channel: any Channel) {
        _ = waiting.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// `channel` waits for its next request head.
    func waitingForRequest(_ channel: any Channel) {
        waiting.withLock { $0[ObjectIdentifier(channel)] = (channel, .now()) }
    }

    /// Closes the connection waiting longest, if it has waited past `grace`; true when it did.
    private func closeLongestWaiting() -> Bool {
        let cutoff = NIODeadline.now() - grace
        let chosen = waiting.withLock { waiting -> (any Channel)? in
            guard let longest = waiting.min(by: { $0.value.since < $1.value.since }), longest.value.since <= cutoff else { return nil }
            waiting.removeValue(forKey: longest.key)
            return longest.value.channel
        }
        guard let chosen else { return false }
        chosen.close(promise: nil)
        return true
    }

    /// Half of what the process may open (each client may need a server connection too),
    /// less a reserve for listeners, the session file and the web UI.
    static func fromDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0 else { return 4096 }
        // RLIM_INFINITY is the largest value: clamped, it allows a million.
        return max(8, (min(Int(clamping: limit.rlim_cur), 1 << 21) - 32) / 2)
    }

    /// Raises the soft limit on open files to the hard limit (at most a million), as servers do
    /// at start; returns the soft limit in force afterwards.
    @discardableResult
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0 else { return 0 }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(openFiles, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    #if os(Linux)
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let openFiles = RLIMIT_NOFILE
    #endif
}
