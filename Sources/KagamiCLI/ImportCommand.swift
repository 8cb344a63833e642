import ArgumentParser
import Foundation
import KagamiFlow
import KagamiHAR
import KagamiOutput
import KagamiStore

/// `kagami import FILE.har --session FILE` (or `--store URL --session NAME`): adds an archive's exchanges to a session.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read an HTTP Archive (HAR 1.2), or another session file (such as one `kagami export --format session` packed), into a session, creating the session file (or with --store, the named session) when missing.",
        discussion: "The archive is read entry by entry into the session: memory holds the file and one entry. Entries Kagami can't read are skipped, each named on standard error with its JSON path and the reason; the rest are imported. A file that is not an archive (no log.entries), or whose entries are all unreadable, imports nothing and exits 2; JSON broken partway keeps the entries before the break and exits 2, naming its line and column."
    )

    @Argument(help: "The .har file, or a session file.")
    var file: String

    @OptionGroup var destination: SessionOptions

    func validate() throws {
        _ = try destination.requiredSession()
        if let url = destination.storeURL { _ = try RecordingStore.location(url) }
    }

    func run() async throws {
        let session = try destination.requiredSession()
        // The session as the messages name it: as given, and with --store in its database.
        let into = try destination.storeURL.map { "\(session) in \(try RecordingStore.location($0))" } ?? session
        let path = SessionFile.expand(file)
        if SQLiteFlowStore.holdsSession(at: path) { return try await importSession(at: path, into: into) }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            Console.error("kagami import: cannot read \(path): \(error.localizedDescription); nothing imported\n")
            throw ExitCode(2)
        }
        let storeURL = destination.storeURL
        let progress = ExchangeCountDisplay("Importing \(file)", total: nil)
        let importing = Importing(progress: progress) { try await RecordingStore.open(store: storeURL, session: session) }
        let file = self.file
        // Entry by entry, straight into the session: memory holds one entry and what waits for
        // the writer, which the reading waits for when it is behind.
        let outcome: Result<HARImport.Streamed, HARImportError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var result: Result<HARImport.Streamed, HARImportError> = .failure(HARImportError(file: file, message: "not read"))
                bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                    do throws(HARImportError) {
                        result = .success(try HARImport.read(from: buffer, file: file) { importing.record($0, messages: $1) })
                    } catch {
                        result = .failure(error)
                    }
                }
                continuation.resume(returning: result)
            }
        }
        progress.finish()
        if let error = importing.openError { throw error }
        let imported = importing.count
        switch outcome {
        case .success(let streamed):
            for skipped in streamed.skipped {
                Console.error("kagami import: skipped \(skipped)\n")
            }
            // The archive's own fields go on its first flow, recorded again in its place.
            if var first = importing.first, !streamed.logFields.isEmpty {
                first.archiveFields = streamed.logFields + (first.archiveFields ?? [])
                importing.session?.store.record(first)
            }
            // The session's notes (an archive may hold notes and no exchange).
            if !streamed.notes.isEmpty {
                var notesSession = importing.session
                if notesSession == nil { notesSession = try await RecordingStore.open(store: storeURL, session: session) }
                for note in streamed.notes { notesSession?.store.record(.note(note)) }
                if importing.session == nil { try await notesSession?.close() }
            }
            try await importing.session?.close()
            if imported == 0, streamed.notes.isEmpty, !streamed.skipped.isEmpty {
                Console.error("kagami import: no entry of \(file) could be read; nothing imported\n")
                throw ExitCode(2)
            }
            let skippedNote = streamed.skipped.isEmpty ? "" : " (\(streamed.skipped.count) entr\(streamed.skipped.count == 1 ? "y" : "ies") skipped)"
            let notes = streamed.notes.count
            let notesNote = notes == 0 ? "" : " and \(notes) note\(notes == 1 ? "" : "s")"
            print("Imported \(imported) exchange\(imported == 1 ? "" : "s")\(notesNote) into \(into)\(skippedNote)")
        case .failure(let error):
            try await importing.session?.close()
            let kept = imported == 0 ? "nothing imported" : "the \(imported) entr\(imported == 1 ? "y" : "ies") before it \(imported == 1 ? "was" : "were") imported into \(into)"
            Console.error("kagami import: \(error); \(kept)\n")
            throw ExitCode(2)
        }
    }
}

extension ImportCommand {
    /// Every exchange of the session file at `path`, with its bodies and messages, into the
    /// destination session (an exchange already there is replaced).
    private func importSession(at path: String, into: String) async throws {
        let source = try SessionFile.open(path)
        let session = try destination.requiredSession()
        guard SessionFile.expand(session) != path else {
            Console.error("kagami import: \(path) is the session imported into; nothing imported\n")
            throw ExitCode(2)
        }
        let destination = try await RecordingStore.open(store: self.destination.storeURL, session: session)
        var imported = 0
        let progress = ExchangeCountDisplay("Importing \(file)", total: try? await source.count())
        defer { progress.finish() }
        do {
            try await source.forEachFlow(includeBodies: true) { flows in
                let messages = try await source.webSocketMessages(of: flows)
                for flow in flows {
                    destination.store.record(flow)
                    if let kept = messages[flow.id], !kept.isEmpty { destination.store.record(messages: kept, of: flow.id) }
                    imported += 1
                }
                progress.add(flows.count)
                while destination.store.isBehind { try await Task.sleep(for: .milliseconds(5)) }
            }
            for note in try await source.notes() { destination.store.record(.note(note)) }
        } catch {
            try await destination.close()
            Console.error("kagami import: cannot read \(path): \(error); \(imported == 0 ? "nothing imported" : "the \(imported) exchange(s) before it were imported into \(into)")\n")
            throw ExitCode(2)
        }
        try await destination.close()
        await source.close()
        print("Imported \(imported) exchange\(imported == 1 ? "" : "s") into \(into)")
    }
}

/// The session an import writes into, opened when the first entry is read (an archive with
/// nothing readable creates no session).
private final class Importing: @unchecked Sendable {
    private let open: @Sendable () async throws -> RecordingStore
    private var opening: Result<RecordingStore, any Error>?
    private(set) var session: RecordingStore?
    private(set) var openError: (any Error)?
    private(set) var first: Flow?
    private(set) var count = 0
    private let progress: ExchangeCountDisplay

    init(progress: ExchangeCountDisplay, open: @escaping @Sendable () async throws -> RecordingStore) {
        self.progress = progress
        self.open = open
    }

    /// On the reading's thread, one entry at a time.
    func record(_ flow: Flow, messages: [WebSocketMessage]?) {
        guard openError == nil else { return }
        if session == nil {
            do {
                session = try opened()
            } catch {
                openError = error
                return
            }
        }
        guard let store = session?.store else { return }
        // Bounded: the writer frees room as each batch commits.
        var waited = 0
        while store.isBehind, waited < 600_000 {
            usleep(1_000)
            waited += 1
        }
        store.record(flow)
        if let messages { store.record(messages: messages, of: flow.id) }
        if first == nil { first = flow }
        count += 1
        progress.add(1)
    }

    /// The reading's thread (a Dispatch one, not Swift's own) waits while the session opens.
    private func opened() throws -> RecordingStore {
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                self.opening = .success(try await self.open())
            } catch {
                self.opening = .failure(error)
            }
            done.signal()
        }
        done.wait()
        guard let opening else { throw ValidationError("the session could not be opened") }
        return try opening.get()
    }
}
