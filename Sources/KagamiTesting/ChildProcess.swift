import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run beside themselves (curl, `kagami`, nginx, Python peers), started
/// with `posix_spawn`: the child gets the standard streams it is given and no other descriptor
/// of the test process, its signals at their defaults, and one thread that waits for its exit.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close descriptors, and reads
/// past the end of glibc's directory buffer when that listing fills it (a test process with
/// over a thousand descriptors open): the test process then dies at random. This does not list
/// anything.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// The test process's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe whose other end is `input` (standard input) or `output` / `errors`.
        case pipe
        /// A file, created or emptied (standard output and error), or read (standard input).
        case file(String)
    }

    /// Writing to a child that has exited is an error to the writer, not the end of the tests.
    private static let brokenPipesAreErrors: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    public let pid: pid_t
    /// The writing end of the child's standard input, when it is `.pipe`.
    public let input: FileHandle?
    /// The reading end of the child's standard output, when it is `.pipe`.
    public let output: FileHandle?
    /// The reading end of the child's standard error, when it is `.pipe`.
    public let errors: FileHandle?
    private let exit: ExitWatch

    public struct SpawnError: Error, CustomStringConvertible {
        public var executable: String
        public var reason: String
        public var description: String { "cannot run \(executable): \(reason)" }

        public init(executable: String, reason: String) {
            self.executable = executable
            self.reason = reason
        }
    }

    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit
    ) throws {
        _ = Self.brokenPipesAreErrors
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The parent's ends, kept; the child's ends, closed here once it has them.
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            let reading = target == 0
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", reading ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, reading ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                // Close-on-exec: another child started meanwhile closes everything past 2 anyway.
                guard pipe(&ends) == 0, fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0 else {
                    parentEnds.compactMap { $0 }.forEach { _ = close($0) }
                    throw SpawnError(executable: executable, reason: "pipe: \(String(cString: strerror(errno)))")
                }
                let (childEnd, parentEnd) = reading ? (ends[0], ends[1]) : (ends[1], ends[0])
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                childEnds.append(childEnd)
                parentEnds[Int(target)] = parentEnd
            }
        }
        // Every other descriptor stays in the test process.
        _ = GNUSpawn.closeFrom?(&actions, 3)
        if let directory {
            guard let changeDirectory = GNUSpawn.changeDirectory else {
                throw SpawnError(executable: executable, reason: "this C library cannot start a child in another directory")
            }
            _ = changeDirectory(&actions, directory)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // SIGPIPE and others the test process ignores go back to their defaults; nothing is blocked.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let environmentStrings = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { environmentStrings?.forEach { free($0) } }
        var child: pid_t = 0
        let environmentArray = environmentStrings.map { $0 + [nil] }
        let status = (argv + [nil]).withUnsafeBufferPointer { arguments -> Int32 in
            guard let argumentsBase = arguments.baseAddress else { return EINVAL }
            guard let environmentArray else {
                return posix_spawn(&child, executable, &actions, &attributes, argumentsBase, environ)
            }
            return environmentArray.withUnsafeBufferPointer { variables -> Int32 in
                guard let variablesBase = variables.baseAddress else { return EINVAL }
                return posix_spawn(&child, executable, &actions, &attributes, argumentsBase, variablesBase)
            }
        }
        guard status == 0 else {
            parentEnds.compactMap { $0 }.forEach { _ = close($0) }
            throw SpawnError(executable: executable, reason: String(cString: strerror(status)))
        }
        pid = child
        input = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        output = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        errors = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        exit = ExitWatch(pid: child)
    }

    /// Whether it has not exited yet.
    public var isRunning: Bool { exit.status == nil }

    /// Sends `signal` (nothing once it has exited and been waited for).
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// Its exit code, or the number of the signal that ended it (as `Process.terminationStatus`).
    public func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            exit.notify { continuation.resume(returning: $0) }
        }
    }

    /// The same, blocking the calling thread: for `defer` and other synchronous places.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        exit.wait()
    }

    /// The port a server started with `stdout: .pipe` announces as the last word of its first
    /// line (`port 41234`), as the test servers in Tests/ do. The child is sent SIGTERM when
    /// that line never comes or ends in something else.
    public func announcedPort() throws -> Int {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")), let output {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let last = String(decoding: line, as: UTF8.self).split(separator: " ").last
        guard let port = last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            signal(SIGTERM)
            throw NoPortAnnounced(pid: pid, firstLine: String(decoding: line, as: UTF8.self))
        }
        return port
    }

    public struct NoPortAnnounced: Error, CustomStringConvertible {
        public var pid: pid_t
        public var firstLine: String
        public var description: String { "child process \(pid) did not say its port; its first line was \(firstLine.debugDescription)" }
    }

    /// One thread per child, blocked in waitpid until the child ends.
    private final class ExitWatch: Sendable {
        private let state = Mutex<(status: Int32?, waiting: [@Sendable (Int32) -> Void])>((nil, []))

        init(pid: pid_t) {
            let thread = Thread { [self] in
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
                // Exited: the code in bits 8-15; killed: the signal in bits 0-6.
                let status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
                let waiting = state.withLock { state in
                    state.status = status
                    defer { state.waiting = [] }
                    return state.waiting
                }
                waiting.forEach { $0(status) }
            }
            thread.stackSize = 64 << 10
            thread.start()
        }

        var status: Int32? { state.withLock { $0.status } }

        func notify(_ action: @escaping @Sendable (Int32) -> Void) {
            let status = state.withLock { state -> Int32? in
                if state.status == nil { state.waiting.append(action) }
                return state.status
            }
            if let status { action(status) }
        }

        func wait() -> Int32 {
            let ended = DispatchSemaphore(value: 0)
            notify { _ in ended.signal() }
            ended.wait()
            return status ?? -1
        }
    }

    /// glibc's posix_spawn extensions (2.29, 2.34), which the Swift module map leaves out:
    /// looked up once in the process's own symbols.
    private enum GNUSpawn {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

        static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
        static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

        private static func symbol<Function>(_ name: String) -> Function? {
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, name) else { return nil }
            return unsafeBitCast(symbol, to: Function.self)
        }
    }
}
