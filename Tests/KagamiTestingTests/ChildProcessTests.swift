import Foundation
import KagamiTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Child processes")
struct ChildProcessTests {
    /// With two thousand descriptors open here (more than glibc's directory buffer lists at
    /// once), children still start, and each gets its three standard streams and nothing else.
    @Test func aChildGetsItsStandardStreamsOnly() async throws {
        var opened: [Int32] = []
        defer { opened.forEach { _ = close($0) } }
        for _ in 0..<2_000 {
            let descriptor = open("/dev/null", O_RDONLY)
            try #require(descriptor >= 0)
            opened.append(descriptor)
        }
        for _ in 0..<20 {
            let listing = try await CommandLineClient("/bin/ls").run(["/proc/self/fd"])
            #expect(listing.status == 0)
            // ls's own listing of the folder is the fourth.
            #expect(listing.stdoutText.split(separator: "\n") == ["0", "1", "2", "3"])
        }
    }

    @Test func standardInputOutputExitCodesAndSignals() async throws {
        let echoed = try await CommandLineClient("/bin/cat").run([], stdin: Data("over the pipe".utf8))
        #expect(echoed.stdoutText == "over the pipe")
        #expect(try await CommandLineClient("/bin/sh").run(["-c", "echo oops >&2; exit 3"]).status == 3)
        #expect(try await CommandLineClient("/bin/sh").run(["-c", "echo oops >&2; exit 3"]).stderr == "oops\n")
        let environment = try await CommandLineClient("/usr/bin/env").run([], environment: ["ONLY": "this"])
        #expect(environment.stdoutText == "ONLY=this\n")

        let sleeper = try ChildProcess("/bin/sleep", ["30"])
        #expect(sleeper.isRunning)
        sleeper.signal(SIGKILL)
        #expect(await sleeper.exitStatus() == SIGKILL)
        #expect(!sleeper.isRunning)
        #expect(sleeper.waitUntilExit() == SIGKILL)

        let folder = NSTemporaryDirectory()
        let here = try ChildProcess("/bin/pwd", [], directory: folder, stdout: .pipe)
        let printed = String(decoding: try here.output?.readToEnd() ?? Data(), as: UTF8.self)
        #expect(URL(fileURLWithPath: printed.trimmingCharacters(in: .newlines)).standardizedFileURL.path == URL(fileURLWithPath: folder).standardizedFileURL.path)
        #expect(here.waitUntilExit() == 0)

        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess("/nonexistent/program", []) }
    }
}
