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
        var whole = 0, cut = 0
        do {
            // The session exists with the first flow committed; the journal holds all three
            // (the first one again, as it would after its commit, before the journal emptied).
            let store = try SQLiteFlowStore(path: path)
            store.record(flows[0])
            try await store.flush()
        }
        do {
            let journal = try SessionJournal(path: path + "-flows")
            for flow in flows { #expect(journal.append(flow)) }
            // A record cut short at the end (the machine lost power mid-write) is left out, and
            // set aside.
            whole = try #require(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int)
            #expect(journal.append(FlowFixtures.getJSON(body: "{\"cut\":true}")))
            let end = try #require(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int)
            cut = whole + (end - whole) / 2
            #expect(truncate(path + "-flows", off_t(cut)) == 0)
        }

        let reopened = try SQLiteFlowStore(path: path, warn: { _ in })
        #expect(try await reopened.allFlows() == flows)
        #expect(reopened.journalDamage?.parts == [JournalDamage.Part(bytes: whole..<cut, records: 1)])
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int == 0)
    }

    /// Journaled flows gather a moment before the writer commits them, without holding the
    /// store: one let go meanwhile closes its session (at once, or when a transaction under way
    /// ends), and the next opening finds every flow, from the journal as after a crash or from
    /// SQLite.
    @Test func aStoreLetGoWhileFlowsGatherLosesNone() async throws {
        let path = temporaryPath("session.sqlite")
        let flows = (0..<50).map { index in
            index % 10 == 0 ? FlowFixtures.postBinary(size: 40_000 + index) : FlowFixtures.getJSON(body: "{\"n\":\(index)}")
        }
        do {
            let store = try SQLiteFlowStore(path: path)
            for flow in flows { store.record(flow) {} }
        }
        let reopened = try SQLiteFlowStore(path: path)
        #expect(try await reopened.allFlows() == flows)
        try await reopened.flush()
        let journal = try? FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int
        #expect(journal == nil || journal == 0, "what is in SQLite is not left in the journal")
    }

    /// `stored` runs as the flow goes into the journal, before SQLite has it: at that moment the
    /// files on disk (what the system keeps when the process is killed) already hold it.
    @Test func whenStoredRunsTheFlowSurvivesTheProcess() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        // The writer stops, as if the process died before its next transaction.
        store.writer.suspend()
        // Bodies small and large: those past `SessionBodyLog.threshold` go to the body log.
        let flows = (0..<20).map { index in
            index % 5 == 0 ? FlowFixtures.postBinary(size: 30_000 + index * 3_000) : FlowFixtures.getJSON(body: "{\"n\":\(index)}")
        }
        let stored = Mutex(0)
        for flow in flows { store.record(flow) { stored.withLock { $0 += 1 } } }
        #expect(stored.withLock { $0 } == flows.count, "stored ran for every flow before record returned")

        let logged = flows.flatMap { [$0.request.body.data.count, $0.response?.body.data.count ?? 0] }.filter { $0 >= SessionBodyLog.threshold }
        #expect(logged.count >= 3)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.size] as? Int == logged.reduce(0, +))
        let copy = try filesLeftByAKill(of: path)
        let afterKill = try SQLiteFlowStore(path: copy)
        #expect(try await afterKill.allFlows() == flows)

        store.writer.resume()
        try await store.flush()
        #expect(try await store.allFlows() == flows)
        // Everything journaled is committed: nothing in the journal is to replay.
        #expect(SessionJournal.records(at: path + "-flows").isEmpty)
    }

    /// Once every journaled flow is committed the journal starts over, writing over its old
    /// records rather than cutting the file (which waits for the disk). A process killed after
    /// that replays what came since, and none of the flows committed before: the session may
    /// have cleared or replaced them meanwhile. Here the records are the same length, so the
    /// new one ends where an old one begins.
    @Test func aJournalThatStartedOverReplaysOnlyWhatCameSince() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        let before = (0..<30).map { FlowFixtures.getJSON(body: "{\"n\":\($0 % 10)}") }
        for flow in before { store.record(flow) {} }
        try await store.flush()
        try await store.removeAll()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int)
        #expect(size > SessionJournal.headerSize + 30 * 48, "the old records are still in the file")
        #expect(SessionJournal.records(at: path + "-flows").isEmpty)

        // The writer stops, as if the process died before its next transaction.
        store.writer.suspend()
        let since = FlowFixtures.getJSON(body: "{\"n\":7}")
        store.record(since) {}
        let copy = try filesLeftByAKill(of: path)
        let records = SessionJournal.records(at: copy + "-flows")
        #expect(records.count == 1)
        let afterKill = try SQLiteFlowStore(path: copy)
        #expect(try await afterKill.allFlows() == [since])

        store.writer.resume()
        try await store.flush()
        #expect(try await store.allFlows() == [since])
    }

    /// A store let go with every flow committed takes its journal with it.
    @Test func aStoreWithEverythingCommittedLeavesNoJournal() async throws {
        let path = temporaryPath("session.sqlite")
        do {
            let store = try SQLiteFlowStore(path: path)
            store.record(FlowFixtures.getJSON()) {}
            try await store.flush()
            #expect(FileManager.default.fileExists(atPath: path + "-flows"))
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-flows"))
    }

    /// Another process opening a session that is being recorded reads it; it does not replay
    /// (or empty) the recording process's journal.
    @Test func aSecondOpeningLeavesTheJournalToItsOwner() async throws {
        let path = temporaryPath("session.sqlite")
        let writer = try SQLiteFlowStore(path: path)
        writer.writer.suspend()
        let flow = FlowFixtures.getJSON()
        writer.record(flow) {}
        let reader = try SQLiteFlowStore(path: path)
        #expect(try await reader.count() == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int ?? 0 > 0)
        writer.writer.resume()
        try await writer.flush()
        #expect(try await reader.allFlows() == [flow])
    }

    /// A large body is written once, to the body log beside the session (its owner's alone),
    /// and read back from there; clearing the session empties the log.
    @Test func largeBodiesLiveInTheBodyLog() async throws {
        let path = temporaryPath("session.sqlite")
        let store = try SQLiteFlowStore(path: path)
        var large = FlowFixtures.postBinary(size: 200_000)
        large.response?.body = FlowBody(data: Data(repeating: 7, count: 100_000))
        let small = FlowFixtures.postBinary(size: 1_000)
        store.record(large) {}
        store.record(small)
        try await store.flush()
        #expect(try await store.flow(id: large.id) == large)
        #expect(try await store.flow(id: small.id) == small)
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "-bodies")
        #expect(attributes[.size] as? Int == 300_000)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // Summaries leave bodies out, sizes in.
        let summary = try #require(try await store.flows(offset: 0, limit: 1, includeBodies: false).first)
        #expect(summary.request.body.data.isEmpty && summary.request.body.size == 200_000 && !summary.request.body.isTruncated)

        // Another process reads the bodies from the log too.
        let reader = try SQLiteFlowStore(path: path)
        #expect(try await reader.flow(id: large.id) == large)

        try await store.removeAll()
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.size] as? Int == 0)
        store.record(large)
        try await store.flush()
        #expect(try await store.allFlows() == [large])
    }

    /// Event loops append to the body log at once, each writing at the place it took: every
    /// body lands whole where its row says, and a later opening appends after them all.
    @Test func bodiesAppendedAtOnceEachLandWhole() async throws {
        let path = temporaryPath("session.sqlite")
        let flows: [Flow] = (0..<160).map { index in
            var flow = FlowFixtures.postBinary(size: 16_384 + index * 257)
            flow.response?.body = FlowBody(data: Data(repeating: UInt8(index), count: 4_096 + index))
            return flow
        }
        let logged = flows.reduce(0) { $0 + $1.request.body.data.count + ($1.response?.body.data.count ?? 0) }
        do {
            let store = try SQLiteFlowStore(path: path)
            DispatchQueue.concurrentPerform(iterations: flows.count) { store.record(flows[$0]) {} }
            try await store.flush()
            for flow in flows { #expect(try await store.flow(id: flow.id) == flow) }
            #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.size] as? Int == logged)
        }
        let store = try SQLiteFlowStore(path: path)
        let later = FlowFixtures.postBinary(size: 50_000)
        store.record(later) {}
        try await store.flush()
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.size] as? Int == logged + 100_000)
        #expect(try await store.flow(id: later.id) == later)
        for flow in flows { #expect(try await store.flow(id: flow.id) == flow) }
    }

    /// A body held in many parts (as the proxy keeps one read in large buffers) is written to
    /// the body log as it is, more parts than one system call takes (64), and read back whole.
    @Test func aBodyOfManyPartsLandsWhole() async throws {
        let path = temporaryPath("session.sqlite")
        var flow = FlowFixtures.postBinary(size: 10)
        var body = FlowBody()
        var whole = Data()
        for index in 0..<135 {
            let part = Data(repeating: UInt8(truncatingIfNeeded: index), count: 1_000 + index)
            body.append(part)
            whole.append(part)
        }
        body.size = whole.count
        flow.response?.body = body
        let before = FlowFixtures.postBinary(size: 9_000)
        do {
            let store = try SQLiteFlowStore(path: path)
            store.record(before) {}
            store.record(flow) {}
            try await store.flush()
            #expect(try await store.flow(id: flow.id)?.response?.body.data == whole)
        }
        let reopened = try SQLiteFlowStore(path: path)
        #expect(try await reopened.allFlows() == [before, flow])
        let logged = [before.request.body, before.response?.body ?? FlowBody(), flow.request.body].map(\.keptCount).filter { $0 >= SessionBodyLog.threshold }.reduce(0, +)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.size] as? Int == logged + whole.count)
    }

    /// The body log is handed to the disk as it grows: a range written out is let go of from
    /// the page cache one step later, so capturing gigabytes neither fills memory with dirty
    /// pages nor pushes out everything else cached.
    #if os(Linux)
    @Test func theBodyLogLetsGoOfPagesWrittenOut() throws {
        // In the package's build folder: the system's temporary folder may be a tmpfs, whose
        // pages are the file itself.
        let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/kagami-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("session.sqlite-bodies").path
        let log = SessionBodyLog(path: path)
        let step = Int(SessionBodyLog.passedOn)
        let body = FlowBody(data: Data(repeating: 0x5A, count: step / 4))
        for _ in 0..<12 { #expect(log.append([body]) != nil) }
        // Everything so far is written out (clean): the next step lets go of it.
        let reader = open(path, O_RDONLY)
        defer { close(reader) }
        #expect(fsync(reader) == 0)
        for _ in 0..<4 { #expect(log.append([body]) != nil) }
        log.waitForPassing()

        let length = 4 * step
        let mapping = try #require(mmap(nil, length, PROT_READ, MAP_SHARED, reader, 0))
        defer { munmap(mapping, length) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var resident = [UInt8](repeating: 0, count: length / pageSize)
        #expect(mincore(mapping, length, &resident) == 0)
        func residentPages(_ range: Range<Int>) -> Int { resident[range.lowerBound / pageSize..<range.upperBound / pageSize].filter { $0 & 1 != 0 }.count }
        #expect(residentPages(step..<3 * step) == 0, "written out a step ago: let go of")
        #expect(residentPages(3 * step..<4 * step) > 0, "the last step, whose writes may be under way, stays")
    }

    /// Space is set aside on the disk past the body log's end ahead of its appends, its size
    /// staying what was written; letting the log go gives the space back. A process killed
    /// (here: a log never let go of) leaves one step, which the next one sets aside over.
    @Test func theBodyLogSetsSpaceAsideAndGivesItBack() throws {
        // In the package's build folder, on the disk the sessions' folder would be on.
        let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/kagami-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("session.sqlite-bodies").path
        func sizes() -> (size: Int64, allocated: Int64) {
            var status = stat()
            #expect(stat(path, &status) == 0)
            return (Int64(status.st_size), Int64(status.st_blocks) * 512)
        }
        let body = FlowBody(data: Data(repeating: 0x5A, count: 100_000))
        do {
            let log = SessionBodyLog(path: path)
            #expect(log.append([body]) != nil)
            log.waitForPassing()
            #expect(sizes().size == 100_000)
            #expect(sizes().allocated >= SessionBodyLog.setAside, "space set aside past the end")
        }
        #expect(sizes().size == 100_000)
        #expect(sizes().allocated < 200_000, "given back when the log is let go of")

        let killed = SessionBodyLog(path: path)
        #expect(killed.append([body]) != nil)
        killed.waitForPassing()
        _ = Unmanaged.passRetained(killed)
        do {
            let next = SessionBodyLog(path: path)
            #expect(next.append([body]) != nil)
            next.waitForPassing()
            #expect(sizes().size == 300_000)
            #expect(sizes().allocated < 300_000 + SessionBodyLog.setAside + 200_000, "one step set aside, over the one left")
            #expect(try next.read(SessionBodyLog.Place(offset: 200_000, length: 100_000, checksum: nil)) == body.data)
            next.giveBackSpaceSetAside()
            #expect(sizes().allocated < 400_000, "given back when asked, the log still open")
            #expect(next.append([body]) != nil, "and appends go on")
            next.waitForPassing()
            #expect(sizes().size == 400_000)
        }
        #expect(sizes().allocated < 500_000)
    }

    /// A session closing (its proxy stopping) gives back its body log's space, whether or not
    /// the process goes on to let the store go.
    @Test func aClosedSessionHoldsNoSpaceSetAside() async throws {
        let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/kagami-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("session.sqlite").path
        func allocated() -> Int64 {
            var status = stat()
            #expect(stat(path + "-bodies", &status) == 0)
            return Int64(status.st_blocks) * 512
        }
        let store = try SQLiteFlowStore(path: path)
        let flow = FlowFixtures.postBinary(size: 100_000)
        store.record(flow) {}
        try await store.flush()
        store.writer.bodyLog?.waitForPassing()
        #expect(allocated() >= SessionBodyLog.setAside)
        await store.close()
        #expect(allocated() < 300_000)
        #expect(try await store.allFlows() == [flow])
    }
    #endif

    /// A journal of the second format (records each beginning `KGJ2`, large bodies in the body
    /// log), as an earlier Kagami left it, is replayed as well.
    @Test func aJournalOfTheSecondFormatIsReplayed() async throws {
        let path = temporaryPath("session.sqlite")
        let small = FlowFixtures.getJSON()
        let large = FlowFixtures.postBinary(size: 50_000)
        let logged = large.request.body.data
        #expect(FileManager.default.createFile(atPath: path + "-bodies", contents: Data(repeating: 0, count: 100) + logged))
        var journal = Data()
        func add(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { journal.append(contentsOf: $0) } }
        for (flow, place) in [(small, nil), (large, UInt64(100))] as [(Flow, UInt64?)] {
            let metadata = try flow.olderStoredJSON()
            let response = flow.response?.body.data ?? Data()
            journal.append(contentsOf: SessionJournal.secondMagic)
            add(UInt64(metadata.count))
            add(UInt64(flow.request.body.data.count))
            add(UInt64(response.count))
            add(place ?? UInt64.max)
            add(UInt64.max)
            journal.append(metadata)
            if place == nil { journal.append(flow.request.body.data) }
            journal.append(response)
        }
        #expect(FileManager.default.createFile(atPath: path + "-flows", contents: journal))
        let store = try SQLiteFlowStore(path: path)
        #expect(try await store.allFlows() == [small, large])
    }

    /// A journal written by an earlier Kagami (records of the first format, every body in the
    /// record) is replayed as well.
    @Test func aJournalOfTheFirstFormatIsReplayed() async throws {
        let path = temporaryPath("session.sqlite")
        let flow = FlowFixtures.postBinary(size: 50_000)
        var record = Data(SessionJournal.firstMagic)
        let parts = [try flow.olderStoredJSON(), flow.request.body.data, flow.response?.body.data ?? Data()]
        for part in parts { withUnsafeBytes(of: UInt64(part.count).bigEndian) { record.append(contentsOf: $0) } }
        for part in parts { record.append(part) }
        #expect(FileManager.default.createFile(atPath: path + "-flows", contents: record))
        let store = try SQLiteFlowStore(path: path)
        #expect(try await store.allFlows() == [flow])
    }
}

/// What a killed process leaves: copies of the session's files as they are now. Returns the
/// copied session's path.
func filesLeftByAKill(of path: String) throws -> String {
    let copy = temporaryPath("copy.sqlite")
    for suffix in ["", "-wal", "-shm", "-flows", "-bodies"] where FileManager.default.fileExists(atPath: path + suffix) {
        try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
    }
    return copy
}

extension SessionJournal {
    /// Journals a flow as the store does for a flow without large bodies.
    func append(_ flow: Flow) -> Bool {
        append(metadata: flow.storedRecord(), request: .inline(flow.request.body.data), response: .inline(flow.response?.body.data ?? Data()))
    }
}
