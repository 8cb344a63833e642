import Foundation
import KagamiTesting
import Testing

/// `kagami proxy` as a user starts it.
@Suite("kagami proxy")
struct ProxyCommandTests {
    /// A port another program holds: the message names the address and the option to change,
    /// the command fails, and no empty session file is left behind (an existing one is kept).
    @Test func aTakenPortIsNamedAndLeavesNoSessionBehind() async throws {
        let first = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", temporaryPath("first.sqlite")])
        defer { first.stop() }
        let kagami = try CommandLineClient.kagami()
        let session = temporaryPath("second.sqlite")
        let arguments = ["proxy", "--port", String(first.port), "--no-ui", "--no-ssl-proxying", "--upstream-allow", "loopback", "--session"]
        let refused = try await kagami.run(arguments + [session])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot listen on 127.0.0.1:\(first.port): the port is taken"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--port 0"))
        for suffix in ["", "-wal", "-shm", "-flows", "-bodies"] {
            #expect(!FileManager.default.fileExists(atPath: session + suffix), "\(session + suffix) left behind")
        }

        // A session that existed is the user's: it stays.
        let existing = temporaryPath("existing.sqlite")
        let recorded = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", existing])
        recorded.stop()
        #expect(FileManager.default.fileExists(atPath: existing))
        #expect(try await kagami.run(arguments + [existing]).status == 1)
        #expect(FileManager.default.fileExists(atPath: existing))
    }
}
