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

    /// Sessions kept each flow's metadata as JSON and every body in the body table; they read
    /// as they did, and take new flows in today's form beside the old ones.
    @Test func aSessionOfJSONMetadataAndBodyRowsReadsAsItDid() async throws {
        let path = temporaryPath("session.sqlite")
        let older = [fullyPopulatedFlow(), FlowFixtures.getJSON(body: "{\"n\":1}"), FlowFixtures.postBinary(size: 300)]
        do {
            let store = try SQLiteFlowStore(path: path)
            for flow in older { store.record(flow) }
            try await store.flush()
        }
        do {
            // What the earlier version left: JSON metadata, small bodies as rows, no smallBodies column.
            let file = try DatabaseQueue(path: path)
            try await file.write { db in
                for flow in older {
                    let id = flow.id.canonicalText
                    try db.execute(sql: "UPDATE flow SET metadata = ? WHERE id = ?", arguments: [try flow.olderStoredJSON(), id])
                    for (part, body) in [("request", flow.request.body), ("response", flow.response?.body)] {
                        guard let body, body.keptCount > 0 else { continue }
                        try db.execute(sql: "INSERT INTO body (flowId, part, data) VALUES (?, ?, ?)", arguments: [id, part, body.data])
                    }
                }
                try db.execute(sql: """
                    DROP TRIGGER flowCount_insert;
                    DROP TRIGGER flowCount_delete;
                    DROP TABLE flowCount;
                    DROP TRIGGER flow_text_delete;
                    DROP TRIGGER flow_text_update;
                    DROP TABLE flow_text;
                    DROP TABLE flowTextProgress;
                    DROP VIEW flow_words;
                    ALTER TABLE flow DROP COLUMN smallBodies;
                    DELETE FROM grdb_migrations
                    WHERE identifier LIKE 'v11:%' OR identifier LIKE 'v12:%' OR identifier LIKE 'v13:%' OR identifier LIKE 'v14:%';
                    """)
            }
        }
        let store = try SQLiteFlowStore(path: path, filterWindow: 1)
        #expect(try await store.allFlows() == older)
        #expect(try await store.count() == older.count)
        let newer = FlowFixtures.getJSON(body: "{\"n\":2}")
        store.record(newer)
        try await store.flush()
        #expect(try await store.allFlows() == older + [newer])
        #expect(try await store.count() == older.count + 1)
        // The text index was built from the rows already there when it came; the newer flow
        // waits past its end.
        #expect(try await store.textIndexEnd() == 3)
        #expect(try await store.flows(FlowQuery(filter: FlowFilter(parsing: "upload.example"), limit: 10)).flows.map(\.id) == [older[2].id])
        let file = try DatabaseQueue(path: path)
        let (first, last) = try await file.read { db in
            (try Data.fetchOne(db, sql: "SELECT metadata FROM flow ORDER BY seq LIMIT 1"),
             try Data.fetchOne(db, sql: "SELECT metadata FROM flow ORDER BY seq DESC LIMIT 1"))
        }
        #expect(first?.first == UInt8(ascii: "{"))
        #expect(last?.first == 0)
    }

    /// A body of up to 512 bytes is kept in its flow's row, a larger one in the body table; a
    /// flow recorded again takes its new bodies in the same places.
    @Test func smallBodiesAreKeptInTheirFlowsRow() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        var small = FlowFixtures.postBinary(size: 512)
        let large = FlowFixtures.postBinary(size: 513)
        var empty = FlowFixtures.refused()
        empty.response?.body = FlowBody()
        for flow in [small, large, empty] { store.record(flow) }
        try await store.flush()
        #expect(try await store.allFlows() == [small, large, empty])
        let file = try DatabaseQueue(path: path)
        func places() async throws -> [String] {
            try await file.read { db in
                try String.fetchAll(db, sql: """
                    SELECT flow.id || ' ' || (smallBodies IS NOT NULL) || ' ' || count(body.flowId)
                    FROM flow LEFT JOIN body ON body.flowId = flow.id GROUP BY flow.id ORDER BY flow.seq
                    """)
            }
        }
        let id = { (flow: Flow) in flow.id.canonicalText }
        let before = try await places()
        #expect(before == ["\(id(small)) 1 0", "\(id(large)) 0 2", "\(id(empty)) 0 0"], "\(before)")
        small.request.body.data = Data(repeating: 7, count: 2_000)
        store.record(small)
        try await store.flush()
        #expect(try await store.flow(id: small.id) == small)
        let after = try await places()
        #expect(after == ["\(id(small)) 1 1", "\(id(large)) 0 2", "\(id(empty)) 0 0"], "\(after)")
    }
}
