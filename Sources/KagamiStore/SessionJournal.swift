import Foundation
import KagamiFlow
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What lets a finished exchange survive `kill -9` without its client waiting for SQLite: before
/// the client gets the exchange's last byte, the flow is appended to a journal beside the session
/// (`<session>-flows`, readable by its owner only) with one `pwritev(2)`. Handed to the
/// operating system, the bytes outlive the process whatever happens to it (power loss is what
/// `PRAGMA synchronous = NORMAL` gives up too). The session's writer commits the flow to SQLite
/// in the background, and once every appended flow is committed the journal starts over. Opening
/// the session replays a journal a killed process left behind.
///
/// Starting over never cuts the file while the proxy runs: `ftruncate` waits for the kernel to
/// finish writing back any of the file's pages under way, and appends would wait behind it (on
/// a disk busy with the body log, for hundreds of milliseconds). Instead the journal begins
/// with a header, `KGJ3` and a number drawn at random each time it starts over, and every
/// record carries the number of its header. Records are written from the header on, over the
/// old ones; a replay reads records while they carry the header's number, so a committed
/// record left further on is never read again.
///
/// A record is that number, the lengths of its three parts and where the session's body log
/// holds each body (six UInt64, big-endian; an offset of all ones for a body in the record),
/// then the parts in the record: the flow's stored JSON (`Flow.storedJSON()`), its request body
/// and its response body unless they are in the body log (`SessionBodyLog`, written before the
/// record). Journals of earlier formats are read too: records each beginning `KGJ2` (lengths
/// and places, as now), or `KGJ1` (three lengths, every part in the record), appended until
/// the file was cut.
final class SessionJournal: Sendable {
    let path: String
    private let state: Mutex<State>

    private struct State {
        var descriptor: Int32
        /// Where the next record goes; 0 when the header is still to be written.
        var end: Int
        /// What this journal's header and records carry since it last started over.
        var number = UInt64.random(in: 0...UInt64.max)
        /// Appended records not yet committed to SQLite.
        var uncommitted = 0
        /// False while the file holds what a process before left (to replay, then `empty()`):
        /// nothing is written over that.
        var writable: Bool
    }

    /// A journaled body: its bytes, or its place in the session's body log.
    enum Body: Equatable {
        case inline(Data)
        case logged(offset: Int64, length: Int)
    }

    struct Record {
        var metadata: Data
        var request: Body
        var response: Body
    }

    static let magic: [UInt8] = Array("KGJ3".utf8)
    static let secondMagic: [UInt8] = Array("KGJ2".utf8)
    static let firstMagic: [UInt8] = Array("KGJ1".utf8)
    /// The magic and the header's number.
    static let headerSize = 12

    /// What the journal begins with while its records carry `number`.
    static func header(_ number: UInt64) -> [UInt8] {
        magic + withUnsafeBytes(of: number.bigEndian) { Array($0) }
    }
    /// Starts over once nothing in it is uncommitted and it has grown past this, or when the
    /// writer is idle.
    static let startsOverAfter = 1 << 20

    /// Another live process records into the session and owns its journal.
    struct InUse: Error {}

    /// Opens the journal for this process alone (an advisory lock the system lets go of when
    /// the process ends, however it ends); `InUse` when another process holds it.
    init(path: String) throws {
        self.path = path
        // Not O_APPEND: records go where `end` says (Linux's pwrite ignores its offset on a file
        // opened for appending).
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw FlowStoreError("cannot open the session journal \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw InUse()
        }
        var status = stat()
        let empty = fstat(descriptor, &status) == 0 && status.st_size == 0
        state = Mutex(State(descriptor: descriptor, end: 0, writable: empty))
    }

