import Foundation
import KagamiPostgresStore
import KagamiStore
import KagamiTesting
import Testing

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

    struct Unreadable: Error, CustomStringConvertible {
        var pid: Int32
        var description: String { "cannot read the resident memory of process \(pid) in /proc" }
    }

    /// How far the resident memory of process `pid` grew above where it was while `work` ran,
    /// sampled every 20 ms.
    static func growth<T>(of pid: Int32, during work: () async throws -> T) async throws -> (growth: Int, result: T) {
        let baseline = current(pid: pid)
        guard baseline > 0 else { throw Unreadable(pid: pid) }
        let sampler = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, current(pid: pid))
                try? await Task.sleep(for: .milliseconds(20))
            }
            return peak
        }
        let result: T
        do {
            result = try await work()
        } catch {
            sampler.cancel()
            throw error
        }
        sampler.cancel()
        return (max(0, await sampler.value - baseline), result)
    }
}

enum KagamiStoreOpen {
    static func open(_ path: String) throws -> SQLiteFlowStore { try SQLiteFlowStore(path: path) }
}

/// Where `kagami proxy` records in a test: a session file, or a named session in the tests'
/// PostgreSQL server (`KAGAMI_TEST_POSTGRES_URL`, set by ./scripts/test.sh; without it the
/// test fails rather than leaving the shared store out).
enum RecordingDestination: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sessionFile = "session file"
    case postgres

    var testDescription: String { rawValue }

    struct Session: Sendable {
        var arguments: [String]
        var open: @Sendable () async throws -> any FlowStore
    }

    func newSession() throws -> Session {
        switch self {
        case .sessionFile:
            let path = temporaryPath("session.sqlite")
            return Session(arguments: ["--session", path]) { try SQLiteFlowStore(path: path) }
        case .postgres:
            let url = try KagamiProcess.postgresURL()
            let name = "proxy-" + UUID().uuidString
            let location = try PostgresLocation(url: url)
            return Session(arguments: ["--store", url, "--session", name]) {
                try await PostgresFlowStore.open(location, session: name, recordedBy: "tests")
            }
        }
    }
}
