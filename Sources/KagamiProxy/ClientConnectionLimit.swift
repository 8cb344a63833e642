import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the proxy's client connections and refuses new ones past the limit, so clients that
/// hold connections open (idle, or sending a byte a second) can't use up the process's file
/// descriptors: everyone else is served as soon as they are gone. Says so, at most every ten
/// seconds, through `notice`.
final class ClientConnectionLimit: Sendable {
    let maximum: Int
    private let open = Atomic<Int>(0)
    private let lastNotice = Atomic<Int64>(0)
    private let notice: (@Sendable (String) -> Void)?

    init(maximum: Int, notice: (@Sendable (String) -> Void)?) {
        self.maximum = maximum
        self.notice = notice
    }

    var openConnections: Int { open.load(ordering: .relaxed) }

    /// Admits `channel` (and counts it until it closes), or returns false: then the caller closes it.
    func admit(_ channel: any Channel) -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        guard count <= maximum else {
            open.wrappingSubtract(1, ordering: .relaxed)
            let now = NIODeadline.now().uptimeNanoseconds
            let last = lastNotice.load(ordering: .relaxed)
            if now &- UInt64(last) > 10_000_000_000 || last == 0,
               lastNotice.compareExchange(expected: last, desired: Int64(truncatingIfNeeded: now), ordering: .relaxed).exchanged {
                notice?("Kagami: \(maximum) client connections are open, the most allowed; refusing new ones until some close")
            }
            return false
        }
        channel.closeFuture.whenComplete { _ in self.open.wrappingSubtract(1, ordering: .relaxed) }
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
