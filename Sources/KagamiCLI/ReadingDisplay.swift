import Foundation
import KagamiContract
import KagamiFlow
import KagamiOutput
import Synchronization

/// How far reading a description has got, on standard error while a large one is read, when
/// standard error is a terminal (a log or a pipe gets nothing): one line rewritten in place,
/// cleared when reading is done.
final class ReadingDisplay: Sendable {
    private let file: String
    private let state = Mutex<(shown: Bool, last: ContinuousClock.Instant?)>((false, nil))

    private init(file: String) {
        self.file = file
    }

    /// A display for `file`, or nil when standard error is not a terminal.
    static func forTerminal(file: String) -> ReadingDisplay? {
        isatty(STDERR_FILENO) == 1 ? ReadingDisplay(file: file) : nil
    }

    var report: ReadingProgress.Report {
        { [self] progress in show(progress) }
    }

    private func show(_ progress: ReadingProgress) {
        let now = ContinuousClock.now
        let shown = state.withLock { state -> Bool in
            // Counts come often: redrawn ten times a second at most.
            if progress.done > 0, let last = state.last, now - last < .milliseconds(100) { return false }
            state = (true, now)
            return true
        }
        guard shown else { return }
        let count = progress.total > 0 ? " \(progress.done) of \(progress.total)" : ""
        Console.error("\r\u{1B}[KReading \(file): \(progress.stage)\(count)…")
    }

    /// Clears the line, if anything was shown.
    func finish() {
        if state.withLock({ $0.shown }) { Console.error("\r\u{1B}[K") }
    }
}
