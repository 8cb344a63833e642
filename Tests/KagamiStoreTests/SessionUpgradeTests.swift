import Foundation
import GRDB
import KagamiFlow
import KagamiStore
import KagamiTesting
import Testing

/// A session file written by an earlier Kagami opens with everything in it, in today's shape.
@Suite("Session files of earlier versions")
struct SessionUpgradeTests {
    /// Sessions used to index every flow's `repeatOf`, mostly empty; now only repeats are in the
    /// index, and a session from before still finds its repeats through it.
    @Test func aSessionIndexingEveryFlowsRepeatOfKeepsItsRepeats() async throws {
        let path = temporaryPath("session.sqlite")
        let original = FlowFixtures.getJSON()
        var repeated = FlowFixtures.getJSON()
        repeated.id = UUID()
        repeated.repeatOf = original.id
        do {
            let store = try SQLiteFlowStore(path: path)
            store.record(original)
            store.record(repeated)
            try await store.flush()
        }
        do {
            // What the earlier version left: the index over every row, and no record of the change.
            let file = try DatabaseQueue(path: path)
            try await file.write { db in
                try db.execute(sql: """
                    DROP INDEX flow_repeatOf;
                    CREATE INDEX flow_repeatOf ON flow(repeatOf);
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v7:%';
                    """)
            }
        }

        let store = try SQLiteFlowStore(path: path)
        #expect(try await store.repeats(of: original.id).map(\.id) == [repeated.id])
        #expect(try await store.repeats(of: repeated.id).isEmpty)

        let file = try DatabaseQueue(path: path)
        let (index, plan) = try await file.read { db in
            (try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'flow_repeatOf'"),
             try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT seq FROM flow WHERE repeatOf = ?", arguments: [original.id.uuidString])
                .map { $0["detail"] as String })
        }
        #expect(index?.contains("WHERE \"repeatOf\" IS NOT NULL") == true, "\(index ?? "no index")")
        #expect(plan.contains { $0.contains("INDEX flow_repeatOf") }, "\(plan)")
    }
}
