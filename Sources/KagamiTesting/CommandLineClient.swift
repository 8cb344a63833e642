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

    public func run(_ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil) async throws -> Result {
        // Output goes to files, not pipes: once the process has exited they hold every byte it
        // wrote, with no reader racing the exit (pipes read by handlers lost the last chunk).
        let base = NSTemporaryDirectory() + "kagami-cli-" + UUID().uuidString
        let outPath = base + ".out", errPath = base + ".err"
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
              FileManager.default.createFile(atPath: errPath, contents: nil),
              let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: base])
        }
        defer {
            try? out.close()
            try? err.close()
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = environment }
            let input = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = stdin == nil ? FileHandle.nullDevice : input
            process.terminationHandler = { process in
                continuation.resume(returning: process.terminationStatus)
            }
            do {
                try process.run()
                if let stdin {
                    input.fileHandleForWriting.write(stdin)
                    try input.fileHandleForWriting.close()
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        let stdout = FileManager.default.contents(atPath: outPath) ?? Data()
        let stderr = FileManager.default.contents(atPath: errPath) ?? Data()
        return Result(status: status, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }
}
