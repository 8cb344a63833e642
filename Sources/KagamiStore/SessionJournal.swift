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
/// (`<session>-flows`, readable by its owner only) with one `writev(2)`. Handed to the
/// operating system, the bytes outlive the process whatever happens to it (power loss is what
/// `PRAGMA synchronous = NORMAL` gives up too). The session's writer commits the flow to SQLite
/// in the background, and once every appended flow is committed the journal is emptied. Opening
/// the session replays a journal a killed process left behind.
///
/// A record is `KGJ2`, the lengths of its three parts and where the session's body log holds
/// each body (five UInt64, big-endian; an offset of all ones for a body in the record), then
/// the parts in the record: the flow's stored JSON (`Flow.storedJSON()`), its request body and
/// its response body unless they are in the body log (`SessionBodyLog`, written before the
/// record). Records of the first format (`KGJ1`: three lengths, every part in the record) are
/// read too.
final class SessionJournal: Sendable {
    let path: String
    private let state: Mutex<State>

    private struct State {
        var descriptor: Int32
        var size: Int
        /// Appended records not yet committed to SQLite.
        var uncommitted = 0
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

    static let magic: [UInt8] = Array("KGJ2".utf8)
    static let firstMagic: [UInt8] = Array("KGJ1".utf8)
    /// Emptied once nothing in it is uncommitted and it has grown past this, so it stays small
    /// without a truncate per batch.
    static let emptiesAfter = 1 << 20

    /// Another live process records into the session and owns its journal.
    struct InUse: Error {}

    /// Opens the journal for this process alone (an advisory lock the system lets go of when
    /// the process ends, however it ends); `InUse` when another process holds it.
    init(path: String) throws {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw FlowStoreError("cannot open the session journal \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw InUse()
        }
        var status = stat()
        let size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
        state = Mutex(State(descriptor: descriptor, size: size))
    }

    deinit {
        let path = self.path
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            close(state.descriptor)
            if state.size == 0 { unlink(path) }
        }
    }

    /// Appends a flow: its stored JSON and its bodies. False when it could not be written
    /// whole (a full disk...): the caller then waits for the commit instead.
    func append(metadata: Data, request: Body, response: Body) -> Bool {
        var prefix = Self.magic
        prefix.reserveCapacity(Self.magic.count + 40)
        func add(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { prefix += $0 } }
        func inline(_ body: Body) -> Data {
            if case .inline(let data) = body { return data }
            return Data()
        }
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
        let requestBytes = inline(request)
        let responseBytes = inline(response)
        return prefix.withUnsafeBytes { prefixBuffer in
            metadata.withUnsafeBytes { metadataBuffer in
                requestBytes.withUnsafeBytes { requestBuffer in
                    responseBytes.withUnsafeBytes { responseBuffer in
                        state.withLock { state in
                            guard state.descriptor >= 0 else { return false }
                            var written = 0
                            let complete = Descriptor.write([prefixBuffer, metadataBuffer, requestBuffer, responseBuffer], to: state.descriptor) { written += $0 }
                            state.size += written
                            if complete { state.uncommitted += 1 }
                            return complete
                        }
                    }
                }
            }
        }
    }

    /// `count` appended records are now in SQLite. When none is left uncommitted the journal
    /// is emptied (appends go on from its start: it is opened with O_APPEND) if it has grown
    /// large, or whatever its size once the writer is `idle`.
    func committed(_ count: Int, idle: Bool) {
        state.withLock { state in
            state.uncommitted -= count
            guard state.uncommitted == 0, state.size > 0, state.size >= Self.emptiesAfter || idle, state.descriptor >= 0 else { return }
            if ftruncate(state.descriptor, 0) == 0 { state.size = 0 }
        }
    }

    /// Empties the journal whatever it holds: after a replay, or when the session is cleared
    /// and closed with everything committed.
    func empty() {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            if ftruncate(state.descriptor, 0) == 0 {
                state.size = 0
                state.uncommitted = 0
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
        while data.endIndex - offset >= magic.count {
            let tag = Array(data[offset..<offset + magic.count])
            guard tag == magic || tag == firstMagic else { break }
            offset += magic.count
            guard let metadataLength = length(), let requestLength = length(), let responseLength = length() else { break }
            var places: [Int?] = [nil, nil]
            if tag == magic {
                guard let requestPlace = place(), let responsePlace = place() else { break }
                places = [requestPlace, responsePlace]
            }
            guard let metadata = part(metadataLength) else { break }
            var bodies: [Body] = []
            for (length, place) in zip([requestLength, responseLength], places) {
                if let place {
                    bodies.append(.logged(offset: Int64(place), length: length))
                } else if let bytes = part(length) {
                    bodies.append(.inline(bytes))
                }
            }
            guard bodies.count == 2 else { break }
            records.append(Record(metadata: metadata, request: bodies[0], response: bodies[1]))
        }
        return records
    }
}
