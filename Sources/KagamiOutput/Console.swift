import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What Kagami tells its user on standard output and standard error. A notice that can't be
/// written (the disk under a redirected log is full, the reading end of a pipe is gone) is lost
/// and nothing else: Foundation's `FileHandle.write(_:)` stops the whole process instead, which
/// a proxy saying that its disk is full must not do. A command's answer is another matter:
/// `answer` fails the command when it can't be written.
public enum Console {
    /// A notice on standard output (a banner, a summary).
    public static func output(_ text: String) {
        _ = write(Data(text.utf8), to: STDOUT_FILENO)
    }

    /// A notice on standard error (a warning, an error the process goes on after).
    public static func error(_ text: String) {
        _ = write(Data(text.utf8), to: STDERR_FILENO)
    }

    /// What the command was run for (a description, a certificate, a report) on standard
    /// output: when it can't be written, the command ends with this error rather than as if it
    /// had answered.
    public static func answer(_ text: String) throws(UnwrittenAnswer) { try answer(Data(text.utf8)) }

    public static func answer(_ data: Data) throws(UnwrittenAnswer) {
        if let reason = write(data, to: STDOUT_FILENO) { throw UnwrittenAnswer(reason: reason) }
    }

    public struct UnwrittenAnswer: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "cannot write to standard output: \(reason)" }
    }

    /// Writes all of `data`; nil, or why it stopped.
    private static func write(_ data: Data, to descriptor: Int32) -> String? {
        Descriptor.write([data], to: descriptor) ? nil : String(cString: strerror(errno))
    }
}
