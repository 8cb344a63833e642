import Foundation
import KagamiContract
import KagamiFlow
import KagamiOutput
import Synchronization

/// One line on standard error rewritten in place while a long command works, redrawn ten times
/// a second at most, cleared when it is done. Only for a terminal: the displays below decide.
final class TerminalStatusLine: Sendable {
    private let state = Mutex<(shown: Bool, last: ContinuousClock.Instant?)>((false, nil))

    /// Shows `text()` unless a line was drawn less than 100 ms ago (`always`: draws anyway).
    func show(always: Bool = false, _ text: () -> String) {
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            if !always, let last = state.last, now - last < .milliseconds(100) { return false }
            state = (true, now)
            return true
        }
        if due { Console.error("\r\u{1B}[K\(text())") }
    }

    /// Clears the line, if anything was shown.
    func finish() {
        if state.withLock({ $0.shown }) { Console.error("\r\u{1B}[K") }
    }
}

/// How far reading a description has got, on standard error while a large one is read, when
/// standard error is a terminal (a log or a pipe gets nothing): one line rewritten in place,
/// cleared when reading is done.
final class ReadingDisplay: Sendable {
    private let file: String
    private let line = TerminalStatusLine()

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
        // A stage's first report is always drawn; its counts come often.
        line.show(always: progress.done == 0) {
            let count = progress.total > 0 ? " \(progress.done) of \(progress.total)" : ""
            return "Reading \(file): \(progress.stage)\(count)…"
        }
    }

    func finish() {
        line.finish()
    }
}

/// How many exchanges a long `import` or `export` has handled, on standard error: on a terminal
/// one line rewritten in place (a bar when the total is known), cleared at the end; elsewhere (a
/// log, a pipe) a line at each 100,000, so a short run writes nothing beyond its result.
final class ExchangeCountDisplay: Sendable {
    private let verb: String
    private let total: Int?
    /// Nil when standard error is not a terminal.
    private let line: TerminalStatusLine?
    private let count = Mutex(0)

    /// `verb` as the line starts: `Exporting kagami.sqlite`.
    init(_ verb: String, total: Int?, terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.verb = verb
        self.total = total
        self.line = terminal ? TerminalStatusLine() : nil
    }

    /// `added` more handled.
    func add(_ added: Int) {
        let (before, now) = count.withLock { count -> (Int, Int) in
            count += added
            return (count - added, count)
        }
        guard let line else {
            if now / 100_000 > before / 100_000 { Console.error("kagami: \(verb): \(now) exchanges\n") }
            return
        }
        line.show { Self.text(verb, count: now, total: total) }
    }

    /// The line as a terminal shows it: `Exporting s.sqlite [#####-----] 52% 52000 of 100000`.
    static func text(_ verb: String, count: Int, total: Int?) -> String {
        guard let total, total > 0 else { return "\(verb): \(count) exchanges…" }
        let done = min(count, total)
        let filled = done * 20 / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled)
        return "\(verb) [\(bar)] \(done * 100 / total)% \(done) of \(total)"
    }

    func finish() {
        line?.finish()
    }
}
