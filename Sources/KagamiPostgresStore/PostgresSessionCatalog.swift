import Foundation
import KagamiFlow
import KagamiStore
import Logging
import PostgresNIO
import Synchronization

/// The sessions of a shared PostgreSQL store, for `kagami serve`: listed with who recorded
/// them, when, and how many exchanges they hold; opened by name; followed live through the
/// `NOTIFY` each writer sends in the transaction that commits its flows.
public final class PostgresSessionCatalog: SessionCatalog {
    public let location: PostgresLocation
    let client: PostgresClient
    private let running: Task<Void, Never>
    private let names = Mutex<[Int64: String]>([:])
    var logger: Logger { PostgresFlowStore.logger }

    /// The channel writers notify on; the payload is `SESSION-ID FLOW-ID,FLOW-ID,…`.
    static let channel = "kagami_flows"

    private init(location: PostgresLocation, client: PostgresClient, running: Task<Void, Never>) {
        self.location = location
        self.client = client
        self.running = running
    }

    deinit {
        running.cancel()
    }

    /// Connects and brings the tables up to date (a new database lists no sessions).
    public static func open(_ location: PostgresLocation) async throws -> PostgresSessionCatalog {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: PostgresFlowStore.logger)
            do {
                try await PostgresSchema.migrate(connection, logger: PostgresFlowStore.logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw FlowStoreError("cannot open the sessions at \(location): \(PostgresFlowStore.describe(error))")
        }
        let client = PostgresClient(configuration: location.clientConfiguration(maximumConnections: 4))
        return PostgresSessionCatalog(location: location, client: client, running: Task { await client.run() })
    }

    public var description: String { location.description }

    public func close() async {
        running.cancel()
        await running.value
    }

    public func sessions() async throws -> [SessionListing] {
        do {
            let rows = try await client.query("""
                SELECT s.id, s.name, s.recorded_by, s.created_at, count(f.seq), max(f.started_at)
                FROM session s LEFT JOIN flow f ON f.session_id = s.id
                GROUP BY s.id ORDER BY s.created_at DESC, s.name
                """, logger: logger)
            var listings: [SessionListing] = []
            var known: [Int64: String] = [:]
            for try await (id, name, recordedBy, createdAt, count, last) in rows.decode((Int64, String, String, Date, Int, Date?).self) {
                known[id] = name
                listings.append(SessionListing(name: name, recordedBy: recordedBy, createdAt: createdAt, flowCount: count, lastFlowAt: last))
            }
            names.withLock { $0.merge(known) { $1 } }
            return listings
        } catch {
            throw FlowStoreError("could not list the sessions at \(location): \(PostgresFlowStore.describe(error))")
        }
    }

    public func open(session name: String) async throws -> (any FlowStore)? {
        try await PostgresFlowStore.openExisting(location, session: name)
    }

    /// Follows the writers' notifications on a connection of its own, reconnecting (with
    /// backoff) when it is lost, saying `interrupted` once when it is and `resumed` once it
    /// listens again; ends when the stream's consumer goes away.
    public func writerActivity() -> AsyncStream<WriterActivity> {
        let (stream, continuation) = AsyncStream<WriterActivity>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        let task = Task {
            var attempts = 0
            var listened = false
            var interrupted = false
            while !Task.isCancelled {
                var reason = "the connection ended"
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: try location.connectionConfiguration(), id: 2, logger: logger)
                    attempts = 0
                    defer { Task { try? await connection.close() } }
                    let notifications = try await connection.listen(Self.channel)
                    if listened && interrupted { continuation.yield(.resumed) }
                    listened = true
                    interrupted = false
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await notification in notifications {
                                guard let committed = await self.committed(notification.payload) else { continue }
                                continuation.yield(.committed(committed))
                            }
                        }
                        // A connection that is gone without its notifications ending (a server
                        // stopped mid-read) is noticed here, so following starts again.
                        group.addTask {
                            while !connection.isClosed { try await Task.sleep(for: .seconds(1)) }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                } catch {
                    attempts += 1
                    reason = PostgresFlowStore.describe(error)
                }
                if listened && !interrupted && !Task.isCancelled {
                    interrupted = true
                    continuation.yield(.interrupted(reason))
                }
                try? await Task.sleep(for: SessionWriter.backoff(max(attempts, 1)))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// `SESSION-ID FLOW-ID,…` with the session's name looked up (once per session).
    private func committed(_ payload: String) async -> CommittedFlows? {
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let id = Int64(parts[0]) else { return nil }
        let flowIDs = parts[1].split(separator: ",").compactMap { UUID(uuidString: String($0)) }
        var name = names.withLock { $0[id] }
        if name == nil {
            do {
                let rows = try await client.query("SELECT name FROM session WHERE id = \(id)", logger: logger)
                for try await found in rows.decode(String.self) { name = found }
            } catch {
                return nil
            }
            if let name { names.withLock { $0[id] = name } }
        }
        guard let name else { return nil }
        return CommittedFlows(session: name, flowIDs: flowIDs)
    }
}
