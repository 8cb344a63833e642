import Foundation
import KagamiTesting
import Testing

/// A session recorded by the real `kagami proxy`, killed -9, then damaged or searched for
/// secrets byte by byte, as a user's disk would hold it.
@Suite("Damaged and redacted session files, through the commands")
struct DamagedSessionCommandsTests {
    /// Five exchanges committed, forty more in the journal only (another program holds the
    /// session's write lock, so SQLite can't commit them), kill -9, then 64 random bytes in the
    /// middle of the journal: `flows`, `export` and `proxy` on the session succeed, the first
    /// opening warns where the damage was and sets it aside, later ones say it is set aside, and
    /// every intact exchange is there.
    @Test func aDamagedJournalLeavesTheSessionReadable() async throws {
        let origin = try await OriginServer.start()
        let folder = try TemporaryFolder.make("damaged-session")
        let session = folder.appendingPathComponent("damaged.sqlite").path
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session], stderr: .file(folder.appendingPathComponent("proxy.err").path))
        let urls = (1...45).map { "\(origin.baseURL)/echo?n=\($0)" }
        let committed = Array(urls.prefix(5)), journaled = Array(urls.dropFirst(5))
        #expect(try await proxy.statuses(of: committed) == String(repeating: "200\n", count: committed.count))
        #expect(try await eventually(attempts: 600, every: .milliseconds(100)) { try await flows(session).lines.count == committed.count })
        let lock = try await WriteLock.take(session)
        #expect(try await proxy.statuses(of: journaled) == String(repeating: "200\n", count: journaled.count))
        proxy.kill9()
        lock.release()
        try await origin.stop()

        var journal = try Data(contentsOf: URL(fileURLWithPath: session + "-flows"))
        // Each record: an 80-byte head, the flow's stored record (about 300 bytes here), the bodies.
        #expect(journal.count > journaled.count * 300, "the journal holds the forty exchanges")
        var generator = SeededGenerator(state: 64)
        let middle = journal.count / 2
        journal.replaceSubrange(middle..<middle + 64, with: (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try journal.write(to: URL(fileURLWithPath: session + "-flows"))

        let listed = try await flows(session)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stderr.hasPrefix("kagami: warning: the session journal \(session)-flows is damaged: at least 1 record in "))
        #expect(listed.stderr.contains(" set aside in \(session)-flows-damaged; its "))
        let damaged = try #require(byteRange(in: listed.stderr))
        #expect(damaged.contains(middle), "the warning names the bytes around the damage: \(listed.stderr)")
        // The records the 64 bytes fell on (one, or two when they cross from one into the next).
        #expect((urls.count - 2...urls.count - 1).contains(listed.lines.count), "\(listed.lines.count) exchanges listed")
        let listedURLs = listed.lines.compactMap { $0.split(separator: " ").dropFirst(4).first.map(String.init) }
        #expect(listedURLs.count == listed.lines.count && Set(listedURLs).isSubset(of: Set(urls)))
        #expect(Set(committed).isSubset(of: Set(listedURLs)))
        let aside = try FileManager.default.attributesOfItem(atPath: session + "-flows-damaged")
        #expect((aside[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(aside[.size] as? Int == damaged.count)

        let reminder = "kagami: warning: \(session)-flows-damaged holds damaged records an earlier opening set aside from this session's journal; the exchanges in them are not in the session\n"
        let export = try await CommandLineClient.kagami().run(["export", "--format", "har", "--session", session])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr == reminder)
        let har = try JSONSerialization.jsonObject(with: export.stdout) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(Set(entries?.compactMap { ($0["request"] as? [String: Any])?["url"] as? String } ?? []) == Set(listedURLs))

        let errors = folder.appendingPathComponent("reopened.err").path
        let reopened = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session], stderr: .file(errors))
        reopened.process.signal(SIGTERM)
        #expect(await reopened.process.exitStatus() == 0)
        #expect(try await eventually { reopened.output.contains("Stopped. \(listedURLs.count) exchanges in \(session)") })
        #expect(FileManager.default.contents(atPath: errors).map { String(decoding: $0, as: UTF8.self) } == reminder)
    }

    /// `kagami proxy --session FILE --redact-header Authorization --redact-header X-Secret
    /// --redact-json-field password` (`--redact-header` gives the list of headers instead of the
    /// default credentials, as with `--store`): the Authorization and X-Secret values and the
    /// passwords (in a small body and in one of 6 KB, which goes to the body log) are in none of
    /// the session's files, whether the proxy is killed before SQLite commits the exchanges or
    /// after; the exchanges are there, redacted.
    @Test(arguments: ["before its commit", "after its commit"])
    func aSessionFileAskedToRedactKeepsNoSecret(killed: String) async throws {
        let origin = try await OriginServer.start()
        let folder = try TemporaryFolder.make("redacted-session")
        let session = folder.appendingPathComponent("redacted.sqlite").path
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session,
             "--redact-header", "Authorization", "--redact-header", "X-Secret", "--redact-json-field", "password"],
            stderr: .file(folder.appendingPathComponent("proxy.err").path))
        let lock = killed == "before its commit" ? try await WriteLock.take(session) : nil
        try await sendSecrets(through: proxy, to: origin)
        if lock == nil {
            #expect(try await eventually(attempts: 600, every: .milliseconds(100)) { try await flows(session).lines.count == 2 })
        }
        proxy.kill9()
        lock?.release()
        try await origin.stop()

        let files = try sessionFiles(session)
        #expect(files.contains(session + "-bodies"), "the 6 KB body went to the body log")
        if lock != nil { #expect(files.contains(session + "-flows")) }
        #expect(try secrets(in: files) == [])
        // The next opening replays what the journal holds: still nothing in clear.
        let listed = try await flows(session)
        #expect(listed.status == 0 && listed.lines.count == 2, "\(listed.stderr)")
        #expect(try secrets(in: sessionFiles(session)) == [])
        let export = try await CommandLineClient.kagami().run(["export", "--format", "har", "--session", session])
        let har = String(decoding: export.stdout, as: UTF8.self)
        #expect(har.contains("[redacted by Kagami]") && har.contains("Authorization") && har.contains("ada"))
    }

    /// Without any redaction option (and no rules document), a session file keeps the values
    /// as they were sent: it is local debugging.
    @Test func withoutRedactionASessionFileKeepsTheValues() async throws {
        let origin = try await OriginServer.start()
        let folder = try TemporaryFolder.make("kept-session")
        let session = folder.appendingPathComponent("kept.sqlite").path
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session])
        try await sendSecrets(through: proxy, to: origin)
        #expect(try await eventually(attempts: 600, every: .milliseconds(100)) { try await flows(session).lines.count == 2 })
        proxy.kill9()
        try await origin.stop()
        #expect(try secrets(in: sessionFiles(session)) == Set(Self.secrets))
    }

    // MARK: Helpers

    static let secrets = ["Bearer t0ken-8f3a", "x-secret-5d1e", "hunter2-9c4b"]

    /// Two POSTs carrying the secrets: a small JSON body, and one of 6 KB.
    private func sendSecrets(through proxy: KagamiProcess, to origin: OriginServer) async throws {
        for padding in [0, 6_000] {
            let body = #"{"user":"ada","password":"\#(Self.secrets[2])","padding":"\#(String(repeating: "p", count: padding))"}"#
            let result = try await CommandLineClient.curl.run([
                "-s", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "Authorization: \(Self.secrets[0])", "-H", "X-Secret: \(Self.secrets[1])", "-H", "Content-Type: application/json",
                "--data-binary", body, "\(origin.baseURL)/status/200",
            ])
            #expect(result.stdoutText == "200")
        }
    }

    private func flows(_ session: String) async throws -> (status: Int32, lines: [Substring], stderr: String) {
        let result = try await CommandLineClient.kagami().run(["flows", "--session", session])
        return (result.status, result.stdoutText.split(separator: "\n"), result.stderr)
    }

    /// "bytes 20480-21511" in a warning, as a range.
    private func byteRange(in warning: String) -> Range<Int>? {
        guard let match = warning.firstMatch(of: /\(bytes (\d+)-(\d+)\)/), let lower = Int(match.1), let upper = Int(match.2) else { return nil }
        return lower..<upper + 1
    }

    /// Every file of the session: those whose names begin with the session file's.
    private func sessionFiles(_ session: String) throws -> [String] {
        let folder = (session as NSString).deletingLastPathComponent
        let name = (session as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(name) }.map { folder + "/" + $0 }
    }

    /// The secrets found in any byte of `files`.
    private func secrets(in files: [String]) throws -> Set<String> {
        var found: Set<String> = []
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            for secret in Self.secrets where bytes.range(of: Data(secret.utf8)) != nil { found.insert(secret) }
        }
        return found
    }
}

/// Another program holding the session's SQLite write lock (an open write transaction): the
/// proxy's writer can't commit, so what it records stays in the journal and the body log, as
/// when the proxy is killed before its commit.
private struct WriteLock {
    let process: ChildProcess

    static func take(_ session: String) async throws -> WriteLock {
        let marker = temporaryPath("locked")
        let script = """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN IMMEDIATE")
            open(sys.argv[2], "w").write("locked")
            sys.stdin.read()
            """
        let process = try ChildProcess("/usr/bin/python3", ["-c", script, session, marker], stdin: .pipe)
        guard try await eventually(attempts: 3_000, { FileManager.default.fileExists(atPath: marker) }) else {
            process.signal(SIGKILL)
            throw ChildProcess.SpawnError(executable: "/usr/bin/python3", reason: "it did not take the write lock of \(session)")
        }
        return WriteLock(process: process)
    }

    func release() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}
