import Foundation

/// Runs a command-line client (curl, the kagami binary...) as a child process and collects
/// what it printed, without blocking a cooperative thread while it runs.
public struct CommandLineClient: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    public let executable: String

    public init(_ executable: String) {
        self.executable = executable
    }

    public static let curl = CommandLineClient("/usr/bin/curl")

    /// The `kagami` binary built beside the tests.
    public static func kagami() throws -> CommandLineClient { CommandLineClient(try kagamiPath()) }

    /// Where the `kagami` binary is: beside the test bundle, one folder up, or in `.build/debug`.
    public static func kagamiPath() throws -> String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            beside.appendingPathComponent("kagami").path,
            beside.deletingLastPathComponent().appendingPathComponent("kagami").path,
            root.appendingPathComponent(".build/debug/kagami").path,
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw KagamiNotBuilt(searched: candidates)
        }
        return found
    }

    public struct KagamiNotBuilt: Error, CustomStringConvertible {
        public var searched: [String]
        public var description: String { "the kagami binary is not built (swift build --build-tests); looked in \(searched.joined(separator: ", "))" }
    }

    public func run(_ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil) async throws -> Result {
        // Output goes to files, not pipes: once the process has exited they hold every byte it
        // wrote, with no reader racing the exit.
        let base = NSTemporaryDirectory() + "kagami-cli-" + UUID().uuidString
        let outPath = base + ".out", errPath = base + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let child = try ChildProcess(
            executable, arguments, environment: environment,
            stdin: stdin == nil ? .null : .pipe, stdout: .file(outPath), stderr: .file(errPath))
        if let stdin, let input = child.input {
            // On a thread of its own: a child that reads slowly must not hold a cooperative one.
            Thread.detachNewThread {
                try? input.write(contentsOf: stdin)
                try? input.close()
            }
        }
        let status = await child.exitStatus()
        let stdout = FileManager.default.contents(atPath: outPath) ?? Data()
        let stderr = FileManager.default.contents(atPath: errPath) ?? Data()
        return Result(status: status, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }
}
