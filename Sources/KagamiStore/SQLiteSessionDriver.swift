import Foundation
import GRDB
import KagamiFlow

/// Commits a session writer's batches (`SessionWriter`) into a session file, one SQLite
/// transaction each, in place on the writer's queue. The file is on this machine: it is never away.
struct SQLiteSessionDriver: InPlaceSessionDriver {
    let database: DatabasePool
    let path: String
    /// The session has a text index, which takes flows in chunks (`SQLiteFlowStore.indexText`).
    let indexesText: Bool

    func writeInPlace(_ batch: [SessionEntry]) -> SessionWriteOutcome {
        do {
            try database.write { db in
                for entry in batch {
                    switch entry.item {
                    case .flow(let flow):
                        try SQLiteFlowStore.insert(flow, metadata: entry.metadata, logged: entry.logged, db)
                    case .messages(let messages, let flowID):
                        try SQLiteFlowStore.insert(messages, of: flowID, db)
                    case .violations(let violations, let flowID):
                        try Self.update(violations, of: flowID, db)
                    case .note(let note):
                        try SQLiteFlowStore.insert(note, db)
                    }
                }
                if indexesText { try SQLiteFlowStore.indexText(atLeast: SQLiteFlowStore.textIndexChunk, db) }
            }
            return .written(failure: nil)
        } catch {
            return .written(failure: "could not write \(batch.count) entr\(batch.count == 1 ? "y" : "ies") to \(path): \(error)")
        }
    }

    /// A no-op when the session has no flow with that id.
    private static func update(_ violations: [ContractViolation], of id: UUID, _ db: Database) throws {
        guard let metadata = try Data.fetchOne(db, sql: "SELECT metadata FROM flow WHERE id = ?", arguments: [id.uuidString]) else { return }
        var flow = try Flow(stored: metadata)
        flow.violations = violations
        try db.cachedStatement(sql: "UPDATE flow SET metadata = ? WHERE id = ?").execute(arguments: [flow.storedRecord(), id.uuidString])
    }
}
