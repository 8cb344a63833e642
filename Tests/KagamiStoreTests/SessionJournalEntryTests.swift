import Foundation
import KagamiFlow
@testable import KagamiStore
import KagamiTesting
import Testing

/// A journal holding every kind of a session writer's entry, as a shared store's spool does:
/// each entry reads back as it was written, and a reader meets a kind it doesn't read as a
/// record set aside and named, never as a crash.
@Suite("Session journal entries")
struct SessionJournalEntryTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func everyKindOfEntryReadsBackAsItWasWritten(seed: UInt64) throws {
        let path = temporaryPath("spool")
        var generator = SeededGenerator(state: seed)
        let entries = (0..<120).map { _ in randomEntry(using: &generator) }
        do {
            let journal = try SessionJournal(path: path)
            for entry in entries { try journal.append(entry) }
            try journal.synchronize()
        }
        let contents = SessionJournal.contents(at: path, kinds: Set(SessionJournal.Kind.allCases))
        #expect(contents.damage.isEmpty)
        #expect(contents.records.count == entries.count)
        for (record, entry) in zip(contents.records, entries) {
            #expect(record.key == entry.key)
            #expect(same(record.entry.item, entry.item), "\(entry.item)")
        }
        #expect(Set(contents.records.map { kind(of: $0.item) }) == Set(SessionJournal.Kind.allCases), "every kind was written")
    }

    /// A session file's journal holds flows; a record of another kind in it (or of a kind no
    /// reader of this version knows) is set aside with the damage and named, and the flows
    /// around it are read.
    @Test func aRecordOfAKindTheReaderDoesNotReadIsSetAsideAndNamed() async throws {
        let path = temporaryPath("session.sqlite") + "-flows"
        let flows = [FlowFixtures.getJSON(url: "/first"), FlowFixtures.postBinary(size: 3_000), FlowFixtures.getJSON(url: "/last")]
        let note = SessionNote(time: Date(timeIntervalSince1970: 1_780_000_000.25), author: "tests", text: "between")
        var ends: [Int] = []
        do {
            let journal = try SessionJournal(path: path)
            for entry in [SessionEntry(.flow(flows[0])), SessionEntry(.messages(FlowFixtures.webSocketMessages(), flowID: flows[0].id)),
                          SessionEntry(.flow(flows[1])), SessionEntry(.note(note)), SessionEntry(.flow(flows[2]))] {
                try journal.append(entry)
                ends.append(journal.size)
            }
        }
        // The note's record made into one of kind 200, its head's checksum made again: whole, of
        // a kind no version reads yet.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let noteRecord = ends[2]..<ends[3]
        bytes[noteRecord.lowerBound + 8] = 200
        let headChecksum = bytes.withUnsafeBytes { XXH64.checksum(UnsafeRawBufferPointer(rebasing: $0[noteRecord.lowerBound..<noteRecord.lowerBound + 72])) }
        withUnsafeBytes(of: headChecksum.bigEndian) { bytes.replaceSubrange(noteRecord.lowerBound + 72..<noteRecord.lowerBound + 80, with: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let asFlows = SessionJournal.contents(at: path)
        #expect(asFlows.records.map(\.entry.item).map(flow(of:)) == flows)
        #expect(asFlows.damage == [
            SessionJournal.Damage(bytes: ends[0]..<ends[1], records: 1, unreadKind: 1),
            SessionJournal.Damage(bytes: noteRecord, records: 1, unreadKind: 200),
        ])
        let everyKind = SessionJournal.contents(at: path, kinds: Set(SessionJournal.Kind.allCases))
        #expect(everyKind.records.count == 4)
        #expect(everyKind.damage == [SessionJournal.Damage(bytes: noteRecord, records: 1, unreadKind: 200)])

        // Opening the session replays the flows and says what it set aside, and why.
        let warnings = Warnings()
        let store = try SQLiteFlowStore(path: String(path.dropLast("-flows".count)), warn: warnings.add)
        #expect(try await store.allFlows() == flows)
        let damage = try #require(store.journalDamage)
        #expect(damage.parts.map(\.unreadKind) == [1, 200])
        #expect(warnings.said.first?.contains("of which records of kind 1, 200 that this version of Kagami does not read, set aside in \(path)-damaged") == true)
        let aside = try Data(contentsOf: URL(fileURLWithPath: path + "-damaged"))
        #expect(aside == Data(bytes[ends[0]..<ends[1]] + bytes[noteRecord]))
    }
}

private func randomEntry(using generator: inout SeededGenerator) -> SessionEntry {
    func bytes(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
    let flowID = UUID()
    let time = Date(timeIntervalSince1970: 1_780_000_000 + Double(Int.random(in: 0..<1_000_000, using: &generator)) / 8)
    switch Int.random(in: 0..<4, using: &generator) {
    case 0:
        var flow = FlowFixtures.postBinary(size: Int.random(in: 0..<5_000, using: &generator))
        flow.request.body.data = bytes(flow.request.body.data.count)
        return SessionEntry(.flow(flow))
    case 1:
        let messages = (0..<Int.random(in: 0..<6, using: &generator)).map { index -> WebSocketMessage in
            let binary = Bool.random(using: &generator)
            let data = binary ? bytes(Int.random(in: 0..<2_000, using: &generator)) : Data("text \(index) ✓".utf8)
            return WebSocketMessage(
                direction: Bool.random(using: &generator) ? .send : .receive, time: time, opcode: binary ? .binary : .text,
                data: data, size: data.count + Int.random(in: 0..<3, using: &generator), isTruncated: Bool.random(using: &generator),
                isCompressed: Bool.random(using: &generator), note: Bool.random(using: &generator) ? "a note" : nil)
        }
        return SessionEntry(.messages(messages, flowID: flowID))
    case 2:
        let violations = (0..<Int.random(in: 1..<4, using: &generator)).map { index in
            ContractViolation(
                kind: ContractViolation.Kind.allCases.randomElement(using: &generator) ?? .schema, side: .response, location: .header,
                name: "x-\(index)", expected: "a number", actual: "\"ü\"", message: "violation \(index)")
        }
        return SessionEntry(.violations(violations, flowID: flowID))
    default:
        return SessionEntry(.note(SessionNote(time: time, author: "tests", text: "note ✓ \(UInt32.random(in: 0...UInt32.max, using: &generator))", flowID: flowID)))
    }
}

private func kind(of item: SessionEntry.Item) -> SessionJournal.Kind {
    switch item {
    case .flow: .flow
    case .messages: .messages
    case .violations: .violations
    case .note: .note
    }
}

private func flow(of item: SessionEntry.Item) -> Flow? {
    if case .flow(let flow) = item { return flow }
    return nil
}

private func same(_ left: SessionEntry.Item, _ right: SessionEntry.Item) -> Bool {
    switch (left, right) {
    case (.flow(let a), .flow(let b)): a == b
    case (.messages(let a, let aID), .messages(let b, let bID)): a == b && aID == bID
    case (.violations(let a, let aID), .violations(let b, let bID)): a == b && aID == bID
    case (.note(let a), .note(let b)): a == b
    default: false
    }
}
