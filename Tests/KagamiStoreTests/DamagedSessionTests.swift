import Foundation
import KagamiFlow
@testable import KagamiStore
import KagamiTesting
import Synchronization
import Testing

/// A session's journal or body log damaged after it was written (a disk, a stray write, a copy
/// cut short) costs only what the damage falls on: the session opens, every whole record is
/// replayed, the damaged bytes are set aside in a file of their own and the warning says where
/// they were; a body whose bytes are damaged or missing is read as not available, and says why.
@Suite("Damaged sessions")
struct DamagedSessionTests {
    /// 64 random bytes written somewhere in the middle of a journal of 40 records.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomBytesInTheMiddleCostOnlyTheRecordsTheyFallOn(seed: UInt64) async throws {
        let (path, flows) = try await journalLeftByAKill(count: 40)
        let journal = try Data(contentsOf: URL(fileURLWithPath: path + "-flows"))
        let records = recordExtents(of: journal)
        #expect(records.count == flows.count)
        var generator = SeededGenerator(state: seed)
        let at = Int.random(in: journal.count / 4...journal.count * 3 / 4, using: &generator)
        var damaged = journal
        damaged.replaceSubrange(at..<at + 64, with: (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try damaged.write(to: URL(fileURLWithPath: path + "-flows"))
        let hit = records.indices.filter { records[$0].overlaps(at..<at + 64) }
        let lost = records[hit[0]].lowerBound..<records[hit[hit.count - 1]].upperBound

        let warnings = Warnings()
        let store = try SQLiteFlowStore(path: path, warn: warnings.add)
        #expect(try await store.allFlows() == flows.indices.filter { !hit.contains($0) }.map { flows[$0] })
        let damage = try #require(store.journalDamage)
        #expect(damage.parts.map(\.bytes) == [lost])
        #expect((1...hit.count).contains(damage.damagedRecords), "at least one record, at most those the bytes fell on")
        #expect(damage.replayed == flows.count - hit.count)
        try expectSetAside(damaged[lost], of: path, in: damage)
        #expect(warnings.said == [
            "the session journal \(path)-flows is damaged: at least \(damage.damagedRecords) record\(damage.damagedRecords == 1 ? "" : "s") in \(lost.count) bytes "
                + "(bytes \(lost.lowerBound)-\(lost.upperBound - 1)) set aside in \(path)-flows-damaged; its \(flows.count - hit.count) whole records are "
                + "replayed, the exchanges of the damaged ones are not in the session",
        ])
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-flows")[.size] as? Int == 0, "what was replayed is not replayed again")

