import NIOCore

/// A timer for a deadline that moves often (each exchange, each part of one): set once, and when
/// it fires it asks where the deadline is now. A later one sets it again, a passed one calls
/// `expired`, none stops it. Moving the deadline costs no timer work; `start()` once one is set.
/// Used on its event loop only; `deadline` and `expired` hold their owner weakly.
final class MovingDeadlineTimer {
    private let eventLoop: any EventLoop
    private let deadline: () -> NIODeadline?
    private let expired: () -> Void
    private var scheduled: Scheduled<Void>?

    init(on eventLoop: any EventLoop, deadline: @escaping () -> NIODeadline?, expired: @escaping () -> Void) {
        self.eventLoop = eventLoop
        self.deadline = deadline
        self.expired = expired
    }

    /// Sets the timer for the current deadline, unless it is set already or there is none.
    func start() {
        guard scheduled == nil, let deadline = deadline() else { return }
        schedule(at: deadline)
    }

    func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }

    private func schedule(at time: NIODeadline) {
        scheduled = eventLoop.assumeIsolated().scheduleTask(deadline: time) { [weak self] in
            guard let self else { return }
            self.scheduled = nil
            guard let deadline = self.deadline() else { return }
            if deadline > self.eventLoop.now {
                self.schedule(at: deadline)
            } else {
                self.expired()
            }
        }
    }
}
