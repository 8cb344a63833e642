import Foundation
import KagamiFlow
@testable import KagamiPostgresStore
import KagamiStore
import KagamiTesting
import Logging
import PostgresNIO
import Testing

/// What only a shared store does: sessions with names, several writers at once, one schema
/// brought up to date by whoever opens the database first.
@Suite("PostgreSQL store")
struct PostgresFlowStoreTests {
    @Test func severalProxiesRecordIntoOneDatabaseAtOnce() async throws {
        let location = try StoreDriver.postgresLocation()
        let shared = "shared-" + UUID().uuidString
        let own = "own-" + UUID().uuidString
        // Two writers share a session, a third has its own; all write at the same time.
        var writers: [PostgresFlowStore] = []
        for (session, who) in [(shared, "qa-device-1"), (shared, "qa-device-2"), (own, "ci")] {
            writers.append(try await PostgresFlowStore.open(location, session: session, recordedBy: who))
        }
        let perWriter = 300
        let written = try await withThrowingTaskGroup(of: [Flow].self) { group in
            for writer in writers {
                group.addTask {
                    var flows: [Flow] = []
                    for index in 0..<perWriter {
                        let flow = index % 10 == 0 ? FlowFixtures.postBinary(size: 20_000) : FlowFixtures.getJSON(body: "{\"n\":\(index)}")
                        flows.append(flow)
                        writer.record(flow)
                        if index % 50 == 0 { await Task.yield() }
                    }
                    try await writer.flush()
                    return flows
                }
            }
            var all: [[Flow]] = []
            for try await flows in group { all.append(flows) }
            return all
        }
        #expect(written.count == 3)
        #expect(try await writers[0].count() == 2 * perWriter)
        #expect(try await writers[1].count() == 2 * perWriter)
        #expect(try await writers[2].count() == perWriter)
        let sharedIDs = Set(try await writers[0].allFlows(includeBodies: false).map(\.id))
        let ownFlows = try await writers[2].allFlows()
        #expect(sharedIDs.isDisjoint(with: ownFlows.map(\.id)))
        #expect(Set(ownFlows.map(\.id)).count == perWriter)
        // The session keeps whoever created it.
        #expect(writers[0].session.recordedBy == "qa-device-1")
        #expect(writers[1].session.recordedBy == "qa-device-1")
        #expect(writers[2].session.recordedBy == "ci")
        for writer in writers { await writer.close() }
    }

    @Test func aNewDatabaseIsMigratedOnceWhenProxiesOpenItTogether() async throws {
        try await withFreshDatabase { location, client in
            let stores = try await withThrowingTaskGroup(of: PostgresFlowStore.self) { group in
                for index in 0..<4 {
                    group.addTask { try await PostgresFlowStore.open(location, session: "first-\(index)", recordedBy: "tests") }
                }
                var stores: [PostgresFlowStore] = []
                for try await store in group { stores.append(store) }
                return stores
            }
            let versions = try await column("SELECT version FROM kagami_migration ORDER BY version", as: Int.self, on: client)
            #expect(versions == [1, 2, 3, 4, 5])
            let sessions = try await column("SELECT name FROM session ORDER BY name", as: String.self, on: client)
            #expect(sessions == ["first-0", "first-1", "first-2", "first-3"])
            for store in stores { await store.close() }
        }
    }

