import Foundation
import KagamiFlow
import KagamiOutput
import KagamiStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local file holding what could not be written to the server while it was away, so an
/// exchange is durable (on this machine) before its client sees it complete, and is written
/// to the shared store, in order, once the server is back.
///
/// Each record is a 4-byte big-endian length and a JSON document; appends are followed by
/// `fsync`. A record torn by a crash is the last one, and its client never saw its exchange
/// complete, so reading stops there. The file is locked (`flock`) by the store that writes
/// or replays it, so a store opening the same session later takes over only what no running
/// store holds.
struct WriteSpool: Sendable {
    let path: String
    private let descriptor: Int32
    /// Records appended and bytes in the file.
    private(set) var records: Int
    private(set) var bytes: Int

    struct Record: Codable, Sendable {
        /// Makes writing the record again (a replay after a crash) change nothing.
        var key: UUID
        var flow: Flow?
        var messages: [WebSocketMessage]?
        var violations: [ContractViolation]?
        var flowID: UUID?
        var note: SessionNote?
    }

    /// The prefix of every spool file of one session in one database.
    static func prefix(session: String, location: PostgresLocation) -> String {
        let safe = session.unicodeScalars.map { scalar -> String in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII ? String(scalar) : "_"
        }.joined()
        // FNV-1a: stable across runs, unlike `hashValue`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(location.host):\(location.port)/\(location.database)/\(session)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "\(safe.prefix(64))-\(String(hash, radix: 16))-"
    }

    /// A new spool file in `directory` (created, owner-only, when missing).
    static func create(in directory: String, prefix: String) throws -> WriteSpool {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = (directory as NSString).appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString.prefix(8)).spool")
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FlowStoreError("cannot create spool file \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw FlowStoreError("cannot lock spool file \(path): \(String(cString: strerror(errno)))")
        }
        return WriteSpool(path: path, descriptor: descriptor, records: 0, bytes: 0)
    }

    /// Spool files of this session left by stores that are gone (killed, or stopped while the
    /// server was away), locked for this one, oldest first.
    static func leftovers(in directory: String, prefix: String) -> [WriteSpool] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var found: [(WriteSpool, Date)] = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".spool") {
            let path = (directory as NSString).appendingPathComponent(name)
            let descriptor = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                continue
            }
            var status = stat()
            fstat(descriptor, &status)
            let modified = Date(timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec))
            found.append((WriteSpool(path: path, descriptor: descriptor, records: 0, bytes: Int(status.st_size)), modified))
        }
        return found.sorted { $0.1 < $1.1 }.map(\.0)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .deferredToDate
        return encoder
    }()

    /// Appends `records` and waits for them to reach the disk.
    mutating func append(_ records: [Record]) throws {
        var data = Data()
        for record in records {
            let json = try Self.encoder.encode(record)
            var length = UInt32(json.count).bigEndian
            withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
            data.append(json)
        }
        guard Descriptor.write([data], to: descriptor) else {
            throw FlowStoreError("cannot write spool file \(path): \(String(cString: strerror(errno)))")
        }
        guard fsync(descriptor) == 0 else {
            throw FlowStoreError("cannot write spool file \(path): \(String(cString: strerror(errno)))")
        }
        self.records += records.count
        bytes += data.count
    }

    /// Reads the records in order, `chunk` at a time, handing each chunk to `body`; stops at a
    /// torn last record. Returns the number of records read.
    @discardableResult
    func read(chunk: Int, _ body: ([Record]) async throws -> Void) async throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FlowStoreError("cannot read spool file \(path)")
        }
        defer { try? handle.close() }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        var batch: [Record] = []
        var total = 0
        while true {
            guard let header = try handle.read(upToCount: 4), header.count == 4 else { break }
            let length = header.reduce(0) { ($0 << 8) | Int($1) }
            guard let json = try handle.read(upToCount: length), json.count == length,
                  let record = try? decoder.decode(Record.self, from: json) else { break }
            batch.append(record)
            total += 1
            if batch.count >= chunk {
                try await body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try await body(batch) }
        return total
    }

    /// Deletes the file: everything in it is in the database.
    func remove() {
        unlink(path)
        close(descriptor)
    }

    /// Lets go of the file, keeping it for a later store to replay.
    func release() {
        close(descriptor)
    }
}
