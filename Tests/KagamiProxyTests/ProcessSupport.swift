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
            guard let url = ProcessInfo.processInfo.environment["KAGAMI_TEST_POSTGRES_URL"], !url.isEmpty else {
                throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: """
                    KAGAMI_TEST_POSTGRES_URL is not set: run ./scripts/test.sh, or start a server with eval "$(scripts/postgres-cluster.sh start)"
                    """])
            }
            let name = "proxy-" + UUID().uuidString
            let location = try PostgresLocation(url: url)
            return Session(arguments: ["--store", url, "--session", name]) {
                try await PostgresFlowStore.open(location, session: name, recordedBy: "tests")
            }
        }
    }
}

/// The `kagami` binary running as a child process, as a user would run it. `kagami proxy` is
/// always started with `--upstream-allow loopback`, so no test can make it connect beyond
/// this machine.
final class KagamiProcess: @unchecked Sendable {
    let process: ChildProcess
    /// The proxy's (or first listed) port.
    let port: Int
    /// The web UI's port, when it runs.
    let uiPort: Int?
    private let banner: Banner

    private init(process: ChildProcess, port: Int, uiPort: Int?, banner: Banner) {
        self.process = process
        self.port = port
        self.uiPort = uiPort
        self.banner = banner
    }

    /// What it has printed so far.
    var output: String { banner.text }

    var api: String { "http://127.0.0.1:\(uiPort ?? 0)/api" }

    /// The arguments a test gives, with the loopback-only upstream added to `proxy`.
    static func confined(_ arguments: [String]) -> [String] {
        guard arguments.first == "proxy", !arguments.contains("--upstream-allow") else { return arguments }
        return arguments + ["--upstream-allow", "loopback"]
    }

    /// Starts `kagami ARGS` and waits for it to say which port it listens on (and, for a proxy
    /// with its web UI, the UI's port).
    /// `openFiles` runs it under `ulimit -n`, as on a machine with few file descriptors.
    static func start(_ arguments: [String], environment: [String: String]? = nil, openFiles: Int? = nil) async throws -> KagamiProcess {
        let executable: String, processArguments: [String]
        if let openFiles {
            executable = "/bin/bash"
            processArguments = ["-c", "ulimit -n \(openFiles) && exec \"$@\"", "kagami", try CommandLineClient.kagamiPath()] + confined(arguments)
        } else {
            executable = try CommandLineClient.kagamiPath()
            processArguments = confined(arguments)
        }
        let process = try ChildProcess(executable, processArguments, environment: environment, stdout: .pipe)
        guard let out = process.output else { throw ChildProcess.SpawnError(executable: executable, reason: "no output pipe") }
        let banner = Banner()
        out.readabilityHandler = { handle in banner.append(handle.availableData) }
        let wantsUI = arguments.first == "proxy" && !arguments.contains("--no-ui")
        for _ in 0..<1200 {
            let text = banner.text
            let ui = Self.port(in: text, after: "Web UI: ")
            if let proxy = Self.port(in: text, after: ""), !wantsUI || ui != nil {
                return KagamiProcess(process: process, port: proxy, uiPort: wantsUI ? ui : nil, banner: banner)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGTERM)
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "kagami did not start listening: \(banner.text)"])
    }

    /// The port of the first `LABELhttp://127.0.0.1:PORT` in `text` (or `0.0.0.0`, listening
    /// on every address; tests still connect to 127.0.0.1).
    private static func port(in text: String, after label: String) -> Int? {
        guard let range = text.range(of: label + #"http://(127\.0\.0\.1|0\.0\.0\.0):\d+"#, options: .regularExpression) else { return nil }
        return Int(text[range].split(separator: ":").last ?? "")
    }

    func kill9() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, as Ctrl-C would: Kagami writes what it holds to the session and exits.
    func stop() {
        process.signal(SIGTERM)
        process.waitUntilExit()
    }

    private final class Banner: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ more: Data) { lock.withLock { data.append(more) } }
        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }
}
