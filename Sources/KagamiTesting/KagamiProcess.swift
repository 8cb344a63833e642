import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `kagami` binary running as a child process, as a user would run it. `kagami proxy` is
/// always started with `--upstream-allow loopback`, so no test can make it connect beyond
/// this machine.
public final class KagamiProcess: @unchecked Sendable {
    public let process: ChildProcess
    /// The proxy's (or first listed) port.
    public let port: Int
    /// The web UI's port, when it runs.
    public let uiPort: Int?
    private let banner: Banner

    private init(process: ChildProcess, port: Int, uiPort: Int?, banner: Banner) {
        self.process = process
        self.port = port
        self.uiPort = uiPort
        self.banner = banner
    }

    /// The output's handler goes before its pipe is closed: Foundation watches the descriptor
    /// with a dispatch source, which must not outlive it (nor keep calling the handler at the
    /// pipe's end).
    deinit {
        process.output?.readabilityHandler = nil
    }

    /// What it has printed so far.
    public var output: String { banner.text }

    public var api: String { "http://127.0.0.1:\(uiPort ?? 0)/api" }

    /// The admin API's token, from the address it printed (`kagami proxy`'s web UI,
    /// `kagami serve`'s sessions: `?token=`).
    public var uiToken: String? {
        guard let range = output.range(of: #"http://\S+\?token=[0-9A-Za-z_-]+"#, options: .regularExpression) else { return nil }
        return output[range].components(separatedBy: "?token=").last
    }

    /// curl's arguments that present the admin API's token.
    public var authorization: [String] { ["-H", "Authorization: Bearer \(uiToken ?? "")"] }

    /// The arguments a test gives, with the loopback-only upstream added to `proxy`.
    public static func confined(_ arguments: [String]) -> [String] {
        guard arguments.first == "proxy", !arguments.contains("--upstream-allow") else { return arguments }
        return arguments + ["--upstream-allow", "loopback"]
    }

    /// Starts `kagami ARGS` and waits for it to say which port it listens on (and, for a proxy
    /// with its web UI, the UI's port).
    /// `openFiles` runs it under `ulimit -n`, as on a machine with few file descriptors;
    /// `stderr` is where its standard error goes (the test's own by default).
    public static func start(
        _ arguments: [String], environment: [String: String]? = nil, openFiles: Int? = nil, stderr: ChildProcess.Stream = .inherit
    ) async throws -> KagamiProcess {
        let executable: String, processArguments: [String]
        if let openFiles {
            executable = "/bin/bash"
            processArguments = ["-c", "ulimit -n \(openFiles) && exec \"$@\"", "kagami", try CommandLineClient.kagamiPath()] + confined(arguments)
        } else {
            executable = try CommandLineClient.kagamiPath()
            processArguments = confined(arguments)
        }
        let process = try ChildProcess(executable, processArguments, environment: environment, stdout: .pipe, stderr: stderr)
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
        out.readabilityHandler = nil
        process.signal(SIGTERM)
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "kagami did not start listening: \(banner.text)"])
    }

    /// The port of the first `LABELhttp://127.0.0.1:PORT` in `text` (or `0.0.0.0`, listening
    /// on every address; tests still connect to 127.0.0.1).
    private static func port(in text: String, after label: String) -> Int? {
        guard let range = text.range(of: label + #"http://(127\.0\.0\.1|0\.0\.0\.0):\d+"#, options: .regularExpression) else { return nil }
        return Int(text[range].split(separator: ":").last ?? "")
    }

    public func kill9() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, as Ctrl-C would: Kagami writes what it holds to the session and exits.
    public func stop() {
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

extension KagamiProcess {
    /// The tests' PostgreSQL server (`KAGAMI_TEST_POSTGRES_URL`, set by ./scripts/test.sh).
    public static func postgresURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["KAGAMI_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: """
                KAGAMI_TEST_POSTGRES_URL is not set: run ./scripts/test.sh, or start a server with eval "$(scripts/postgres-cluster.sh start)"
                """])
        }
        return url
    }

    /// A new session of the tests' PostgreSQL server holding `requests` (paths on `origin`),
    /// recorded by a real `kagami proxy --store`; throws when one is not answered 200.
    public static func recordSession(
        _ origin: OriginServer, requests: [String], extraArguments: [String] = [], curlOptions: [String] = []
    ) async throws -> (url: String, name: String) {
        let url = try postgresURL()
        let name = "commands-" + UUID().uuidString
        let proxy = try await start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", url, "--session", name] + extraArguments)
        defer { proxy.stop() }
        for path in requests {
            let status = try await CommandLineClient.curl.run(
                ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}"] + curlOptions + [origin.baseURL + path])
            guard status.stdoutText == "200" else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(path) through the proxy answered \(status.stdoutText), not 200"])
            }
        }
        return (url, name)
    }
}

extension KagamiProcess {
    /// The HTTP status curl gets for each URL through this proxy, a line each.
    public func statuses(of urls: [String]) async throws -> String {
        let outputs = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
        return try await CommandLineClient.curl.run(["-s", "-x", "http://127.0.0.1:\(port)", "-w", "%{http_code}\n"] + outputs + urls).stdoutText
    }
}
