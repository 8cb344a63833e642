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

/// How many exchanges a long `import` or `export` has handled, on standard error: on a terminal
/// one line rewritten in place (a bar when the total is known, ten times a second at most),
/// cleared at the end; elsewhere (a log, a pipe) a line at each 100,000, so a short run writes
/// nothing beyond its result.
final class ExchangeCountDisplay: Sendable {
    private let verb: String
    private let total: Int?
    private let terminal: Bool
    private let state = Mutex<(shown: Bool, last: ContinuousClock.Instant?, count: Int)>((false, nil, 0))

    /// `verb` as the line starts: `Exporting kagami.sqlite`.
    init(_ verb: String, total: Int?, terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.verb = verb
        self.total = total
        self.terminal = terminal
    }

    /// `count` more handled.
    func add(_ count: Int) {
        let now = ContinuousClock.now
        let line = state.withLock { state -> String? in
            let before = state.count
            state.count += count
            if !terminal {
                return state.count / 100_000 > before / 100_000 ? "kagami: \(verb): \(state.count) exchanges\n" : nil
            }
            if let last = state.last, now - last < .milliseconds(100) { return nil }
            state.shown = true
            state.last = now
            return "\r\u{1B}[K\(Self.text(verb, count: state.count, total: total))"
        }
        if let line { Console.error(line) }
    }

    /// The line as a terminal shows it: `Exporting s.sqlite [#####-----] 52% 52000 of 100000`.
    static func text(_ verb: String, count: Int, total: Int?) -> String {
        guard let total, total > 0 else { return "\(verb): \(count) exchanges…" }
        let done = min(count, total)
        let filled = done * 20 / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled)
        return "\(verb) [\(bar)] \(done * 100 / total)% \(done) of \(total)"
    }

    /// Clears the line, if anything was shown.
    func finish() {
        if terminal, state.withLock({ $0.shown }) { Console.error("\r\u{1B}[K") }
    }
}
