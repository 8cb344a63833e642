import Foundation
import GRDB
import KagamiFlow
import KagamiOutput

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A session as one file to mail or attach: a session file with every body and message in it
/// and nothing beside it, written from any store (a session file being recorded into, a shared
/// store). `kagami flows`, `export` and `import` read it as they read any session file.
public enum SessionPack {
    /// Writes the flows of `store` (those of `ids` when given, at most `limit`) into a new
    /// single-file session at `path`, returning how many. The file appears complete or not at
    /// all: a failure leaves an existing file at `path` as it was. A `path` that is there but is
    /// not a regular file (`/dev/null`, a pipe) is refused.
    public static func write(to path: String, from store: any FlowStore, ids: [UUID]? = nil, limit: Int? = nil) async throws -> Int {
        let output = OutputFile(path)
        if output.isInPlace {
            // SQLite writes a new file; a device or a pipe can't be one.
            throw FlowStoreError("\(path) is not a regular file: a session is written as a file of its own")
        }
        let scratch = (NSTemporaryDirectory() as NSString).appendingPathComponent("kagami-pack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let pack = try SQLiteFlowStore(path: (scratch as NSString).appendingPathComponent("session.sqlite"), keepsJournal: false)
        var count = 0
        func add(_ flows: [Flow]) async throws {
            let messages = try await store.webSocketMessages(of: flows)
            for flow in flows {
                pack.record(flow)
                if let kept = messages[flow.id], !kept.isEmpty { pack.record(messages: kept, of: flow.id) }
                count += 1
            }
        }
        if let ids {
            for id in ids.prefix(limit ?? ids.count) {
                guard let flow = try await store.flow(id: id) else { throw FlowStoreError("no exchange \(id.uuidString) in the session") }
                try await add([flow])
            }
        } else {
            try await store.forEachFlow(includeBodies: true, limit: limit) { try await add($0) }
        }
        for note in try await store.notes() { pack.record(.note(note)) }
        try await pack.flush()
        // A copy of the whole as one consistent file, compacted, with no WAL beside it.
        do {
            try await pack.vacuum(into: output.writingPath)
            chmod(output.writingPath, 0o600)
            try output.commit()
        } catch {
            throw FlowStoreError("cannot write \(path): \(error)")
        }
        return count
    }
}

extension SQLiteFlowStore {
    /// The session as one consistent, compacted file at `path` (SQLite's `VACUUM INTO`).
    func vacuum(into path: String) async throws {
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM INTO ?", arguments: [path])
        }
    }
}