    /// A journal whose every record is committed goes with its process.
    deinit {
        let path = self.path
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            if state.writable, state.uncommitted == 0 { unlink(path) }
            close(state.descriptor)
        }
    }

    /// Appends a flow: its stored JSON and its bodies. False when it could not be written
    /// whole (a full disk...), or the journal a process before left is not replayed yet: the
    /// caller then waits for the commit instead.
    func append(metadata: Data, request: Body, response: Body) -> Bool {
        func inline(_ body: Body) -> Data {
            if case .inline(let data) = body { return data }
            return Data()
        }
        let requestBytes = inline(request)
        let responseBytes = inline(response)
        return state.withLock { state in
            guard state.descriptor >= 0, state.writable else { return false }
            var prefix: [UInt8] = []
            prefix.reserveCapacity(Self.headerSize + 48)
            func add(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { prefix += $0 } }
            if state.end == 0 { prefix += Self.header(state.number) }
            add(state.number)
            add(UInt64(metadata.count))
            for body in [request, response] {
                switch body {
                case .inline(let data): add(UInt64(data.count))
                case .logged(_, let length): add(UInt64(length))
                }
            }
            for body in [request, response] {
                if case .logged(let offset, _) = body { add(UInt64(offset)) } else { add(UInt64.max) }
            }
            var written = 0
            let complete = prefix.withUnsafeBytes { prefixBuffer in
                metadata.withUnsafeBytes { metadataBuffer in
                    requestBytes.withUnsafeBytes { requestBuffer in
                        responseBytes.withUnsafeBytes { responseBuffer in
                            Descriptor.write(
                                [prefixBuffer, metadataBuffer, requestBuffer, responseBuffer], to: state.descriptor, at: Int64(state.end)
                            ) { written += $0 }
                        }
                    }
                }
            }
            // A record written in part stays where the next one goes, which writes over it.
            guard complete else { return false }
            state.end += written
            state.uncommitted += 1
            return true
        }
    }

    /// `count` appended records are now in SQLite. When none is left uncommitted the journal
    /// starts over if it has grown large, or whatever its size once the writer is `idle`: a new
    /// header, with a new number, and records from there on.
    func committed(_ count: Int, idle: Bool) {
        state.withLock { state in
            state.uncommitted -= count
            guard state.uncommitted == 0, state.end > Self.headerSize, state.end >= Self.startsOverAfter || idle, state.descriptor >= 0 else { return }
            var number = UInt64.random(in: 0...UInt64.max)
            if number == state.number { number &+= 1 }
            let rewritten = Self.header(number).withUnsafeBytes { Descriptor.write([$0], to: state.descriptor, at: 0) { _ in } }
            if rewritten {
                state.number = number
                state.end = Self.headerSize
            } else if ftruncate(state.descriptor, 0) == 0 {
                state.end = 0
            }
        }
    }

    /// Empties the journal whatever it holds, once what a process before left in it is replayed
    /// (or nothing was left to replay); from then on it is written.
    func empty() {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            if ftruncate(state.descriptor, 0) == 0 {
                state.end = 0
                state.uncommitted = 0
                state.writable = true
            }
        }
    }

    /// The whole records in the journal at `path`, in the order they were appended. A record
    /// cut short (the machine lost power mid-write) ends the reading.
    static func records(at path: String) throws -> [Record] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        var records: [Record] = []
        var offset = data.startIndex
        func length64() -> UInt64? {
            guard data.endIndex - offset >= 8 else { return nil }
            defer { offset += 8 }
            return data[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        func length() -> Int? {
            guard let value = length64() else { return nil }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        /// A body's place in the body log: `.some(nil)` for a body in the record, nil for a
        /// record cut short.
        func place() -> Int?? {
            guard let value = length64() else { return nil }
            if value == UInt64.max { return .some(nil) }
            return value <= UInt64(Int.max) ? .some(Int(value)) : nil
        }
        func part(_ count: Int) -> Data? {
            guard count <= data.endIndex - offset else { return nil }
            defer { offset += count }
            return data.subdata(in: offset..<offset + count)
        }
        /// The three parts' lengths, the bodies' places (for a record of the second format on)
        /// and the parts; nil for a record cut short.
        func record(placed: Bool) -> Record? {
            guard let metadataLength = length(), let requestLength = length(), let responseLength = length() else { return nil }
            var places: [Int?] = [nil, nil]
            if placed {
                guard let requestPlace = place(), let responsePlace = place() else { return nil }
                places = [requestPlace, responsePlace]
            }
            guard let metadata = part(metadataLength) else { return nil }
            var bodies: [Body] = []
            for (length, place) in zip([requestLength, responseLength], places) {
                if let place {
                    bodies.append(.logged(offset: Int64(place), length: length))
                } else if let bytes = part(length) {
                    bodies.append(.inline(bytes))
                }
            }
            guard bodies.count == 2 else { return nil }
            return Record(metadata: metadata, request: bodies[0], response: bodies[1])
        }
        func tag() -> [UInt8]? {
            guard data.endIndex - offset >= magic.count else { return nil }
            return Array(data[offset..<offset + magic.count])
        }
        if tag() == magic {
            offset += magic.count
            guard let number = length64() else { return [] }
            while let next = length64(), next == number, let record = record(placed: true) {
                records.append(record)
            }
            return records
        }
        while let tag = tag(), tag == secondMagic || tag == firstMagic {
            offset += magic.count
            guard let record = record(placed: tag == secondMagic) else { break }
            records.append(record)
        }
        return records
    }
}
