#if os(Linux)
import Foundation
import KagamiTesting
import Testing

/// What Kagami writes on standard output and error going to a full disk (`/dev/full` refuses
/// every write with ENOSPC): the proxy keeps proxying, and a command whose answer is lost fails
/// and says why instead of ending as if it had answered.
@Suite("Standard output and error on a full disk")
struct FullDiskTests {
    @Test func theProxyGoesOnWhenItsNoticesCannotBeWritten() async throws {
        let origin = try await OriginServer.start()
        let directory = (temporaryPath("session.sqlite") as NSString).deletingLastPathComponent
        let description = directory + "/api.yaml"
        let valid = """
            openapi: 3.1.0
            info: {title: Origin, version: "1"}
            paths:
              /status/200:
                get:
                  responses:
                    "200": {description: fine}
            """
        try valid.write(toFile: description, atomically: true, encoding: .utf8)
        let kagami = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--ui-port", "0", "--no-ssl-proxying", "--session", directory + "/session.sqlite", "--contract", description],
            stderr: .file("/dev/full"))
        defer { kagami.stop() }
        let proxy = ["-s", "--max-time", "30", "-x", "http://127.0.0.1:\(kagami.port)"]
        #expect(try await CommandLineClient.curl.run(proxy + ["\(origin.baseURL)/status/200"]).stdoutText == "status 200\n")

        // A broken edit: the proxy keeps the last good version and says so on standard error,
        // which fails; the notice is lost and nothing else.
        try "openapi: 3.1.0\npaths: [".write(toFile: description, atomically: true, encoding: .utf8)
        var refused = false
        for _ in 0..<200 where !refused {
            let contract = try await CommandLineClient.curl.run(["-s", "--max-time", "30"] + kagami.authorization + ["\(kagami.api)/contract"])
            refused = contract.stdoutText.contains(#""reloadErrors":["#) && !contract.stdoutText.contains(#""reloadErrors":[]"#)
            if !refused { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(refused, "the broken description was never reported")
        #expect(try await CommandLineClient.curl.run(proxy + ["\(origin.baseURL)/status/200"]).stdoutText == "status 200\n")
        #expect(kagami.process.isRunning)
        try await origin.stop()
    }

    @Test func aCommandWhoseAnswerCannotBeWrittenFailsAndSaysWhy() async throws {
        let directory = (temporaryPath("session.sqlite") as NSString).deletingLastPathComponent
        let process = try ChildProcess(
            try CommandLineClient.kagamiPath(), ["ca", "--ca-dir", directory, "--export", "pem"], stdout: .file("/dev/full"), stderr: .pipe)
        let errors = try #require(process.errors).readDataToEndOfFile()
        #expect(await process.exitStatus() == 1)
        #expect(String(decoding: errors, as: UTF8.self).contains("cannot write to standard output: No space left on device"))
    }
}
#endif
