import Foundation
import KagamiFlow
@testable import KagamiStore
import KagamiTesting
import Synchronization
import Testing

/// A finished exchange goes into the session's journal before its client sees the end, so a
/// killed process loses none; the next opening of the session replays it.
@Suite("Session journal")
struct SessionJournalTests {
    /// What a process killed with exchanges journaled but not committed leaves behind: the
    /// journal alone. Opening the session puts them in, bodies and all, and empties it.
    @Test func aJournalLeftByAKilledProcessIsReplayedOnOpening() async throws {
        let path = temporaryPath("session.sqlite")
        let flows = [FlowFixtures.getJSON(), FlowFixtures.postBinary(size: 70_000), FlowFixtures.refused()]
        do {
            // The session exists with the first flow committed; the journal holds all three
            // (the first one again, as it would after its commit, before the journal emptied).
            let store = try SQLiteFlowStore(path: path)
            store.record(flows[0])
            try await store.flush()
        }
        do {
            let journal = try SessionJournal(path: path + "-flows")
            for flow in flows { #expect(journal.append(metadata: flow.storedJSON(), of: flow)) }
        }
        // A record cut short at the end (the machine lost power mid-write) is left out.
        let handle = try #require(FileHandle(forWritingAtPath: path + "-flows"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(SessionJournal.magic + [0, 0, 0, 0, 0, 0, 1]))
        try handle.close()

        let reopened = try SQLiteFlowStore(path: path)
        #expect(try await reopened.allFlows() == flows)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int == 0)
    }

    /// `stored` runs as the flow goes into the journal, before SQLite has it: at that moment the
    /// files on disk (what the system keeps when the process is killed) already hold it.
    @Test func whenStoredRunsTheFlowSurvivesTheProcess() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        // The writer stops, as if the process died before its next transaction.
        store.writeQueue.suspend()
        let flows = (0..<20).map { index in index % 5 == 0 ? FlowFixtures.postBinary(size: 30_000 + index) : FlowFixtures.getJSON(body: "{\"n\":\(index)}") }
        let stored = Mutex(0)
        for flow in flows { store.record(flow) { stored.withLock { $0 += 1 } } }
        #expect(stored.withLock { $0 } == flows.count, "stored ran for every flow before record returned")

        // What a killed process leaves: copies of the session's files as they are now.
        let copy = temporaryPath("copy.sqlite")
        for suffix in ["", "-wal", "-shm", "-flows"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        let afterKill = try SQLiteFlowStore(path: copy)
        #expect(try await afterKill.allFlows() == flows)

        store.writeQueue.resume()
        try await store.flush()
        #expect(try await store.allFlows() == flows)
        // Everything journaled is committed: the journal is empty again.
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int == 0)
    }

    /// Another process opening a session that is being recorded reads it; it does not replay
    /// (or empty) the recording process's journal.
    @Test func aSecondOpeningLeavesTheJournalToItsOwner() async throws {
        let path = temporaryPath("session.sqlite")
        let writer = try SQLiteFlowStore(path: path)
        writer.writeQueue.suspend()
        let flow = FlowFixtures.getJSON()
        writer.record(flow) {}
        let reader = try SQLiteFlowStore(path: path)
        #expect(try await reader.count() == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int ?? 0 > 0)
        writer.writeQueue.resume()
        try await writer.flush()
        #expect(try await reader.allFlows() == [flow])
    }

    @Test func anUnreadableRecordIsNamed() async throws {
        let path = temporaryPath("session.sqlite")
        do {
            let journal = try SessionJournal(path: path + "-flows")
            #expect(journal.append(metadata: Data("{not json".utf8), of: FlowFixtures.getJSON()))
        }
        #expect {
            _ = try SQLiteFlowStore(path: path)
        } throws: { error in
            "\(error)".contains("record 1 of the session journal \(path)-flows is unreadable")
        }
    }
}
