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
        try await withCheckedThrowingContinuation { continuation in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = environment }
            let out = Pipe(), err = Pipe(), input = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = stdin == nil ? FileHandle.nullDevice : input
            let collected = OutputCollector()
            out.fileHandleForReading.readabilityHandler = { handle in collected.appendOut(handle.availableData) }
            err.fileHandleForReading.readabilityHandler = { handle in collected.appendErr(handle.availableData) }
            process.terminationHandler = { process in
                out.fileHandleForReading.readabilityHandler = nil
                err.fileHandleForReading.readabilityHandler = nil
                collected.appendOut(out.fileHandleForReading.readDataToEndOfFile())
                collected.appendErr(err.fileHandleForReading.readDataToEndOfFile())
                let (o, e) = collected.snapshot()
                continuation.resume(returning: Result(status: process.terminationStatus, stdout: o, stderr: String(decoding: e, as: UTF8.self)))
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
    }

    private final class OutputCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()
        func appendOut(_ d: Data) { lock.withLock { out.append(d) } }
        func appendErr(_ d: Data) { lock.withLock { err.append(d) } }
        func snapshot() -> (Data, Data) { lock.withLock { (out, err) } }
    }
}