    /// A transaction that outlasts the write timeout (a server too busy, or silent) ends the
    /// wait: the writer doesn't stall behind it, what it held goes to the spool, and the store
    /// says the server is away. (It once waited for the abandoned transaction for ever.)
    @Test func aTransactionSlowerThanTheWriteTimeoutDoesNotStallTheWriter() async throws {
        let location = try StoreDriver.postgresLocation()
        let spool = NSTemporaryDirectory() + "kagami-spool-test-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let store = try await PostgresFlowStore.open(
            location, session: "slow-" + UUID().uuidString, recordedBy: "tests", spoolDirectory: spool, writeTimeout: .milliseconds(30))
        for _ in 0..<3_000 { store.record(FlowFixtures.getJSON()) }
        var waiting = store.status.queued
        for _ in 0..<600 where waiting > 0 {
            try await Task.sleep(for: .milliseconds(100))
            waiting = store.status.queued
        }
        #expect(waiting == 0)
        #expect(store.status.serverAway?.reason.contains("no answer within") == true)
        #expect(store.status.spooled > 0)
        await store.close()
    }

    /// A database as the Kagami before access tokens left it (schema version 2) is brought up
    /// to date when a newer one opens it; what it held stays readable.
    @Test func aDatabaseFromAnOlderKagamiIsMigrated() async throws {
        try await withFreshDatabase { location, client in
            let store = try await PostgresFlowStore.open(location, session: "older", recordedBy: "tests")
            let flow = FlowFixtures.getJSON()
            store.record(flow)
            try await store.flush()
            await store.close()
            try await client.query("DROP TABLE access_token")
            try await client.query("DELETE FROM kagami_migration WHERE version = 3")

            let reopened = try #require(try await PostgresFlowStore.openExisting(location, session: "older"))
            #expect(try await column("SELECT version FROM kagami_migration ORDER BY version", as: Int.self, on: client) == [1, 2, 3, 4, 5])
            #expect(try await column("SELECT count(*) FROM access_token", as: Int.self, on: client) == [0])
            #expect(try await reopened.flow(id: flow.id)?.request.headers["Accept"] == "application/json")
            await reopened.close()
        }
    }

    /// A user who may create tables but not extensions (a managed database) gets a store
    /// without the text index: its filters still answer (by a scan), and the index comes with the
    /// first opening once the user may create it.
    @Test func aDatabaseThatRefusesTheTextIndexGoesOnWithoutIt() async throws {
        try await withFreshDatabase { location, client in
            let role = "kagami_limited_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
            try await client.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN"))
            try await client.query(PostgresQuery(unsafeSQL: "GRANT USAGE, CREATE ON SCHEMA public TO \(role)"))
            try await client.query(PostgresQuery(unsafeSQL: "REVOKE CREATE ON DATABASE \(location.database) FROM PUBLIC"))
            var limited = location
            limited.user = role
            limited.password = nil
            let store = try await PostgresFlowStore.open(limited, session: "limited", recordedBy: "tests")
            #expect(try await column("SELECT version FROM kagami_migration ORDER BY version", as: Int.self, on: client) == [1, 2, 3, 4])
            #expect(try await column("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'", as: Int.self, on: client) == [0])
            let flows = [
                FlowFixtures.getJSON(url: "/users/1", host: "api.example.com"),
                FlowFixtures.getJSON(url: "/orders/2", host: "shop.example.net"),
            ]
            for flow in flows { store.record(flow) }
            try await store.flush()
            let found = try await store.flows(FlowQuery(filter: FlowFilter(parsing: "orders"), limit: 10)).flows.map(\.id)
            #expect(found == [flows[1].id])
            await store.close()

            try await client.query(PostgresQuery(unsafeSQL: "GRANT CREATE ON DATABASE \(location.database) TO \(role)"))
            let reopened = try #require(try await PostgresFlowStore.openExisting(limited, session: "limited"))
            #expect(try await column("SELECT version FROM kagami_migration ORDER BY version", as: Int.self, on: client) == [1, 2, 3, 4, 5])
            #expect(try await column("SELECT count(*) FROM pg_indexes WHERE indexname = 'flow_words'", as: Int.self, on: client) == [1])
            let again = try await reopened.flows(FlowQuery(filter: FlowFilter(parsing: "users"), limit: 10)).flows.map(\.id)
            #expect(again == [flows[0].id])
            await reopened.close()
            try await client.query(PostgresQuery(unsafeSQL: "REASSIGN OWNED BY \(role) TO CURRENT_USER"))
            try await client.query(PostgresQuery(unsafeSQL: "DROP OWNED BY \(role)"))
            try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE \(role)"))
        }
    }

    @Test func aDatabaseFromANewerKagamiIsRefused() async throws {
        try await withFreshDatabase { location, client in
            let store = try await PostgresFlowStore.open(location, session: "now", recordedBy: "tests")
            await store.close()
            try await client.query("INSERT INTO kagami_migration (version, name) VALUES (999, 'from the future')")
            await #expect {
                _ = try await PostgresFlowStore.open(location, session: "later", recordedBy: "tests")
            } throws: { error in
                "\(error)".contains("schema version 999, written by a newer Kagami")
            }
        }
    }

    /// Credentials never reach the shared store: by default Authorization, Proxy-Authorization,
    /// Cookie and Set-Cookie values are replaced (any case, trailers too); other fields, and the
    /// names, are kept; a store given its own list replaces those instead.
    @Test func credentialsAreRedactedBeforeTheyAreWritten() async throws {
        let location = try StoreDriver.postgresLocation()
        let name = "redacted-" + UUID().uuidString
        var flow = FlowFixtures.getJSON()
        flow.request.headers.add("authorization", "Bearer secret-token")
        flow.request.headers.add("X-Api-Key", "key-123")
        flow.response?.trailers = HeaderFields([("Set-Cookie", "late=1")])
        let store = try await PostgresFlowStore.open(location, session: name, recordedBy: "tests")
        store.record(flow)
        var custom = FlowFixtures.getJSON()
        custom.request.headers.add("X-Api-Key", "key-456")
        let other = try await PostgresFlowStore.open(
            location, session: name + "-custom", recordedBy: "tests", redaction: FlowRedaction(headers: ["x-api-key"], marker: "***"))
        other.record(custom)
        try await store.flush()
        try await other.flush()

        let stored = try #require(try await store.flow(id: flow.id))
        let marker = FlowRedaction.defaultMarker
        #expect(stored.request.headers["Authorization"] == marker)
        #expect(stored.request.headers["Cookie"] == marker)
        #expect(stored.response?.headers["Set-Cookie"] == marker)
        #expect(stored.response?.trailers?["Set-Cookie"] == marker)
        #expect(stored.request.headers["X-Api-Key"] == "key-123")
        #expect(stored.request.headers["Accept"] == "application/json")
        let storedCustom = try #require(try await other.flow(id: custom.id))
        #expect(storedCustom.request.headers["X-Api-Key"] == "***")
        #expect(storedCustom.request.headers["Cookie"] == "session=abc; theme=dark")
        await shutDown(store, other)
    }

    /// Text messages carrying JSON are redacted as JSON bodies are, before they are queued.
    @Test func webSocketMessagesAreRedactedBeforeTheyAreWritten() async throws {
        let location = try StoreDriver.postgresLocation()
        let store = try await PostgresFlowStore.open(
            location, session: "ws-redacted-" + UUID().uuidString, recordedBy: "tests", redaction: FlowRedaction(jsonFields: [.name("token")]))
        let flow = FlowFixtures.getJSON()
        store.record(flow)
        let text = #"{"token":"s3cret","room":"ops"}"#
        store.record(messages: [WebSocketMessage(direction: .send, time: Date(), opcode: .text, data: Data(text.utf8), size: text.utf8.count)], of: flow.id)
        try await store.flush()
        let stored = try await store.messages(of: flow.id, offset: 0, limit: nil)
        #expect(stored.count == 1)
        let payload = String(decoding: stored.first?.data ?? Data(), as: UTF8.self)
        #expect(!payload.contains("s3cret"))
        #expect(payload.contains(FlowRedaction.defaultMarker) && payload.contains("ops"))
        #expect(stored.first?.size == text.utf8.count)
        await shutDown(store)
    }

    @Test func aSessionIsNamedAndSaysWhoRecordedItAndWhen() async throws {
        let location = try StoreDriver.postgresLocation()
        let name = "named-" + UUID().uuidString
        let before = Date().addingTimeInterval(-60)
        let store = try await PostgresFlowStore.open(location, session: name, recordedBy: "ada@laptop")
        #expect(store.session.name == name)
        #expect(store.session.recordedBy == "ada@laptop")
        #expect(store.session.createdAt > before && store.session.createdAt < Date().addingTimeInterval(60))
        store.record(FlowFixtures.getJSON())
        try await store.flush()
        // Another session in the same database doesn't see it.
        let other = try await PostgresFlowStore.open(location, session: name + "-other", recordedBy: "grace")
        #expect(try await other.count() == 0)
        try await other.removeAll()
        #expect(try await store.count() == 1)
        await store.close()
        await other.close()
    }

    @Test func urlsAreReadAsLibpqReadsThem() throws {
        let plain = try PostgresLocation(url: "postgres://kagami@127.0.0.1:5433/team", environment: [:])
        #expect(plain.host == "127.0.0.1")
        #expect(plain.port == 5433)
        #expect(plain.user == "kagami")
        #expect(plain.password == nil)
        #expect(plain.database == "team")
        #expect(plain.tlsMode == .prefer)
        #expect(plain.description == "postgres://kagami@127.0.0.1:5433/team")

        let full = try PostgresLocation(url: "postgresql://ada%40corp:p%3Ass@[::1]/sessions?sslmode=verify-full&sslrootcert=/etc/ca.pem", environment: [:])
        #expect(full.host == "::1")
        #expect(full.port == 5432)
        #expect(full.user == "ada@corp")
        #expect(full.password == "p:ss")
        #expect(full.tlsMode == .verifyFull)
        #expect(full.rootCertificatePath == "/etc/ca.pem")
        #expect(!full.description.contains("p:ss"))

        let fromEnvironment = try PostgresLocation(url: "postgres://kagami@db/team", environment: ["PGPASSWORD": "secret"])
        #expect(fromEnvironment.password == "secret")

        for (url, problem) in [
            ("http://kagami@db/team", "is not a postgres://"),
            ("postgres://db/team", "names no user"),
            ("postgres://kagami@db", "names no database"),
            ("postgres://kagami:hunter2@db/team?sslmode=sometimes", "sslmode=sometimes"),
            ("postgres://kagami@db/team?connect_timeout=3", "unknown parameter connect_timeout"),
        ] {
            #expect {
                _ = try PostgresLocation(url: url, environment: [:])
            } throws: { error in
                "\(error)".contains(problem) && !"\(error)".contains("hunter2")
            }
        }
    }
}

