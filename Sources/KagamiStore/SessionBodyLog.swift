import Foundation
import KagamiFlow
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a session keeps its large bodies: an append-only file beside it (`<session>-bodies`,
/// readable by its owner only), a body's bytes written once, with one system call, as the
/// exchange finishes: its parts as they are, one vector each. SQLite keeps the body's place in
/// the file (`body.logOffset`) instead of the bytes, so a megabyte never goes through SQLite's
/// pages, its write-ahead log and its checkpoint. Only the process that owns the session's journal appends; any may read. As it
/// grows, the log is handed to the disk a step at a time and its written pages let go of, so
/// recording large bodies keeps neither dirty pages nor the page cache to itself.
final class SessionBodyLog: Sendable {
    let path: String
    private let state: Mutex<State>

    private struct State {
        var appender: Int32 = -1
        var reader: Int32 = -1
        var size: Int64 = 0
        /// Appended bodies whose flows are not committed yet: the file is never cut under them.
        var uncommitted = 0
        /// The log is handed to the disk in steps of `passedOn` bytes: up to `passingFrom` its
        /// pages were let go of, and up to `passing` their writing out has been started.
        var passingFrom: Int64 = 0
        var passing: Int64 = 0
    }

    /// Pages of the log are written out and let go of in steps this large, one step behind the
    /// end (whose writes may still be under way).
    static let passedOn: Int64 = 16 << 20
    /// Starts writing out and lets go of pages off the event loops.
    private let passer = DispatchQueue(label: "kagami.session.bodies")

    /// Bodies this large or larger (a SQLite page) go to the log; smaller ones stay in SQLite
    /// with their flow, on its row's page.
    static let threshold = 4 << 10

    init(path: String) {
        self.path = path
        state = Mutex(State())
    }

    deinit {
        state.withLock { state in
            if state.appender >= 0 { close(state.appender) }
            if state.reader >= 0 { close(state.reader) }
        }
    }

    /// Appends each body and returns where each starts, in order; nil when they could not be
    /// written whole (a full disk...): the caller then keeps them in SQLite. Each body appended
    /// counts as uncommitted until `committed(_:)`. The place is taken under the lock and the
    /// bytes written after it, so event loops append at once instead of one after another.
    func append(_ bodies: [FlowBody]) -> [Int64]? {
        let total = bodies.reduce(Int64(0)) { $0 + Int64($1.keptCount) }
        let reserved = state.withLock { state -> (descriptor: Int32, start: Int64, passed: Range<Int64>?)? in
            if state.appender < 0 {
                // Not O_APPEND: writes go to the place each took (Linux's pwrite ignores its offset
                // on a file opened for appending).
                let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { return nil }
                var status = stat()
                guard fstat(descriptor, &status) == 0 else {
                    close(descriptor)
                    return nil
                }
                state.appender = descriptor
                state.size = Int64(status.st_size)
                state.passingFrom = state.size
                state.passing = state.size
            }
            let start = state.size
            state.size += total
            // Counted before the bytes are in, so the log is never emptied under a write.
            state.uncommitted += bodies.count
            var passed: Range<Int64>? = nil
            if state.size - state.passing >= 2 * Self.passedOn {
                let end = state.size - Self.passedOn
                passed = state.passingFrom..<end
                state.passingFrom = state.passing
                state.passing = end
            }
            return (state.appender, start, passed)
        }
        guard let reserved else { return nil }
        #if os(Linux)
        if let passed = reserved.passed {
            // A log written at hundreds of megabytes a second would otherwise fill the page cache
            // with dirty pages, push out everything else in it, and leave the kernel to write
            // gigabytes back at once. POSIX_FADV_DONTNEED starts writing the range out and drops
            // the pages already clean: the step before, written out since the last call.
            let descriptor = reserved.descriptor
            // It holds the log, so the descriptor stays open until it has run.
            passer.async { [self] in
                _ = posix_fadvise(descriptor, off_t(passed.lowerBound), off_t(passed.count), POSIX_FADV_DONTNEED)
                withExtendedLifetime(self) {}
            }
        }
        #endif
        guard Descriptor.write(bodies.flatMap(\.parts), to: reserved.descriptor, at: reserved.start) else {
            // Whatever part went in is never referred to; appends go on after it.
            committed(bodies.count)
            return nil
        }
        var offsets: [Int64] = []
        offsets.reserveCapacity(bodies.count)
        var next = reserved.start
        for body in bodies {
            offsets.append(next)
            next += Int64(body.keptCount)
        }
        return offsets
    }

    /// Returns once the steps asked for so far are taken.
    func waitForPassing() {
        passer.sync {}
    }

    /// `count` appended bodies are now referred to by committed rows.
    func committed(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.uncommitted -= count }
    }

    /// Empties the log when no body appended is waiting for its commit (the session was
    /// cleared); true when it did.
    @discardableResult
    func emptyIfUnreferenced() -> Bool {
        state.withLock { state in
            guard state.uncommitted == 0 else { return false }
            if state.appender >= 0 {
                guard ftruncate(state.appender, 0) == 0 else { return false }
            } else if truncate(path, 0) != 0, errno != ENOENT {
                return false
            }
            state.size = 0
            state.passingFrom = 0
            state.passing = 0
            return true
        }
    }

    /// The `length` bytes at `offset`.
    func read(offset: Int64, length: Int) throws -> Data {
        let descriptor = try state.withLock { state -> Int32 in
            if state.reader < 0 {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw FlowStoreError("cannot read \(path), which holds this session's large bodies: \(String(cString: strerror(errno)))")
                }
                state.reader = descriptor
            }
            return state.reader
        }
        var data = Data(count: length)
        var done = 0
        try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            while done < length {
                let count = pread(descriptor, base + done, length - done, off_t(offset) + off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    throw FlowStoreError("\(path) ends before the body at offset \(offset) (\(length) bytes): the file was cut or replaced")
                }
                done += count
            }
        }
        return data
    }
}
