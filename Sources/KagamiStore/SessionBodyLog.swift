import Foundation
import KagamiFlow
import KagamiOutput
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if os(Linux)
/// `fallocate(2)`, which glibc's headers declare only for GNU sources; nil where the C library
/// has none.
private let setAsideSpace: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32)? = dlsym(nil, "fallocate").map {
    unsafeBitCast($0, to: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32).self)
}
/// `FALLOC_FL_KEEP_SIZE`: the space is set aside past the end, the file's size stays.
private let keepingSize: Int32 = 1
#endif

/// Where a session keeps its large bodies: an append-only file beside it (`<session>-bodies`,
/// readable by its owner only), a body's bytes written once, with one system call, as the
/// exchange finishes: its parts as they are, one vector each. SQLite keeps the body's place in
/// the file (`body.logOffset`) instead of the bytes, so a megabyte never goes through SQLite's
/// pages, its write-ahead log and its checkpoint. Only the process that owns the session's journal appends; any may read. As it
/// grows, the log is handed to the disk a step at a time and its written pages let go of, so
/// recording large bodies keeps neither dirty pages nor the page cache to itself.
///
/// Each body's checksum (`XXH64`) is kept with its place, so a body whose bytes were damaged
/// or cut since is read as not available, with the reason, rather than as other bytes.
package final class SessionBodyLog: Sendable {
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
        /// Where the space set aside for the log ends (`setAside`).
        var setAsideEnd: Int64 = 0
    }

    /// Pages of the log are written out and let go of in steps this large, one step behind the
    /// end (whose writes may still be under way).
    static let passedOn: Int64 = 16 << 20
    /// Starts writing out and lets go of pages off the event loops, and sets space aside.
    private let passer = DispatchQueue(label: "kagami.session.bodies")
    /// Space past the log's end is set aside on the disk in steps this large, before appends
    /// reach it: a write into space the file system has already given the file costs the
    /// kernel less than one it must find space for (a fifth less system time per megabyte on
    /// ext4). The file's size stays its written end; what is set aside past it is given back
    /// when the session closes or the log is let go of. A killed process leaves one step at
    /// most: the next one sets its space aside from the end, over it.
    static let setAside: Int64 = 64 << 20

    /// Bodies this large or larger (a SQLite page) go to the log; smaller ones stay in SQLite
    /// with their flow, on its row's page.
    static let threshold = 4 << 10

    /// Where the log holds a body: `length` bytes from `offset`, whose checksum is `checksum`
    /// (nil for a body logged before bodies had one: its bytes are read unchecked).
    package struct Place: Equatable, Sendable {
        var offset: Int64
        var length: Int
        var checksum: UInt64?
    }

    /// Why a body's bytes can't be read back.
    struct Unavailable: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    init(path: String) {
        self.path = path
        state = Mutex(State())
    }

    deinit {
        giveBackSpaceSetAside()
        state.withLock { state in
            if state.appender >= 0 { close(state.appender) }
            if state.reader >= 0 { close(state.reader) }
        }
    }

    /// Appends each body and returns where each is, in order; nil when they could not be
    /// written whole (a full disk...): the caller then keeps them in SQLite. Each body appended
    /// counts as uncommitted until `committed(_:)`. The place is taken under the lock and the
    /// bytes written after it, so event loops append at once instead of one after another.
    func append(_ bodies: [FlowBody]) -> [Place]? {
        let total = bodies.reduce(Int64(0)) { $0 + Int64($1.keptCount) }
        // Before the lock, as the writing is after it.
        let checksums = bodies.map { XXH64.checksum($0.parts) }
        let reserved = state.withLock { state -> (descriptor: Int32, start: Int64, passed: Range<Int64>?, setAside: Range<Int64>?)? in
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
                state.setAsideEnd = state.size
            }
            let start = state.size
            state.size += total
            var setAside: Range<Int64>? = nil
            if state.size + Self.setAside / 2 > state.setAsideEnd {
                let from = max(state.setAsideEnd, state.size)
                setAside = from..<from + Self.setAside
                state.setAsideEnd = from + Self.setAside
            }
            // Counted before the bytes are in, so the log is never emptied under a write.
            state.uncommitted += bodies.count
            var passed: Range<Int64>? = nil
            if state.size - state.passing >= 2 * Self.passedOn {
                let end = state.size - Self.passedOn
                passed = state.passingFrom..<end
                state.passingFrom = state.passing
                state.passing = end
            }
            return (state.appender, start, passed, setAside)
        }
        guard let reserved else { return nil }
        #if os(Linux)
        if let setAside = reserved.setAside {
            pass(reserved.descriptor) { descriptor in
                // Without the space (a file system that can't, a full disk) appends go on as before.
                _ = setAsideSpace?(descriptor, keepingSize, off_t(setAside.lowerBound), off_t(setAside.count))
            }
        }
        if let passed = reserved.passed {
            // A log written at hundreds of megabytes a second would otherwise fill the page cache
            // with dirty pages, push out everything else in it, and leave the kernel to write
            // gigabytes back at once. POSIX_FADV_DONTNEED starts writing the range out and drops
            // the pages already clean: the step before, written out since the last call.
            pass(reserved.descriptor) { descriptor in
                _ = posix_fadvise(descriptor, off_t(passed.lowerBound), off_t(passed.count), POSIX_FADV_DONTNEED)
            }
        }
        #endif
        guard Descriptor.write(bodies.flatMap(\.parts), to: reserved.descriptor, at: reserved.start) else {
            // Whatever part went in is never referred to; appends go on after it.
            committed(bodies.count)
            return nil
        }
        var places: [Place] = []
        places.reserveCapacity(bodies.count)
        var next = reserved.start
        for (body, checksum) in zip(bodies, checksums) {
            places.append(Place(offset: next, length: body.keptCount, checksum: checksum))
            next += Int64(body.keptCount)
        }
        return places
    }

    /// Gives back the space set aside past the log's end, once the steps asked for so far are
    /// taken (one may be setting space aside): cutting a file at its own size lets go of the
    /// blocks past it. The cut is at the end of what appends have taken, under the lock, so a
    /// write still under way is never cut. When the session closes, and when the log is let go of.
    func giveBackSpaceSetAside() {
        #if os(Linux)
        waitForPassing()
        state.withLock { state in
            guard state.appender >= 0, ftruncate(state.appender, off_t(state.size)) == 0 else { return }
            state.setAsideEnd = state.size
        }
        #endif
    }

    /// Runs `work` on the passer with a descriptor of the log's own, closed after it: the log may
    /// be let go of (closing its descriptor) before it runs, and is never let go of on the
    /// passer itself, whose queue it owns.
    private func pass(_ descriptor: Int32, _ work: @escaping @Sendable (Int32) -> Void) {
        let own = dup(descriptor)
        guard own >= 0 else { return }
        passer.async {
            work(own)
            close(own)
        }
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
            state.setAsideEnd = 0
            return true
        }
    }

    /// The body at `place`, or why it can't be read: the log is missing or unreadable, ends
    /// before the body's end, or holds bytes other than those written there.
    func read(_ place: Place) throws(Unavailable) -> Data {
        let descriptor = try state.withLock { (state: inout State) throws(Unavailable) -> Int32 in
            if state.reader < 0 {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw Unavailable(reason: "\(path), which holds this session's large bodies, cannot be read: \(String(cString: strerror(errno)))")
                }
                state.reader = descriptor
            }
            return state.reader
        }
        let length = place.length
        var data = Data(count: length)
        var done = 0
        var failure: String?
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            while done < length {
                let count = pread(descriptor, base + done, length - done, off_t(place.offset) + off_t(done))
                if count < 0, errno == EINTR { continue }
                if count < 0 {
                    failure = "\(path) could not be read at offset \(place.offset) (\(length) bytes): \(String(cString: strerror(errno)))"
                    return
                }
                guard count > 0 else {
                    failure = "\(path) ends before the body at offset \(place.offset) (\(length) bytes): the file was cut or replaced"
                    return
                }
                done += count
            }
        }
        if let failure { throw Unavailable(reason: failure) }
        if let checksum = place.checksum, XXH64.checksum([data]) != checksum {
            throw Unavailable(reason: "\(path) holds other bytes at offset \(place.offset) (\(length) bytes) than were written there: the file is damaged")
        }
        return data
    }
}