/// A spool a store left (killed, or closed while its server was away) is written by the next
/// store that opens the session: every kind of entry, past damaged bytes, and in the format of
/// the release before.
extension PostgresFlowStoreTests {
    @Test func aSpoolLeftWithADamagedRecordIsWrittenPastIt() async throws {
        let location = try StoreDriver.postgresLocation()
        let name = "spool-" + UUID().uuidString
        let directory = temporaryPath("spool")
        let spooled = SpooledSession()
        let damaged = FlowFixtures.postBinary(size: 20_000)
        let entries = [
            SessionEntry(.flow(spooled.first)), SessionEntry(.messages(spooled.messages, flowID: spooled.first.id)),
            SessionEntry(.violations(spooled.violations, flowID: spooled.first.id)), SessionEntry(.flow(damaged)),
            SessionEntry(.note(spooled.note)), SessionEntry(.flow(spooled.last)),
        ]
        var ends: [Int] = []
        let path: String
        do {
            let spool = try SessionSpool.create(in: directory, prefix: SessionSpool.prefix(session: name, location: location))
            for entry in entries {
                try spool.append([entry])
                ends.append(spool.bytes)
            }
            path = spool.path
        }
        // Bytes of the damaged flow's body overwritten, as a disk or a stray write would.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var generator = SeededGenerator(state: 11)
        let at = ends[2] + 5_000
        bytes.replaceSubrange(at..<at + 64, with: (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: URL(fileURLWithPath: path))

        let store = try await PostgresFlowStore.open(location, session: name, recordedBy: "tests", spoolDirectory: directory)
        #expect(try await eventually(attempts: 600, every: .milliseconds(100)) { store.status.spoolFiles.isEmpty })
        await spooled.expectWritten(to: store)
        #expect(!FileManager.default.fileExists(atPath: path), "the spool is removed once written")
        #expect(FileManager.default.contents(atPath: path + "-damaged") == bytes[ends[2]..<ends[3]], "the damaged record alone is set aside")
        await store.close()
    }

    /// Spool files of the release before (a 4-byte length and a JSON document each) wait for the
    /// server across an upgrade, and are written by the new one.
    @Test func aSpoolOfTheFormatBeforeIsWritten() async throws {
        let location = try StoreDriver.postgresLocation()
        let name = "spool-" + UUID().uuidString
        let directory = temporaryPath("spool")
        let spooled = SpooledSession()
        let records = [
            EarlierSpoolRecord(key: spooled.first.id, flow: spooled.first),
            EarlierSpoolRecord(key: UUID(), messages: spooled.messages, flowID: spooled.first.id),
            EarlierSpoolRecord(key: UUID(), violations: spooled.violations, flowID: spooled.first.id),
            EarlierSpoolRecord(key: spooled.note.id, note: spooled.note),
            EarlierSpoolRecord(key: spooled.last.id, flow: spooled.last),
        ]
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .deferredToDate
        var file = Data()
        for record in records {
            let json = try encoder.encode(record)
            withUnsafeBytes(of: UInt32(json.count).bigEndian) { file.append(contentsOf: $0) }
            file.append(json)
        }
        // A record torn by the kill: reading stops there.
        file.append(contentsOf: [0, 0, 1, 0, UInt8(ascii: "{")])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(SessionSpool.prefix(session: name, location: location) + "4242-0123abcd.spool")
        try file.write(to: URL(fileURLWithPath: path))

        let store = try await PostgresFlowStore.open(location, session: name, recordedBy: "tests", spoolDirectory: directory)
        #expect(try await eventually(attempts: 600, every: .milliseconds(100)) { store.status.spoolFiles.isEmpty })
        await spooled.expectWritten(to: store)
        #expect(!FileManager.default.fileExists(atPath: path), "the spool is removed once written")
        await store.close()
    }
}

extension PostgresFlowStoreTests {
    /// A store that fills a spool file goes on in a new one; a later store finds them oldest
    /// first, and never one a running store holds.
    @Test func spoolFilesAreFoundOldestFirstAndNeverWhileHeld() throws {
        let directory = temporaryPath("spool")
        let prefix = SessionSpool.prefix(session: "order", location: try PostgresLocation(url: "postgres://kagami@127.0.0.1:5432/kagami"))
        let flows = (0..<3).map { FlowFixtures.getJSON(url: "/\($0)") }
        var paths: [String] = []
        do {
            var spools: [SessionSpool] = []
            for flow in flows {
                let spool = try SessionSpool.create(in: directory, prefix: prefix)
                try spool.append([SessionEntry(.flow(flow))])
                spools.append(spool)
                paths.append(spool.path)
            }
            #expect(SessionSpool.leftovers(in: directory, prefix: prefix).isEmpty, "every file is held by the store writing it")
            #expect(SessionSpool.leftovers(in: directory, prefix: "other-").isEmpty)
        }
        let found = SessionSpool.leftovers(in: directory, prefix: prefix)
        #expect(found.map(\.path) == paths)
        #expect(found.map { $0.entries().entries.map(\.key) } == flows.map { [$0.id] })
        #expect(SessionSpool.leftovers(in: directory, prefix: prefix).isEmpty, "the files found are held by whoever found them")
    }
}

extension PostgresFlowStoreTests {
    /// A store that finds spools left behind while its server is still away keeps new entries
    /// in a file of its own, after them.
    @Test func entriesSpooledWhileLeftoversWaitGoToANewFile() async throws {
        let directory = temporaryPath("spool")
        let location = try PostgresLocation(url: "postgres://kagami@127.0.0.1:9/kagami")
        let prefix = SessionSpool.prefix(session: "away", location: location)
        let left = FlowFixtures.getJSON(url: "/left")
        let leftPath: String
        do {
            let spool = try SessionSpool.create(in: directory, prefix: prefix)
            try spool.append([SessionEntry(.flow(left))])
            leftPath = spool.path
        }
        let driver = PostgresSessionDriver(
            location: location, session: PostgresFlowStore.Session(name: "away", recordedBy: "tests", createdAt: Date()), sessionID: 1,
            spoolDirectory: directory, maximumSpoolBytes: 1 << 30, writeTimeout: .seconds(1),
            limits: SessionWriter.Limits(pendingBodyBytes: 1 << 20, pendingEntries: 100, pendingMessages: 100, batch: 100),
            leftovers: SessionSpool.leftovers(in: directory, prefix: prefix))
        let later = FlowFixtures.getJSON(url: "/later")
        #expect(driver.keepWhileAway([SessionEntry(.flow(later))]))
        let files = driver.spooled.files
        #expect(files.count == 2)
        #expect(files.first == leftPath)
        await driver.close()
        let found = SessionSpool.leftovers(in: directory, prefix: prefix)
        #expect(found.map { $0.entries().entries.map(\.key) } == [[left.id], [later.id]])
    }
}

/// What the spool tests keep while the server is away: two flows, WebSocket messages with binary
/// payloads and contract violations of the first, and a note.
private struct SpooledSession {
    let first = FlowFixtures.webSocket()
    let last = FlowFixtures.postBinary(size: 70_000)
    let messages: [WebSocketMessage]
    let violations = [
        ContractViolation(kind: .schema, side: .response, location: .body, instancePointer: "/id", keyword: "type",
                          expected: "integer", actual: "\"7\"", message: "/id is not an integer"),
        ContractViolation(kind: .missing, severity: .warning, side: .request, location: .header, name: "x-trace", message: "x-trace is missing"),
    ]
    let note = SessionNote(time: Date(timeIntervalSince1970: 1_780_000_100.5), author: "tests", text: "spooled ✓")