        // Later openings still say that the damaged records are set aside.
        let later = Warnings()
        let reopened = try SQLiteFlowStore(path: path, warn: later.add)
        #expect(reopened.journalDamage == nil)
        #expect(later.said == ["\(path)-flows-damaged holds damaged records an earlier opening set aside from this session's journal; the exchanges in them are not in the session"])
        #expect(try await reopened.count() == flows.count - hit.count)
    }

    /// A record whose second half is missing (bytes lost from the middle of the file): the next
    /// record is found where its bytes now begin.
    @Test func aRecordCutShortInTheMiddleCostsOnlyItself() async throws {
        let (path, flows) = try await journalLeftByAKill(count: 10)
        let journal = try Data(contentsOf: URL(fileURLWithPath: path + "-flows"))
        let records = recordExtents(of: journal)
        let middle = records[4].lowerBound + records[4].count / 2
        let cut = journal[..<middle] + journal[records[4].upperBound...]
        try cut.write(to: URL(fileURLWithPath: path + "-flows"))

        let warnings = Warnings()
        let store = try SQLiteFlowStore(path: path, warn: warnings.add)
        #expect(try await store.allFlows() == flows.indices.filter { $0 != 4 }.map { flows[$0] })
        let damage = try #require(store.journalDamage)
        #expect(damage.parts == [JournalDamage.Part(bytes: records[4].lowerBound..<middle, records: 1)])
        try expectSetAside(cut[records[4].lowerBound..<middle], of: path, in: damage)
        #expect(warnings.said.count == 1)
        #expect(warnings.said.first?.contains("at least 1 record in \(middle - records[4].lowerBound) bytes (bytes \(records[4].lowerBound)-\(middle - 1))") == true)
    }

    /// Damage in the first record, right after the header.
    @Test func damageInTheFirstRecordCostsOnlyIt() async throws {
        let (path, flows) = try await journalLeftByAKill(count: 10)
        var journal = try Data(contentsOf: URL(fileURLWithPath: path + "-flows"))
        let records = recordExtents(of: journal)
        #expect(records.first?.lowerBound == SessionJournal.headerSize)
        journal.replaceSubrange(records[0].lowerBound + 3..<records[0].lowerBound + 3 + 64, with: Data(repeating: 0xA5, count: 64))
        try journal.write(to: URL(fileURLWithPath: path + "-flows"))

        let store = try SQLiteFlowStore(path: path, warn: { _ in })
        #expect(try await store.allFlows() == Array(flows.dropFirst()))
        let damage = try #require(store.journalDamage)
        #expect(damage.parts == [JournalDamage.Part(bytes: records[0], records: 1)])
        try expectSetAside(journal[records[0]], of: path, in: damage)
    }

    /// A damaged header: its round's first record says the number, and every record is
    /// replayed; the header alone is set aside.
    @Test func aDamagedHeaderCostsNoRecord() async throws {
        let (path, flows) = try await journalLeftByAKill(count: 5)
        var journal = try Data(contentsOf: URL(fileURLWithPath: path + "-flows"))
        journal.replaceSubrange(2..<10, with: Data(repeating: 0, count: 8))
        try journal.write(to: URL(fileURLWithPath: path + "-flows"))

        let warnings = Warnings()
        let store = try SQLiteFlowStore(path: path, warn: warnings.add)
        #expect(try await store.allFlows() == flows)
        #expect(store.journalDamage?.parts == [JournalDamage.Part(bytes: 0..<SessionJournal.headerSize, records: 0)])
        #expect(warnings.said.first?.hasPrefix("the session journal \(path)-flows is damaged: 20 bytes (bytes 0-19) set aside in \(path)-flows-damaged; its 5 whole records are replayed") == true)
    }

    /// A record whose checksums hold but whose JSON is not a flow is set aside as well.
    @Test func aRecordThatIsNoFlowIsSetAside() async throws {
        let path = temporaryPath("session.sqlite")
        let flows = [FlowFixtures.getJSON(body: "{\"n\":1}"), FlowFixtures.getJSON(body: "{\"n\":2}")]
        do {
            let journal = try SessionJournal(path: path + "-flows")
            #expect(journal.append(flows[0]))
            #expect(journal.append(metadata: Data("{not json".utf8), request: .inline(Data()), response: .inline(Data())))
            #expect(journal.append(flows[1]))
        }
        let journal = try Data(contentsOf: URL(fileURLWithPath: path + "-flows"))
        let records = recordExtents(of: journal)
        let store = try SQLiteFlowStore(path: path, warn: { _ in })
        #expect(try await store.allFlows() == flows)
        let damage = try #require(store.journalDamage)
        #expect(damage.parts == [JournalDamage.Part(bytes: records[1], records: 1)])
        try expectSetAside(journal[records[1]], of: path, in: damage)
    }

    /// Journals of the formats before checksums are read past damage too: a record whose JSON
    /// is not a flow any more, and the next one found by what begins each record (the
    /// header's number in the third format, the record's magic in the second).
    @Test(arguments: [3, 2])
    func aJournalOfAnEarlierFormatIsReadPastDamage(format: Int) async throws {
        let path = temporaryPath("session.sqlite")
        let flows = (1...3).map { FlowFixtures.getJSON(body: "{\"n\":\($0)}") }
        var journal = Data()
        func add(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { journal.append(contentsOf: $0) } }
        let number: UInt64 = 0x0123_4567_89AB_CDEF
        if format == 3 {
            journal.append(contentsOf: SessionJournal.thirdMagic)
            add(number)
        }
        var starts: [Int] = []
        for flow in flows {
            starts.append(journal.count)
            if format == 3 { add(number) } else { journal.append(contentsOf: SessionJournal.secondMagic) }
            let metadata = try flow.olderStoredJSON()
            let response = flow.response?.body.data ?? Data()
            add(UInt64(metadata.count))
            add(0)
            add(UInt64(response.count))
            add(UInt64.max)
            add(UInt64.max)
            journal.append(metadata)
            journal.append(response)
        }
        // In the middle record's JSON, its id no longer an id.
        let middle = try #require(journal.range(of: Data(flows[1].id.uuidString.utf8), in: starts[1]..<starts[2])).lowerBound + 8
        journal.replaceSubrange(middle..<middle + 4, with: Data("}}}}".utf8))
        #expect(FileManager.default.createFile(atPath: path + "-flows", contents: journal))

        let store = try SQLiteFlowStore(path: path, warn: { _ in })
        #expect(try await store.allFlows() == [flows[0], flows[2]])
        #expect(store.journalDamage?.parts == [JournalDamage.Part(bytes: starts[1]..<starts[2], records: 1)])
        #expect(FileManager.default.contents(atPath: path + "-flows-damaged") == journal[starts[1]..<starts[2]])
    }

    /// Bodies in the body log whose bytes were damaged, or cut off with the end of the file:
    /// each flow opens, those bodies are not available (sizes kept, marked as holding less),
    /// and the warning says why; the others are read whole. Bodies journaled by a killed
    /// process keep their checksum through the replay.
    @Test func damagedOrMissingBodiesAreNotAvailable() async throws {
        let path = temporaryPath("session.sqlite")
        let flows = [5_000, 6_000, 7_000, 8_000].map { FlowFixtures.postBinary(size: $0) }
        let store = try SQLiteFlowStore(path: path, warn: { _ in })
        store.writer.suspend()
        for flow in flows { store.record(flow) {} }
        let copy = try filesLeftByAKill(of: path)
        store.writer.resume()
        try await store.flush()

        // Request then response of each flow: the second flow's response is at 16,000..<22,000,
        // the last flow's at 44,000..<52,000.
        let log = FileHandle(forUpdatingAtPath: copy + "-bodies")
        try log?.seek(toOffset: 19_000)
        try log?.write(contentsOf: Data(repeating: 0x42, count: 16))
        try log?.truncate(atOffset: 48_000)
        try log?.close()

        var expected = flows
        expected[1].response?.body = FlowBody(size: 6_000, isTruncated: true)
        expected[3].response?.body = FlowBody(size: 8_000, isTruncated: true)
        let warnings = Warnings()
        let replayed = try SQLiteFlowStore(path: copy, warn: warnings.add)
        #expect(try await replayed.allFlows() == expected)
        #expect(try await replayed.flow(id: flows[1].id) == expected[1])
        #expect(warnings.said == [
            "the response body of exchange \(flows[1].id.uuidString) in \(copy) is not available: \(copy)-bodies holds other bytes at offset 16000 (6000 bytes) than were written there: the file is damaged",
            "the response body of exchange \(flows[3].id.uuidString) in \(copy) is not available: \(copy)-bodies ends before the body at offset 44000 (8000 bytes): the file was cut or replaced",
        ])
        // Committed, the rows keep the checksums.
        let reopened = try SQLiteFlowStore(path: copy, warn: { _ in })
        #expect(try await reopened.allFlows() == expected)

        // In the original, committed by its writer, the same damage reads the same.
        let original = FileHandle(forUpdatingAtPath: path + "-bodies")
        try original?.seek(toOffset: 19_000)
        try original?.write(contentsOf: Data(repeating: 0x42, count: 16))
        try original?.close()
        let committed = try SQLiteFlowStore(path: path, warn: { _ in })
        #expect(try await committed.flow(id: flows[1].id) == expected[1])
        #expect(try await committed.flow(id: flows[2].id) == flows[2])
    }

    /// A session file copied without its body log opens; its large bodies are not available,
    /// and the warning names the file they are in.
    @Test func aMissingBodyLogIsNamed() async throws {
        let path = temporaryPath("session.sqlite")
        let flow = FlowFixtures.postBinary(size: 100_000)
        do {
            let store = try SQLiteFlowStore(path: path)
            store.record(flow)
            try await store.flush()
        }
        try FileManager.default.removeItem(atPath: path + "-bodies")
        let warnings = Warnings()
        let store = try SQLiteFlowStore(path: path, warn: warnings.add)
        #expect(try await store.flows(offset: 0, limit: nil, includeBodies: false).map(\.id) == [flow.id])
        var expected = flow
        expected.request.body = FlowBody(size: 100_000, isTruncated: true)
        expected.response?.body = FlowBody(size: 100_000, isTruncated: true)
        #expect(try await store.flow(id: flow.id) == expected)
        #expect(warnings.said.count == 2)
        #expect(warnings.said.allSatisfy { $0.contains("is not available: \(path)-bodies, which holds this session's large bodies, cannot be read") })
    }

    /// A session file damaged itself is SQLite's to find; what it says names the file.
    @Test func aDamagedSessionFileIsNamed() async throws {
        let path = temporaryPath("session.sqlite")
        do {
            let store = try SQLiteFlowStore(path: path)
            for index in 0..<200 { store.record(FlowFixtures.getJSON(body: "{\"n\":\(index)}")) }
            try await store.flush()
        }
        // Closing the last connection checkpointed the WAL into the file: past its first page
        // (the schema), the tables' pages are overwritten.
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try file.seekToEnd()
        #expect(size > 8_192)
        try file.seek(toOffset: 4_096)
        var generator = SeededGenerator(state: 11)
        try file.write(contentsOf: Data((4_096..<Int(size)).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try file.close()
        do {
            let store = try SQLiteFlowStore(path: path, warn: { _ in })
            _ = try await store.allFlows()
            Issue.record("a damaged session file was read without an error")
        } catch {
            #expect("\(error)".contains(path))
        }
    }

    // MARK: Helpers

    /// The flows a killed process had journaled (every one, none committed): the session's
    /// files as they were at that moment, and the flows in the order they went in.
    private func journalLeftByAKill(count: Int) async throws -> (path: String, flows: [Flow]) {
        let path = temporaryPath("session.sqlite")
        let flows = (0..<count).map { FlowFixtures.getJSON(url: "/items/\($0)", body: "{\"n\":\($0)}") }
        let store = try SQLiteFlowStore(path: path)
        store.writer.suspend()
        for flow in flows { store.record(flow) {} }
        let copy = try filesLeftByAKill(of: path)
        store.writer.resume()
        try await store.flush()
        return (copy, flows)
    }

    /// Where each record of a journal of the current format is, from its head's lengths and
    /// places.
    private func recordExtents(of journal: Data) -> [Range<Int>] {
        let bytes = [UInt8](journal)
        func value(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        var extents: [Range<Int>] = []
        var offset = SessionJournal.headerSize
        while offset + SessionJournal.headSize <= bytes.count {
            var length = SessionJournal.headSize + Int(value(offset + 8))
            if value(offset + 32) == UInt64.max { length += Int(value(offset + 16)) }
            if value(offset + 40) == UInt64.max { length += Int(value(offset + 24)) }
            extents.append(offset..<offset + length)
            offset += length
        }
        return extents
    }

    /// The damaged bytes are in a file of their own beside the session, its owner's alone.
    private func expectSetAside(_ bytes: Data, of path: String, in damage: JournalDamage) throws {
        #expect(damage.asideFile == path + "-flows-damaged")
        #expect(FileManager.default.contents(atPath: path + "-flows-damaged") == bytes)
        let mode = try FileManager.default.attributesOfItem(atPath: path + "-flows-damaged")[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }
}

/// What a store warned of, in order.
final class Warnings: Sendable {
    private let list = Mutex<[String]>([])
    var said: [String] { list.withLock { $0 } }
    func add(_ warning: String) { list.withLock { $0.append(warning) } }
}
