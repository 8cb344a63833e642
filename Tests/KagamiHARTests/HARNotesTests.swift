import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiTesting
import Testing
@testable import KagamiCLI
@testable import KagamiHAR

/// A session's notes travel in its archives (`log._notes`) and show in `kagami flows` between
/// the exchanges, at their time.
@Suite struct HARNotesTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    /// Three exchanges a second apart, and notes before, between and after them.
    static func session() -> (flows: [Flow], notes: [SessionNote]) {
        let flows = (0..<3).map { index in
            var flow = FlowFixtures.getJSON(url: "/items/\(index)", start: start.addingTimeInterval(Double(index)))
            flow.id = UUID()
            return flow
        }
        let notes = [
            SessionNote(time: start.addingTimeInterval(-0.5), author: "kagami mcp", text: "added a Map Local rule 'feed'"),
            SessionNote(time: start.addingTimeInterval(1.25), author: "web UI", text: "released a held exchange\nwith its body edited", flowID: flows[1].id),
            SessionNote(time: start.addingTimeInterval(5), author: "kagami scenario", text: "put 'empty' in force"),
        ]
        return (flows, notes)
    }

    @Test func notesRoundTripThroughAnArchive() throws {
        let (flows, notes) = Self.session()
        let archive = HARExport.archive(flows, notes: notes, creatorVersion: "0.1.0")
        let written = try #require(archive["log"]?["_notes"]?.arrayValue)
        #expect(written.count == 3)
        #expect(written[1]["time"] == .string(HARDate.format(notes[1].time)))
        #expect(written[1]["flow"] == .string(flows[1].id.canonicalText))
        #expect(written[0]["flow"] == .null)
        let schema = try #require(HARTestSupport.schema)
        #expect(schema.validate(archive).isValid)

        let read = try HARImport.read(from: Array(archive.serialized().utf8))
        #expect(read.skipped.isEmpty, "\(read.skipped)")
        #expect(read.notes == notes)
        // Not kept a second time as one of the archive's own fields.
        #expect(read.flows.allSatisfy { ($0.archiveFields ?? []).isEmpty }, "\(read.flows.map(\.archiveFields))")
        let again = HARExport.archive(read.flows, notes: read.notes, creatorVersion: "0.1.0")
        #expect(HARTestSupport.differences(archive, again) == [])
        // An archive without notes has no `_notes`.
        #expect(HARExport.archive(flows, creatorVersion: "0.1.0")["log"]?["_notes"] == nil)
    }

    /// Written an entry at a time, the notes close the log as the whole archive has them.
    @Test func theStreamWriterClosesWithTheNotes() throws {
        let (flows, notes) = Self.session()
        var writer = HARStreamWriter(creatorVersion: "0.1.0")
        var text = writer.opening
        for flow in flows { text += writer.entry(flow) }
        text += writer.closing(notes: notes)
        let streamed = try JSONValue(parsing: text)
        #expect(HARTestSupport.differences(streamed, HARExport.archive(flows, notes: notes, creatorVersion: "0.1.0")) == [])
    }

    /// A note that can't be read is skipped, saying where and what; the others are kept. A note
    /// with no id or author gets them.
    @Test func aBrokenNoteIsSkippedWithItsPath() throws {
        let text = """
            {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [], "_notes": [
              {"time": "2026-05-28T20:26:40.123Z", "text": "kept"},
              {"time": "yesterday", "text": "bad time"},
              {"time": "2026-05-28T20:26:41Z", "text": "bad flow", "flow": "not-an-id"},
              {"time": "2026-05-28T20:26:42Z", "text": "  "}
            ]}}
            """
        let read = try HARImport.read(from: Array(text.utf8))
        #expect(read.notes.map(\.text) == ["kept"])
        #expect(read.notes.first?.author == "HAR import")
        #expect(read.skipped.map(\.path) == ["log._notes[1].time", "log._notes[2].flow", "log._notes[3]"])
        #expect(read.skipped[0].message.contains("ISO 8601"), "\(read.skipped[0])")
        // Notes that are not a list: named, and the entries are read all the same.
        var archive = HARExport.archive(Self.session().flows, creatorVersion: "0.1.0")
        archive.replace(at: ["log", "_notes"], with: .string("none"))
        let notAList = try HARImport.read(from: Array(archive.serialized().utf8))
        #expect(notAList.flows.count == 3 && notAList.notes.isEmpty)
        #expect(notAList.skipped.map(\.description) == ["log._notes: expected an array, found string"], "\(notAList.skipped)")
    }

    /// An exchange given a new id on import (the session has it already) keeps its notes.
    @Test func renumberingAnExchangeMovesItsNotes() throws {
        let (flows, notes) = Self.session()
        var read = try HARImport.read(from: Array(HARExport.archive(flows, notes: notes, creatorVersion: "0.1.0").serialized().utf8))
        read.renumber(1)
        #expect(read.flows[1].id != flows[1].id)
        #expect(read.notes[1].flowID == read.flows[1].id)
        #expect(read.notes[0].flowID == nil)
    }

    /// `kagami flows` prints each note before the first exchange that started after it, on a line
    /// that starts with `#`; `--no-notes` leaves them out. `kagami export` writes them, all for
    /// the whole session and those about the chosen exchanges for `--id`; `kagami import` adds
    /// them to the session.
    @Test func flowsExportAndImportCarryTheNotes() async throws {
        let (flows, notes) = Self.session()
        let session = try TemporaryFolder.path("har-notes", "recorded.sqlite")
        let store = try SQLiteFlowStore(path: session)
        for flow in flows { store.record(flow) }
        for note in notes { store.record(.note(note)) }
        try await store.flush()
        await store.close()

        let kagami = try CommandLineClient.kagami()
        let listed = try await kagami.run(["flows", "--session", session])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(lines)")
        #expect(lines.map { $0.hasPrefix("#") } == [true, false, false, true, false, true], "\(lines)")
        #expect(lines[0].hasSuffix(" kagami mcp: added a Map Local rule 'feed'"), "\(lines[0])")
        #expect(lines[1].contains("/items/0") && lines[2].contains("/items/1") && lines[4].contains("/items/2"))
        #expect(lines[3].hasSuffix(" web UI: released a held exchange with its body edited [exchange \(flows[1].id.uuidString)]"), "\(lines[3])")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        #expect(lines[3].hasPrefix("# \(formatter.string(from: notes[1].time)) "), "\(lines[3])")
        let bare = try await kagami.run(["flows", "--session", session, "--no-notes"])
        #expect(bare.stdoutText.split(separator: "\n").map { $0.hasPrefix("#") } == [false, false, false], "\(bare.stdoutText)")

        let whole = try TemporaryFolder.path("har-notes", "whole.har")
        try await ExportCommand.parse(["--session", session, "-o", whole]).run()
        let archive = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: whole)))
        #expect(archive["log"]?["_notes"]?.arrayValue?.count == 3)
        let chosen = try TemporaryFolder.path("har-notes", "chosen.har")
        try await ExportCommand.parse(["--session", session, "--id", flows[1].id.uuidString, "-o", chosen]).run()
        let part = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: chosen)))
        #expect(part["log"]?["_notes"]?.arrayValue?.map { $0["text"] } == [.string(notes[1].text)])
        let other = try TemporaryFolder.path("har-notes", "other.har")
        try await ExportCommand.parse(["--session", session, "--id", flows[0].id.uuidString, "-o", other]).run()
        #expect(try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: other)))["log"]?["_notes"] == nil)

        let imported = try TemporaryFolder.path("har-notes", "imported.sqlite")
        let reading = try await kagami.run(["import", whole, "--session", imported])
        #expect(reading.status == 0, "\(reading.stderr)")
        #expect(reading.stdoutText == "Imported 3 exchanges and 3 notes into \(imported)\n")
        let back = try SQLiteFlowStore(path: imported)
        #expect(try await back.notes() == notes)
        await back.close()
        #expect(try await kagami.run(["flows", "--session", imported]).stdoutText == listed.stdoutText)
    }
}
