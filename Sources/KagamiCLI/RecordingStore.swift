import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiFlow
import KagamiPostgresStore
import KagamiStore

/// Where a command records and reads: a session file (SQLite, the default), or a named session
/// in a PostgreSQL database shared by a team (`--store postgres://… --session NAME`).
struct RecordingStore {
    var store: any FlowStore
    /// The session as the banner and the web UI name it: the file's path, or
    /// `NAME in postgres://…`.
    var description: String
    /// The session file this opening made (it did not exist before).
    var createdFile: String?

    /// `redaction` is what the user asked to redact (`RedactionOptions.asked`); when nothing
    /// was, a shared store redacts credentials and a session file keeps values as they are.
    static func open(store url: String?, session: String?, redaction: FlowRedaction? = nil) async throws -> RecordingStore {
        guard let url else {
            let path = try session.map(SessionFile.expand) ?? SessionFile.newDefaultPath()
            let existed = FileManager.default.fileExists(atPath: path)
            if existed { try SessionFile.refuseForeign(path) }
            var opened = RecordingStore(store: try SQLiteFlowStore(path: path, redaction: redaction ?? .none), description: path)
            if !existed { opened.createdFile = path }
            return opened
        }
        let location = try location(url, hint: "; to record into a session file, give --session FILE alone")
        let name = session ?? SessionFile.newDefaultName()
        do {
            let store = try await PostgresFlowStore.open(
                location, session: name, recordedBy: recorder(), spoolDirectory: spoolDirectory, redaction: redaction ?? FlowRedaction())
            return RecordingStore(store: store, description: "\(name) in \(location)")
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// An existing session to read: a session file, or with `--store` a named session of a
    /// shared store (`kagami flows`, `export`, `curl`, `repeat`).
    static func openForReading(store url: String?, session: String) async throws -> RecordingStore {
        guard let url else {
            let store = try SessionFile.open(session)
            return RecordingStore(store: store, description: store.path)
        }
        let location = try location(url)
        let opened: PostgresFlowStore?
        do {
            // `repeat` records into the session it read: what can't be written while the server
            // is away waits where `proxy --store` keeps it, and is written by the next opening.
            opened = try await PostgresFlowStore.openExisting(location, session: session, spoolDirectory: spoolDirectory)
        } catch {
            throw ValidationError("\(error)")
        }
        guard let opened else { throw ValidationError("no session named \(session) in \(location)") }
        return RecordingStore(store: opened, description: "\(session) in \(location)")
    }

    /// The stored exchange with bodies, or an error naming the id that isn't there.
    func flow(_ id: String) async throws -> Flow {
        guard let uuid = UUID(uuidString: id) else {
            throw ValidationError("\(id) is not an exchange id (expected a UUID, as `kagami flows --ids` prints)")
        }
        guard let flow = try await store.flow(id: uuid) else {
            throw ValidationError("no exchange \(id) in \(description)")
        }
        return flow
    }

    /// The database `--store` names, or a usage error saying what is wrong with the URL.
    static func location(_ url: String, hint: String = "") throws -> PostgresLocation {
        guard PostgresLocation.isPostgresURL(url) else {
            throw ValidationError("--store takes a postgres://user@host/database URL\(hint)")
        }
        do {
            return try PostgresLocation(url: url)
        } catch {
            throw ValidationError("--store: \(error)")
        }
    }

    /// Where a shared store keeps what it could not write while its server was away.
    static var spoolDirectory: String { (KagamiHome.path as NSString).appendingPathComponent("spool") }

    /// Writes what is queued and lets go of the store's connections.
    func close() async throws {
        try await store.flush()
        await store.close()
    }

    /// Closes a session nothing was recorded into because the command could not start: a
    /// session file it made for the run is removed, so no empty session is left behind.
    func abandon() async {
        let empty = ((try? await store.count()) ?? 1) == 0
        try? await close()
        if let createdFile, empty { SQLiteFlowStore.removeFiles(of: createdFile) }
    }

    /// `user@host`, from the login and the machine's own name (no DNS look-up).
    static func recorder() -> String {
        let user = ProcessInfo.processInfo.environment["USER"]
            ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) }
            ?? "unknown"
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return user }
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(user)@\(host)"
    }
}
