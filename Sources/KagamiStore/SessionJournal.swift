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
/// A record is `KGJ1`, the lengths of its three parts (UInt64, big-endian), then the parts: the
/// flow's stored JSON (`Flow.storedJSON()`), its request body and its response body.
final class SessionJournal: Sendable {
    let path: String
    private let state: Mutex<State>

    private struct State {
        var descriptor: Int32
        var size: Int
        /// Appended records not yet committed to SQLite.
        var uncommitted = 0
    }

    struct Record {
        var metadata: Data
        var requestBody: Data
        var responseBody: Data
    }

    static let magic: [UInt8] = Array("KGJ1".utf8)
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

    /// Appends the flow whose stored JSON is `metadata`. False when it could not be written
    /// whole (a full disk...): the caller then waits for the commit instead.
    func append(metadata: Data, of flow: Flow) -> Bool {
        let request = flow.request.body.data
        let response = flow.response?.body.data ?? Data()
        var prefix = Self.magic
        for part in [metadata, request, response] {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { prefix += $0 }
        }
        return prefix.withUnsafeBytes { prefixBytes in
            metadata.withUnsafeBytes { metadataBytes in
                request.withUnsafeBytes { requestBytes in
                    response.withUnsafeBytes { responseBytes in
                        let parts = [prefixBytes, metadataBytes, requestBytes, responseBytes]
                        return state.withLock { state in
                            guard state.descriptor >= 0, Self.write(parts, to: state.descriptor) else { return false }
                            state.size += parts.reduce(0) { $0 + $1.count }
                            state.uncommitted += 1
                            return true
                        }
                    }
                }
            }
        }
    }

    /// Writes every byte of `parts`, in order, with as few system calls as the kernel allows.
    private static func write(_ parts: [UnsafeRawBufferPointer], to descriptor: Int32) -> Bool {
        var vectors = parts.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var index = 0
        while index < vectors.count {
            let written = vectors[index...].withUnsafeBufferPointer { buffer in
                writev(descriptor, buffer.baseAddress, Int32(buffer.count))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            var remaining = written
            while index < vectors.count, remaining >= vectors[index].iov_len {
                remaining -= vectors[index].iov_len
                index += 1
            }
            if remaining > 0 {
                vectors[index].iov_base = vectors[index].iov_base.map { $0 + remaining }
                vectors[index].iov_len -= remaining
            }
        }
        return true
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
        func length() -> Int? {
            guard data.endIndex - offset >= 8 else { return nil }
            let value = data[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            offset += 8
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        func part(_ count: Int) -> Data? {
            guard count <= data.endIndex - offset else { return nil }
            defer { offset += count }
            return data.subdata(in: offset..<offset + count)
        }
        while data.endIndex - offset >= magic.count, Array(data[offset..<offset + magic.count]) == magic {
            offset += magic.count
            guard let metadataLength = length(), let requestLength = length(), let responseLength = length(),
                  let metadata = part(metadataLength), let request = part(requestLength), let response = part(responseLength) else { break }
            records.append(Record(metadata: metadata, requestBody: request, responseBody: response))
        }
        return records
    }
}
