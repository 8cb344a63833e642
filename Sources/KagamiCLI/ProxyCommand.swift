import ArgumentParser
import Foundation
import KagamiFlow
import KagamiProxy
import KagamiStore

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run the debugging proxy and record every exchange into a session file."
    )

    @Option(help: "Address to listen on. Anything but loopback exposes the proxy to other hosts.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8888

    @Option(help: "Session file (SQLite) to record into; created when missing. Default: a new file under ~/.kagami/sessions.")
    var session: String?

    @Option(help: "Act as a reverse proxy for this server (e.g. http://127.0.0.1:3000) instead of a forward proxy.")
    var reverse: String?

    @Option(help: "Bytes of each request and response body kept in the session (the rest is counted).")
    var bodyLimit = 10 * 1024 * 1024

    @Option(help: "Seconds a server may stay silent after the request before the client gets 504.")
    var responseTimeout = 60

    func run() async throws {
        let mode: ProxyServer.Mode
        if let reverse {
            do {
                mode = .reverse(try ProxyTarget(absoluteURL: reverse))
            } catch {
                throw ValidationError("--reverse \(reverse): \(error)")
            }
        } else {
            mode = .forward
        }
        let sessionPath = try session.map(SessionFile.expand) ?? SessionFile.newDefaultPath()
        let store = try SQLiteFlowStore(path: sessionPath)
        let server = ProxyServer(
            configuration: .init(
                host: host, port: port, mode: mode,
                responseTimeout: .seconds(responseTimeout), bodyCaptureLimit: bodyLimit
            ),
            sink: store
        )
        let address = try await server.start()
        let listening = "http://\(host.contains(":") ? "[\(host)]" : host):\(address.port ?? port)"
        var banner: String
        switch mode {
        case .forward:
            banner = "Kagami proxy listening on \(listening) (set it as the HTTP proxy of your app or device)\n"
        case .reverse(let upstream):
            banner = "Kagami reverse proxy listening on \(listening) → \(upstream)\n"
        }
        banner += "Session: \(sessionPath)\n"
        if !["127.0.0.1", "::1", "localhost"].contains(host) {
            banner += "Warning: listening on \(host) lets other hosts use this proxy.\n"
        }
        // Unbuffered, so a script or test reading the pipe sees the port at once.
        FileHandle.standardOutput.write(Data(banner.utf8))

        await SignalWaiter.waitForTermination()
        try await server.stop()
        try await store.flush()
        FileHandle.standardOutput.write(Data("Stopped. \(try await store.count()) exchanges in \(sessionPath)\n".utf8))
    }
}

enum SessionFile {
    static func expand(_ path: String) -> String {
        (path as NSString).expandingTildeInPath
    }

    /// `~/.kagami/sessions/2026-11-21T10-15-30.sqlite`
    static func newDefaultPath() throws -> String {
        let directory = (NSHomeDirectory() as NSString).appendingPathComponent(".kagami/sessions")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH-mm-ss"
        return (directory as NSString).appendingPathComponent("\(formatter.string(from: Date())).sqlite")
    }

    /// Opens an existing session, with a clear error when there is none.
    static func open(_ path: String) throws -> SQLiteFlowStore {
        let expanded = expand(path)
        guard FileManager.default.fileExists(atPath: expanded) else {
            throw ValidationError("no session file at \(expanded)")
        }
        return try SQLiteFlowStore(path: expanded)
    }
}

/// Suspends until SIGINT or SIGTERM.
enum SignalWaiter {
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = SignalState(continuation)
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
                source.setEventHandler { resumed.resume() }
                source.resume()
                resumed.keep(source)
            }
        }
    }

    private final class SignalState: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Void, Never>?
        private var sources: [any DispatchSourceSignal] = []

        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

        func keep(_ source: any DispatchSourceSignal) {
            lock.withLock { sources.append(source) }
        }

        func resume() {
            let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { self.continuation = nil }
                return self.continuation
            }
            continuation?.resume()
        }
    }
}
