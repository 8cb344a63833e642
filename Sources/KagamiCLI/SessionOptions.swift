import ArgumentParser

/// Where a command finds a session: a session file (SQLite), or with `--store` a named session
/// of a PostgreSQL database shared by a team. `proxy` records into it; `flows`, `export`,
/// `validate` and `infer` read it; `push` uploads into it.
struct SessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Session file (SQLite); with --store, the name of a session in that database.", valueName: "file|name"))
    var session: String?

    @Option(name: .customLong("store"), help: ArgumentHelp(
        "A PostgreSQL database shared by a team (postgres://user@host/database, sslmode as libpq reads it) instead of session files. See docs/TEAM.md.",
        valueName: "url"))
    var storeURL: String?

    /// The session to read, when the command needs one.
    func requiredSession() throws -> String {
        guard let session else {
            throw ValidationError(storeURL == nil ? "give --session FILE" : "give --session NAME: the session of the store to read")
        }
        return session
    }

    /// An existing session, opened for reading.
    func openForReading() async throws -> RecordingStore {
        try await RecordingStore.openForReading(store: storeURL, session: try requiredSession())
    }
}
