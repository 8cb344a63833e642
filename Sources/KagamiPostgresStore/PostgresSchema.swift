import KagamiStore
import Logging
import PostgresNIO

/// The shared store's tables, built by numbered migrations. Each applied version is a row of
/// `kagami_migration`, so a database written by an older Kagami is brought up to date when a
/// newer one opens it, and one written by a newer Kagami is refused rather than misread.
enum PostgresSchema {
    struct Migration: Sendable {
        var version: Int
        var name: String
        var statements: [PostgresQuery]
        /// A migration the database may not allow (an extension it lacks or the role may not
        /// create): when it fails the database goes on without it, and the next opening tries again.
        var optional = false
    }

    static let migrations: [Migration] = [
        Migration(version: 1, name: "sessions, flows, bodies and WebSocket messages", statements: [
            """
            CREATE TABLE session (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                name text NOT NULL UNIQUE,
                recorded_by text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            // `seq` is the capture order across every writer; the summary columns are for
            // listing and searching, `metadata` is the rest of the flow as `Flow.storedRecord()` (older rows: its JSON).
            """
            CREATE TABLE flow (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id bigint NOT NULL REFERENCES session (id) ON DELETE CASCADE,
                id uuid NOT NULL,
                mode text NOT NULL,
                started_at timestamptz NOT NULL,
                method text NOT NULL,
                url text NOT NULL,
                host text NOT NULL,
                status integer,
                request_size bigint NOT NULL,
                response_size bigint,
                duration double precision,
                error text,
                metadata bytea NOT NULL,
                repeat_of uuid,
                UNIQUE (session_id, id)
            )
            """,
            "CREATE INDEX flow_session_seq ON flow (session_id, seq)",
            "CREATE INDEX flow_repeat_of ON flow (session_id, repeat_of) WHERE repeat_of IS NOT NULL",
            """
            CREATE TABLE body (
                session_id bigint NOT NULL,
                flow_id uuid NOT NULL,
                part text NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (session_id, flow_id, part),
                FOREIGN KEY (session_id, flow_id) REFERENCES flow (session_id, id) ON DELETE CASCADE
            )
            """,
            // No key to `flow`: messages are written while their flow is recorded again at its end.
            """
            CREATE TABLE websocket_message (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id bigint NOT NULL REFERENCES session (id) ON DELETE CASCADE,
                flow_id uuid NOT NULL,
                direction text NOT NULL,
                time double precision NOT NULL,
                opcode integer NOT NULL,
                size bigint NOT NULL,
                truncated boolean NOT NULL,
                compressed boolean NOT NULL,
                data bytea NOT NULL,
                note text
            )
            """,
            "CREATE INDEX websocket_message_flow ON websocket_message (session_id, flow_id, seq)",
        ]),
        // A spool replayed after a crash may hold messages already written: each message is
        // keyed by the entry it was queued in and its position there, and written once.
        Migration(version: 2, name: "WebSocket messages keyed by their entry, written once", statements: [
            "ALTER TABLE websocket_message ADD COLUMN record_key uuid, ADD COLUMN record_index integer",
            "CREATE UNIQUE INDEX websocket_message_record ON websocket_message (record_key, record_index)",
        ]),
        // One token per user of `kagami serve`; the secret is never stored, only its SHA-256.
        Migration(version: 3, name: "access tokens with read or write rights", statements: [
            """
            CREATE TABLE access_token (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                name text NOT NULL UNIQUE,
                access text NOT NULL CHECK (access IN ('read', 'write')),
                secret_sha256 bytea NOT NULL UNIQUE,
                created_by text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        // Changes made to a proxy while it recorded (`SessionNote`), each written once.
        Migration(version: 4, name: "session notes", statements: [
            """
            CREATE TABLE note (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id bigint NOT NULL REFERENCES session (id) ON DELETE CASCADE,
                id uuid NOT NULL,
                time timestamptz NOT NULL,
                author text NOT NULL,
                text text NOT NULL,
                flow_id uuid,
                UNIQUE (session_id, id)
            )
            """,
            "CREATE INDEX note_session ON note (session_id, seq)",
        ]),
        // The filter box's words found through a trigram index (pg_trgm) of each flow's method,
        // host and URL, as a session file finds them through FTS5's.
        Migration(version: 5, name: "text index of methods, hosts and URLs", statements: [
            "CREATE EXTENSION IF NOT EXISTS pg_trgm",
            PostgresQuery(unsafeSQL: "CREATE INDEX flow_words ON flow USING gin (\(SQLDialect.textIndexWords()) gin_trgm_ops)"),
        ], optional: true),
    ]

    /// Taken for the length of a migration, so proxies opening a new database at once don't
    /// race to create the same tables ("kagami" in ASCII).
    static let migrationLock: Int64 = 0x6B_61_67_61_6D_69

    /// Brings the database up to the newest version; returns the versions it applied.
    @discardableResult
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS kagami_migration (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM kagami_migration", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            let known = Set(migrations.map(\.version))
            if let newer = applied.subtracting(known).max() {
                throw FlowStoreError("the database has schema version \(newer), written by a newer Kagami than this one (which knows up to \(known.max() ?? 0))")
            }
            var done: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                do {
                    if migration.optional { try await connection.query("SAVEPOINT kagami_optional_migration", logger: logger) }
                    for statement in migration.statements {
                        try await connection.query(statement, logger: logger)
                    }
                    if migration.optional { try await connection.query("RELEASE SAVEPOINT kagami_optional_migration", logger: logger) }
                } catch where migration.optional {
                    try await connection.query("ROLLBACK TO SAVEPOINT kagami_optional_migration", logger: logger)
                    logger.warning("the shared store goes without \(migration.name): \(String(reflecting: error))")
                    continue
                }
                try await connection.query(
                    "INSERT INTO kagami_migration (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                done.append(migration.version)
            }
            return done
        }
    }
}
