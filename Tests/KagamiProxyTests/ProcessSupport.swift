import Foundation
import KagamiStore

#if canImport(Glibc)
import Glibc
#endif

/// Reads a process's resident set size from /proc (Linux) in bytes; this process by default.
enum ResidentMemory {
    static func current(pid: Int32? = nil) -> Int {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }
}

enum KagamiStoreOpen {
    static func open(_ path: String) throws -> SQLiteFlowStore { try SQLiteFlowStore(path: path) }
}

/// The `kagami` binary running as a child process, as a user would run it.
final class KagamiProcess: @unchecked Sendable {
    let process: Process
    let port: Int

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    static func binary() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates = [root.appendingPathComponent(".build/debug/kagami").path]
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.insert(beside.appendingPathComponent("kagami").path, at: 0)
        candidates.insert(beside.deletingLastPathComponent().appendingPathComponent("kagami").path, at: 1)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw URLSessionProbe.NotBuilt(searched: candidates)
        }
        return found
    }

    /// Starts `kagami ARGS` and waits for it to say which port it listens on.
    static func start(_ arguments: [String]) async throws -> KagamiProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary())
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        let port: Int = try await withCheckedThrowingContinuation { continuation in
            let reader = LineReader(continuation)
            out.fileHandleForReading.readabilityHandler = { handle in reader.feed(handle.availableData) }
        }
        return KagamiProcess(process: process, port: port)
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, as Ctrl-C would: Kagami writes what it holds to the session and exits.
    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Finds `http://HOST:PORT` in the first line that has it.
    private final class LineReader: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        private var continuation: CheckedContinuation<Int, any Error>?

        init(_ continuation: CheckedContinuation<Int, any Error>) { self.continuation = continuation }

        func feed(_ data: Data) {
            lock.withLock {
                guard let continuation else { return }
                if data.isEmpty {
                    self.continuation = nil
                    continuation.resume(throwing: CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "kagami exited before listening: \(text)"]))
                    return
                }
                text += String(decoding: data, as: UTF8.self)
                if let range = text.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                   let port = Int(text[range].split(separator: ":").last ?? "") {
                    self.continuation = nil
                    continuation.resume(returning: port)
                }
            }
        }
    }
}
