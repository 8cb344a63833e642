// Where a session file is, and opening it.
import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiStore

enum SessionFile {
    static func expand(_ path: String) -> String {
        KagamiHome.expand(path)
    }

    /// `~/.kagami/sessions/2026-11-21T10-15-30.sqlite`
    static func newDefaultPath() throws -> String {
        let directory = KagamiHome.sessions
        try KagamiHome.createPrivateDirectory(directory)
        return (directory as NSString).appendingPathComponent("\(newDefaultName()).sqlite")
    }

    /// `2026-11-21T10-15-30`: a new session's name when none is given.
    static func newDefaultName() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH-mm-ss"
        return formatter.string(from: Date())
    }

    /// Opens an existing session, with a clear error when there is none.
    static func open(_ path: String) throws -> SQLiteFlowStore {
        let expanded = expand(path)
        guard FileManager.default.fileExists(atPath: expanded) else {
            throw ValidationError("no session file at \(expanded)")
        }
        try refuseForeign(expanded)
        return try SQLiteFlowStore(path: expanded)
    }

    /// A file that is there but is no session (another program's SQLite database, any other
    /// file) is refused as it is, before opening it as a session would add tables to it.
    static func refuseForeign(_ path: String) throws {
        if let refusal = SQLiteFlowStore.notASession(at: path) { throw ValidationError(refusal.description) }
    }
}
