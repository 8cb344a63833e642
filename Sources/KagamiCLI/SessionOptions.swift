import ArgumentParser

/// Where a command finds a session: a session file (SQLite), or with `--store` a named session
/// of a PostgreSQL database shared by a team. `proxy`, `mock` and `import` record into it;
/// `flows`, `export`, `validate`, `infer` and `curl` read it; `repeat` reads an exchange from it
/// and records the repeats into it; `push` uploads into it.
struct SessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Session file (SQLite); with --store, the name of a session in that database.", valueName: "file|name"))
    var session: String?

    @Option(name: .customLong("store"), help: ArgumentHelp(
        "A PostgreSQL database shared by a team (postgres://user@host/database, sslmode as libpq reads it) instead of session files. See docs/TEAM.md.",
        valueName: "url"))
    var storeURL: String?

    /// The session given, when the command needs one.
    func requiredSession() throws -> String {
        guard let session else {
            throw ValidationError(storeURL == nil ? "give --session FILE" : "give --session NAME: the name of a session in that database")
        }
        return session
    }

    /// An existing session, opened for reading.
    func openForReading() async throws -> RecordingStore {
        try await RecordingStore.openForReading(store: storeURL, session: try requiredSession())
    }
}