    init() {
        var generator = SeededGenerator(state: 5)
        messages = (0..<12).map { index in
            let data = index.isMultiple(of: 3)
                ? Data("text \(index) ✓".utf8) : Data((0..<(index * 97)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            return WebSocketMessage(
                direction: index.isMultiple(of: 2) ? .send : .receive, time: Date(timeIntervalSince1970: 1_780_000_003.25 + Double(index)),
                opcode: index.isMultiple(of: 3) ? .text : .binary, data: data, size: data.count, isCompressed: index == 4)
        }
    }

    /// Failures are recorded, not thrown: the store is closed whatever they are.
    func expectWritten(to store: PostgresFlowStore) async {
        var first = self.first
        first.violations = violations
        do {
            #expect(try await store.allFlows() == [first, last])
            #expect(try await store.messages(of: first.id) == messages)
            #expect(try await store.notes() == [note])
        } catch {
            Issue.record(error)
        }
    }
}

/// A record of the spool format before the journal's, as that release wrote it.
private struct EarlierSpoolRecord: Encodable {
    var key: UUID
    var flow: Flow?
    var messages: [WebSocketMessage]?
    var violations: [ContractViolation]?
    var flowID: UUID?
    var note: SessionNote?
}

/// A database of its own for a test that needs an empty one, dropped afterwards.
private func withFreshDatabase(_ body: (PostgresLocation, PostgresClient) async throws -> Void) async throws {
    let server = try StoreDriver.postgresLocation()
    let name = "kagami_fresh_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    var location = server
    location.database = name
    let admin = PostgresClient(configuration: .init(host: server.host, port: server.port, username: server.user, password: server.password, database: server.database, tls: .disable))
    let fresh = PostgresClient(configuration: .init(host: server.host, port: server.port, username: server.user, password: server.password, database: name, tls: .disable))
    let adminRun = Task { await admin.run() }
    defer { adminRun.cancel() }
    try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
    let freshRun = Task { await fresh.run() }
    let outcome: Result<Void, any Error>
    do {
        try await body(location, fresh)
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    freshRun.cancel()
    await freshRun.value
    try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"))
    try outcome.get()
}

private func column<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: Value.Type, on client: PostgresClient) async throws -> [Value] {
    var values: [Value] = []
    for try await value in try await client.query(query).decode(Value.self) { values.append(value) }
    return values
}
