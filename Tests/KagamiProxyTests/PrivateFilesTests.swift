import Foundation
import KagamiFlow
import KagamiStore
import KagamiTesting
import Testing

/// Captures hold credentials: session files and Kagami's folder are readable by their owner
/// only, and they live where `$HOME` or `$KAGAMI_HOME` say.
@Suite("Private files")
struct PrivateFilesTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aNewSessionFileAndItsJournalAreOwnerOnly() async throws {
        let path = temporaryPath("private.sqlite")
        let store = try SQLiteFlowStore(path: path)
        store.record(FlowFixtures.refused())
        try await store.flush()
        #expect(try Self.mode(path) == 0o600)
        for journal in [path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: journal) {
            #expect(try Self.mode(journal) == 0o600, "\(journal)")
        }
    }

    @Test func theDefaultSessionAndCAFollowHomeAndKagamiHome() async throws {
        let home = (temporaryPath("x") as NSString).deletingLastPathComponent
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["KAGAMI_HOME"] = nil
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying"], environment: environment)
        let banner = proxy.output
        proxy.stop()
        let sessions = home + "/.kagami/sessions"
        let line = try #require(banner.split(separator: "\n").first { $0.hasPrefix("Session: ") })
        let session = String(line.dropFirst("Session: ".count))
        #expect(session.hasPrefix(sessions + "/"), "\(banner)")
        #expect(try Self.mode(sessions) == 0o700)
        #expect(try Self.mode(session) == 0o600)

        let kagamiHome = home + "/elsewhere"
        environment["KAGAMI_HOME"] = kagamiHome
        let ca = try await CommandLineClient.kagami().run(["ca"], environment: environment)
        #expect(ca.status == 0, "\(ca.stderr)")
        #expect(FileManager.default.fileExists(atPath: kagamiHome + "/kagami-ca.pem"))
        #expect(try Self.mode(kagamiHome) == 0o700)
        #expect(!FileManager.default.fileExists(atPath: home + "/.kagami/kagami-ca.pem"))
    }
}
