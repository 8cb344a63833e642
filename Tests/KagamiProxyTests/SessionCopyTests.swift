import Foundation
import KagamiTesting
import Testing

/// A session is what a user copies, mails and attaches: the real `kagami proxy` records, the
/// session is copied as a file manager would (the `.sqlite` alone) while it records and after,
/// packed into one file, read back by `import`; no command leaves an empty output behind.
@Suite("Copying and sharing a session")
struct SessionCopyTests {
    static func urls(_ origin: OriginServer) -> [String] {
        ["\(origin.baseURL)/echo?n=1", "\(origin.baseURL)/bytes/300000", "\(origin.baseURL)/echo?n=3"]
    }

    @Test func aCopyTakenWhileRecordingSaysWhatItLacksAndAPackedOneHoldsEverything() async throws {
        let origin = try await OriginServer.start()
        let folder = try TemporaryFolder.make("session-copy")
        let session = folder.appendingPathComponent("recorded.sqlite").path
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session], stderr: .file(folder.appendingPathComponent("proxy.err").path))
        let urls = Self.urls(origin)
        #expect(try await proxy.statuses(of: urls) == "200\n200\n200\n")

        // The file alone, copied while the proxy records: the copy says what it lacks.
        let copy = folder.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: session, toPath: copy)
        let listed = try await kagami(["flows", "--session", copy])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stderr.contains("copy.sqlite was copied while a proxy was recording into it"), "\(listed.stderr)")
        #expect(listed.stderr.contains("kagami export --format session"))

        // Packed while it records: one file, with every exchange and body, nothing beside it.
        let packed = folder.appendingPathComponent("packed.sqlite").path
        let export = try await kagami(["export", "--session", session, "--format", "session", "-o", packed])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("3 exchanges of \(session) in \(packed)"))
        #expect(try companions(of: packed).isEmpty)
        let packedMode = try FileManager.default.attributesOfItem(atPath: packed)[.posixPermissions] as? NSNumber
        #expect(packedMode?.intValue == 0o600)
        let packedFlows = try await kagami(["flows", "--session", packed])
        #expect(packedFlows.stderr.isEmpty, "\(packedFlows.stderr)")
        #expect(packedFlows.stdoutText.split(separator: "\n").count == 3)
        let har = try await kagami(["export", "--session", packed, "--format", "har"])
        #expect(har.stderr.isEmpty, "\(har.stderr)")
        #expect(try bodySizes(har.stdout).contains(300_000))

        // Stopped: the file alone is the whole session, with no warning.
        proxy.stop()
        try await origin.stop()
        let after = folder.appendingPathComponent("after.sqlite").path
        try FileManager.default.copyItem(atPath: session, toPath: after)
        let afterFlows = try await kagami(["flows", "--session", after])
        #expect(afterFlows.status == 0)
        #expect(!afterFlows.stderr.contains("was copied while"), "\(afterFlows.stderr)")
        #expect(afterFlows.stdoutText.split(separator: "\n").count == 3)

        // The packed file read back by import, into a session of its own.
        let imported = folder.appendingPathComponent("imported.sqlite").path
        let reading = try await kagami(["import", packed, "--session", imported])
        #expect(reading.status == 0, "\(reading.stderr)")
        #expect(reading.stdoutText == "Imported 3 exchanges into \(imported)\n")
        let importedHAR = try await kagami(["export", "--session", imported, "--format", "har"])
        #expect(try bodySizes(importedHAR.stdout).contains(300_000))
    }

    @Test func aFailedExportLeavesNoFileAndAnExistingOneAsItWas() async throws {
        let folder = try TemporaryFolder.make("session-export-fails")
        let session = folder.appendingPathComponent("s.sqlite").path
        let har = folder.appendingPathComponent("out.har").path
        let origin = try await OriginServer.start()
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        #expect(try await proxy.statuses(of: ["\(origin.baseURL)/echo"]) == "200\n")
        proxy.stop()
        try await origin.stop()
        let missing = UUID().uuidString
        // An exchange the session doesn't have, asked after the output was begun.
        let failed = try await kagami(["export", "--session", session, "--id", missing, "-o", har])
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("no exchange \(missing)"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: har))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains(".partial-") })
        try Data("earlier export\n".utf8).write(to: URL(fileURLWithPath: har))
        _ = try await kagami(["export", "--session", session, "--id", missing, "-o", har])
        #expect(try String(contentsOfFile: har, encoding: .utf8) == "earlier export\n")
        let packed = try await kagami(["export", "--session", session, "--id", missing, "--format", "session", "-o", har])
        #expect(packed.status != 0)
        #expect(try String(contentsOfFile: har, encoding: .utf8) == "earlier export\n")
        // A device is no place for a session file: refused, and left as it is.
        let device = try await kagami(["export", "--session", session, "--format", "session", "-o", "/dev/null"])
        #expect(device.status != 0)
        #expect(device.stderr.contains("/dev/null is not a regular file"), "\(device.stderr)")
        let null = try FileManager.default.attributesOfItem(atPath: "/dev/null")
        #expect(null[.type] as? FileAttributeType == .typeCharacterSpecial)
        // Written to standard output, a session file needs a name.
        let unnamed = try await kagami(["export", "--session", session, "--format", "session"])
        #expect(unnamed.status != 0)
        #expect(unnamed.stderr.contains("give --output FILE"))
    }

    private func kagami(_ arguments: [String]) async throws -> CommandLineClient.Result {
        try await CommandLineClient.kagami().run(arguments)
    }

    /// The files beside `session` whose names begin with its own.
    private func companions(of session: String) throws -> [String] {
        let folder = (session as NSString).deletingLastPathComponent
        let name = (session as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(name) && $0 != name }
    }

    /// The response body sizes of a HAR's entries.
    private func bodySizes(_ har: Data) throws -> [Int?] {
        let object = try JSONSerialization.jsonObject(with: har) as? [String: Any]
        let entries = (object?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        return entries.map { (($0["response"] as? [String: Any])?["content"] as? [String: Any])?["size"] as? Int }
    }
}

/// A file given as a session that is none: refused as it is, by every command, with no output.
@Suite("Foreign files given as sessions")
struct ForeignSessionFileTests {
    @Test func anotherProgramsDatabaseIsRefusedAndLeftAsItIs() async throws {
        let folder = try TemporaryFolder.make("foreign-session")
        let database = folder.appendingPathComponent("app.db").path
        let sqlite = try await CommandLineClient("/usr/bin/python3").run([
            "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table users(id int)'); c.commit()", database,
        ])
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let text = folder.appendingPathComponent("notes.txt").path
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: text))
        let har = folder.appendingPathComponent("out.har").path
        for (file, says) in [(database, "is an SQLite database but not a Kagami session"), (text, "is not a session file (not an SQLite database)")] {
            for arguments in [["flows", "--session", file], ["export", "--session", file, "-o", har], ["proxy", "--port", "0", "--no-ui", "--session", file]] {
                let result = try await CommandLineClient.kagami().run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
        #expect(!FileManager.default.fileExists(atPath: har))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["app.db", "notes.txt"])
    }
}
