import Foundation
import KagamiFlow
import KagamiOutput
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
/// with a header, `KGJ4`, a number drawn at random each time it starts over and the header's
/// checksum, and every record carries the number of its header. Records are written from the
/// header on, over the old ones; a replay reads records while they carry the header's number,
/// so a committed record left further on is never read again.
///
/// A record begins with its head: that number, the lengths of its three parts, where the
/// session's body log holds each body (an offset of all ones for a body in the record), the
/// checksums of the bodies in the body log, of the parts in the record and of the head itself
/// (ten UInt64, big-endian; checksums are `XXH64`). Then come the parts in the record: the
/// flow's stored record (`Flow.storedRecord()`), its request body and its response body unless
/// they are in the body log (`SessionBodyLog`, written before the record).
///
/// The top byte of the first length says what the record holds (`Kind`): 0 for a flow, all a
/// session file's journal holds (so journals written before there were kinds read as they
/// did). A shared store's spool (`SessionSpool`) is a journal too, fsynced, holding every entry
/// of a session's writer: flows, and the entry's key with a WebSocket message list, contract
/// violations or a note as JSON in the first part. A whole record of a kind its reader doesn't
/// read is set aside like damage, and said to be of that kind.
///
/// Damaged bytes (a disk, a stray write) cost only the records they fall on: a record is read
/// when its checksums hold and its first part reads as its kind; past one that isn't, reading goes on at the
/// next place carrying the header's number where a record is whole. What lies between is
/// damaged: a replay sets it aside in a file of its own (`setAside(_:)`) and says where it was.
///
/// Journals of earlier formats are read too, with their record's JSON as the only check:
/// `KGJ3` (a header without checksum, records as now without checksums), records each
/// beginning `KGJ2` (lengths and places), or `KGJ1` (three lengths, every part in the record),
/// appended until the file was cut.
package final class SessionJournal: Sendable {
    package let path: String
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
    package enum Body: Equatable {
        case inline(Data)
        case logged(SessionBodyLog.Place)
    }

    /// What a record holds: the top byte of its head's first length.
    package enum Kind: UInt8, Sendable, CaseIterable {
        case flow = 0
        case messages = 1
        case violations = 2
        case note = 3
    }

    package struct Record {
        /// The first part: a flow's stored record, or an entry's key and JSON.
        package var metadata: Data
        /// The first part read back: a record that doesn't read as its kind is not read.
        package var item: SessionEntry.Item
        /// Identifies the entry's rows (`SessionEntry.key`); a flow's is its id.
        package var key: UUID
        package var request: Body
        package var response: Body

        package var flow: Flow? {
            if case .flow(let flow) = item { return flow }
            return nil
        }
    }

    package static let magic: [UInt8] = Array("KGJ4".utf8)
    static let thirdMagic: [UInt8] = Array("KGJ3".utf8)
    static let secondMagic: [UInt8] = Array("KGJ2".utf8)
    static let firstMagic: [UInt8] = Array("KGJ1".utf8)
    /// The magic, the header's number and their checksum.
    static let headerSize = 20
    /// A record's head: number, three lengths, two places, three checksums of parts and the
    /// head's own.
    static let headSize = 80
    /// The header of the third format: its magic and number.
    static let thirdHeaderSize = 12

    /// What the journal begins with while its records carry `number`.
    static func header(_ number: UInt64) -> [UInt8] {
        var header = magic
        header.append(bigEndian: number)
        header.append(bigEndian: header.withUnsafeBytes { XXH64.checksum($0) })
        return header
    }
    /// Starts over once nothing in it is uncommitted and it has grown past this, or when the
    /// writer is idle.
    static let startsOverAfter = 1 << 20

    /// Another live process records into the session and owns its journal.
    package struct InUse: Error {}

    /// Opens the journal for this process alone (an advisory lock the system lets go of when
    /// the process ends, however it ends); `InUse` when another process holds it.
    package init(path: String) throws {
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

    /// Appends a flow: its stored record and its bodies (or, `kind` saying so, another entry:
    /// `append(_:)`). False when it could not be written whole (a full disk...), or the journal
    /// a process before left is not replayed yet: the caller then waits for the commit instead.
    func append(kind: Kind = .flow, metadata: Data, request: Body, response: Body) -> Bool {
        func inline(_ body: Body) -> Data {
            if case .inline(let data) = body { return data }
            return Data()
        }
        let requestBytes = inline(request)
        let responseBytes = inline(response)
        // Outside the lock: only the number is the journal's.
        var head: [UInt8] = []
        head.reserveCapacity(Self.headSize)
        head.append(bigEndian: 0)
        head.append(bigEndian: UInt64(kind.rawValue) << 56 | UInt64(metadata.count))
        for body in [request, response] {
            switch body {
            case .inline(let data): head.append(bigEndian: UInt64(data.count))
            case .logged(let place): head.append(bigEndian: UInt64(place.length))
            }
        }
        for body in [request, response] {
            if case .logged(let place) = body { head.append(bigEndian: UInt64(place.offset)) } else { head.append(bigEndian: UInt64.max) }
        }
        for body in [request, response] {
            if case .logged(let place) = body { head.append(bigEndian: place.checksum ?? 0) } else { head.append(bigEndian: 0) }
        }
        head.append(bigEndian: XXH64.checksum([metadata, requestBytes, responseBytes]))
        return state.withLock { state in
            guard state.descriptor >= 0, state.writable else { return false }
            head.replaceBigEndian(state.number, at: 0)
            head.append(bigEndian: head.withUnsafeBytes { XXH64.checksum($0) })
            let prefix = state.end == 0 ? Self.header(state.number) + head : head
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

    /// Waits for what is appended to reach the disk: a spool's client sees its exchange complete
    /// only then, where a session file's journal is content with the system holding the bytes.
    package func synchronize() throws {
        let failure: String? = state.withLock { state in
            guard state.descriptor >= 0, fsync(state.descriptor) != 0 else { return nil }
            return String(cString: strerror(errno))
        }
        if let failure { throw FlowStoreError("cannot write \(path) to the disk: \(failure)") }
    }

    /// Bytes written since the journal last started over.
    package var size: Int { state.withLock { $0.end } }

    /// `count` appended records are now in SQLite. When none is left uncommitted the journal
    /// starts over if it has grown large, or whatever its size once the writer is `idle`: a new
    /// header, with a new number, and records from there on. The number of the record right
    /// after the header is zeroed with it: a replay that finds the header damaged takes the
    /// number of the record there, which must then be one of this round (`Reader.contents()`).
    func committed(_ count: Int, idle: Bool) {
        state.withLock { state in
            state.uncommitted -= count
            guard state.uncommitted == 0, state.end > Self.headerSize, state.end >= Self.startsOverAfter || idle, state.descriptor >= 0 else { return }
            var number = UInt64.random(in: 0...UInt64.max)
            if number == state.number { number &+= 1 }
            let start = Self.header(number) + [UInt8](repeating: 0, count: 8)
            let rewritten = start.withUnsafeBytes { Descriptor.write([$0], to: state.descriptor, at: 0) { _ in } }
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

    // MARK: Reading

    /// What a journal holds: its whole records, in the order they were appended, and where it
    /// is damaged.
    package struct Contents {
        package var records: [Record] = []
        package var damage: [Damage] = []
        /// The journal's bytes, for `setAside(_:)`.
        fileprivate var bytes: [UInt8] = []
    }

    /// Bytes of a journal that hold no whole record of the round being replayed, where one
    /// was: records damaged, cut short, or a damaged header.
    package struct Damage: Equatable {
        package var bytes: Range<Int>
        /// Records that began among these bytes, at least: damage may fall on where one begins.
        package var records: Int
        /// A whole record of a kind the reader doesn't read (a journal of a later version, or a
        /// spool's entry in a session file's journal): its kind's number.
        package var unreadKind: UInt8? = nil
    }

    /// The whole records in the journal at `path`, in the order they were appended.
    static func records(at path: String) -> [Record] {
        contents(at: path).records
    }

    /// The whole records in the journal at `path` and where it is damaged. A record cut short
    /// at the end (the machine lost power mid-write) is damaged too; what an earlier round left
    /// after the last record is not.
    /// Records of other kinds than `kinds` are set aside as damage.
    package static func contents(at path: String, kinds: Set<Kind> = [.flow]) -> Contents {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return Contents() }
        var contents = Reader(bytes: [UInt8](data), kinds: kinds).contents()
        if !contents.damage.isEmpty { contents.bytes = [UInt8](data) }
        return contents
    }

    /// Copies the damaged parts of `contents`, one after another, into a file of their own beside
    /// the journal, its owner's alone (`<session>-flows-damaged`, then `-damaged-2`... so an
    /// earlier one stays); returns its path.
    package func setAside(_ contents: Contents) throws -> String {
        var attempt = 1
        while true {
            let aside = attempt == 1 ? path + "-damaged" : path + "-damaged-\(attempt)"
            let descriptor = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                if errno == EEXIST {
                    attempt += 1
                    continue
                }
                throw FlowStoreError("cannot create \(aside): \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            let parts = contents.damage.map { Data(contents.bytes[$0.bytes]) }
            guard Descriptor.write(parts, to: descriptor) else {
                let reason = String(cString: strerror(errno))
                unlink(aside)
                throw FlowStoreError("cannot write \(aside): \(reason)")
            }
            return aside
        }
    }

    /// What a replay of `contents` found damaged, its bytes set aside (`setAside(_:)`) or why they
    /// could not be; nil when nothing is. `name` says what the journal is, in the report.
    package func setAsideDamage(of contents: Contents, name: String) -> JournalDamage? {
        guard !contents.damage.isEmpty else { return nil }
        var report = JournalDamage(
            journal: path,
            parts: contents.damage.map { JournalDamage.Part(bytes: $0.bytes, records: $0.records, unreadKind: $0.unreadKind) },
            replayed: contents.records.count, name: name)
        do {
            report.asideFile = try setAside(contents)
        } catch {
            report.notSetAside = "\(error)"
        }
        return report
    }

    /// The files earlier replays set damaged parts of the journal at `path` aside in.
    package static func asideFiles(of path: String) -> [String] {
        let folder = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + "-damaged"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        return names.filter { $0 == prefix || $0.hasPrefix(prefix + "-") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
            .map { (folder as NSString).appendingPathComponent($0) }
    }

    /// Reads records out of a journal's bytes, and past those that are not whole.
    private struct Reader {
        let bytes: [UInt8]
        /// The kinds of records read; others are damage.
        let kinds: Set<Kind>

        /// What lies at a place where a record is whole.
        enum Found {
            case record(Record)
            /// A record of a kind not read, by its kind's number.
            case unread(UInt8)
        }

        func contents() -> Contents {
            let tag = Array(bytes.prefix(4))
            if tag == magic, bytes.count >= headerSize, let number = uint64(at: 4),
               uint64(at: 12) == bytes.withUnsafeBytes({ XXH64.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<12])) }) {
                return fourthFormat(from: headerSize, number: number)
            }
            if tag == thirdMagic, let number = uint64(at: 4) {
                return thirdFormat(from: thirdHeaderSize, number: number)
            }
            if tag == secondMagic || tag == firstMagic {
                return earlierFormats(from: 0)
            }
            // The header is damaged. Its round's first record, when whole, says the number (one
            // an earlier round left there lost its number when this round began). Without it,
            // records further on can't be told from ones an earlier round left, which may have
            // been cleared since: nothing is replayed and all of it is set aside.
            if fourthFormatRecord(at: headerSize, number: nil) != nil, let number = uint64(at: headerSize) {
                var contents = fourthFormat(from: headerSize, number: number)
                contents.damage.insert(Damage(bytes: 0..<headerSize, records: 0), at: 0)
                return contents
            }
            if let start = next(after: -1, of: [secondMagic, firstMagic], where: { earlierFormatRecord(at: $0) != nil }) {
                var contents = earlierFormats(from: start)
                contents.damage.insert(Damage(bytes: 0..<start, records: start > 0 ? 1 : 0), at: 0)
                return contents
            }
            return Contents(damage: [Damage(bytes: 0..<bytes.count, records: 0)])
        }

        // MARK: Formats

        /// Records of this round carry `number`; what follows the last of them is an earlier
        /// round's unless it carries the number too (a record damaged or cut short).
        func fourthFormat(from start: Int, number: UInt64) -> Contents {
            let pattern = bigEndianBytes(number)
            return read(from: start, patterns: [pattern], record: { fourthFormatRecord(at: $0, number: number) }) { tail in
                guard bytes[tail...].starts(with: pattern) else { return tail }
                if let length = fourthFormatLength(at: tail) { return min(bytes.count, tail + length) }
                return bytes.count
            }
        }

        func thirdFormat(from start: Int, number: UInt64) -> Contents {
            let pattern = bigEndianBytes(number)
            return read(from: start, patterns: [pattern], record: { thirdFormatRecord(at: $0, number: number) }) { tail in
                bytes[tail...].starts(with: pattern) ? bytes.count : tail
            }
        }

        /// Appended until the file was cut: whatever follows the last whole record is damaged.
        func earlierFormats(from start: Int) -> Contents {
            read(from: start, patterns: [secondMagic, firstMagic], record: earlierFormatRecord(at:)) { _ in bytes.count }
        }

        /// Reads records from `start` on. Where none is whole, the bytes up to the next one
        /// that is (looked for where `patterns` begin one) are damaged; `tail` says where the
        /// damaged bytes after the last whole record end (where they begin: none are).
        func read(from start: Int, patterns: [[UInt8]], record: (Int) -> (Found, end: Int)?, tail: (Int) -> Int) -> Contents {
            var contents = Contents()
            var offset = start
            var damagedFrom: Int?
            func damage(_ range: Range<Int>) {
                guard !range.isEmpty else { return }
                var records = 0
                var position = range.lowerBound - 1
                while let found = next(after: position, of: patterns), found < range.upperBound {
                    records += 1
                    position = found
                }
                contents.damage.append(Damage(bytes: range, records: max(1, records)))
            }
            while offset < bytes.count {
                if let (found, end) = record(offset) {
                    if let from = damagedFrom { damage(from..<offset) }
                    damagedFrom = nil
                    switch found {
                    case .record(let record): contents.records.append(record)
                    case .unread(let kind): contents.damage.append(Damage(bytes: offset..<end, records: 1, unreadKind: kind))
                    }
                    offset = end
                    continue
                }
                if damagedFrom == nil { damagedFrom = offset }
                guard let candidate = next(after: offset, of: patterns) else { break }
                offset = candidate
            }
            if let from = damagedFrom { damage(from..<tail(from)) }
            return contents
        }

        /// A record of the current format at `offset` carrying `number` (any, when nil), whole,
        /// and where it ends.
        func fourthFormatRecord(at offset: Int, number: UInt64?) -> (Found, end: Int)? {
            guard let length = fourthFormatLength(at: offset), offset + length <= bytes.count,
                  number == nil || uint64(at: offset) == number,
                  let (kindNumber, metadataLength) = kindAndLength(at: offset + 8), let requestLength = size(at: offset + 16),
                  let responseLength = size(at: offset + 24), let requestPlace = place(at: offset + 32),
                  let responsePlace = place(at: offset + 40), let requestChecksum = uint64(at: offset + 48),
                  let responseChecksum = uint64(at: offset + 56), let partsChecksum = uint64(at: offset + 64) else { return nil }
            let parts = offset + headSize..<offset + length
            guard bytes.withUnsafeBytes({ XXH64.checksum(UnsafeRawBufferPointer(rebasing: $0[parts])) }) == partsChecksum else { return nil }
            var position = parts.lowerBound
            let metadata = Data(bytes[position..<position + metadataLength])
            position += metadataLength
            var bodies: [Body] = []
            for (length, place, checksum) in [(requestLength, requestPlace, requestChecksum), (responseLength, responsePlace, responseChecksum)] {
                if let place {
                    bodies.append(.logged(SessionBodyLog.Place(offset: Int64(place), length: length, checksum: checksum)))
                } else {
                    bodies.append(.inline(Data(bytes[position..<position + length])))
                    position += length
                }
            }
            guard let kind = Kind(rawValue: kindNumber), kinds.contains(kind) else { return (.unread(kindNumber), offset + length) }
            guard let (item, key) = Self.item(kind, metadata) else { return nil }
            return (.record(Record(metadata: metadata, item: item, key: key, request: bodies[0], response: bodies[1])), offset + length)
        }

        /// The length of the record at `offset` when its head is whole (its checksum holds).
        func fourthFormatLength(at offset: Int) -> Int? {
            // Lengths past the file's size say at once that no head begins here, before the
            // checksum is worked out: looking for a record byte by byte stays cheap.
            guard offset >= 0, offset + headSize <= bytes.count,
                  let (_, metadataLength) = kindAndLength(at: offset + 8), metadataLength <= bytes.count,
                  let requestLength = size(at: offset + 16), let responseLength = size(at: offset + 24),
                  let requestPlace = place(at: offset + 32), let responsePlace = place(at: offset + 40),
                  requestPlace != nil || requestLength <= bytes.count, responsePlace != nil || responseLength <= bytes.count,
                  bytes.withUnsafeBytes({ XXH64.checksum(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + 72])) }) == uint64(at: offset + 72)
            else { return nil }
            return headSize + metadataLength + (requestPlace == nil ? requestLength : 0) + (responsePlace == nil ? responseLength : 0)
        }

        func thirdFormatRecord(at offset: Int, number: UInt64) -> (Found, end: Int)? {
            guard uint64(at: offset) == number else { return nil }
            return parts(at: offset + 8, placed: true)
        }

        func earlierFormatRecord(at offset: Int) -> (Found, end: Int)? {
            guard offset + 4 <= bytes.count else { return nil }
            let tag = Array(bytes[offset..<offset + 4])
            guard tag == secondMagic || tag == firstMagic else { return nil }
            return parts(at: offset + 4, placed: tag == secondMagic)
        }

        /// The three lengths, the bodies' places (`placed`: from the second format on) and the
        /// parts of a record of an earlier format, whose JSON must be a flow.
        func parts(at start: Int, placed: Bool) -> (Found, end: Int)? {
            guard let metadataLength = size(at: start), let requestLength = size(at: start + 8),
                  let responseLength = size(at: start + 16) else { return nil }
            var position = start + 24
            var places: [Int?] = [nil, nil]
            if placed {
                guard let requestPlace = place(at: position), let responsePlace = place(at: position + 8) else { return nil }
                places = [requestPlace, responsePlace]
                position += 16
            }
            guard metadataLength <= bytes.count - position else { return nil }
            let metadata = Data(bytes[position..<position + metadataLength])
            position += metadataLength
            var bodies: [Body] = []
            for (length, place) in zip([requestLength, responseLength], places) {
                if let place {
                    bodies.append(.logged(SessionBodyLog.Place(offset: Int64(place), length: length, checksum: nil)))
                } else {
                    guard length <= bytes.count - position else { return nil }
                    bodies.append(.inline(Data(bytes[position..<position + length])))
                    position += length
                }
            }
            guard let (item, key) = Self.item(.flow, metadata) else { return nil }
            return (.record(Record(metadata: metadata, item: item, key: key, request: bodies[0], response: bodies[1])), position)
        }

        // MARK: Fields

        /// What a record of `kind` holds, with its key; nil when its first part isn't that.
        static func item(_ kind: Kind, _ metadata: Data) -> (SessionEntry.Item, key: UUID)? {
            if kind == .flow {
                guard let flow = try? Flow(stored: metadata) else { return nil }
                return (.flow(flow), flow.id)
            }
            return SessionJournal.entry(kind, metadata)
        }

        /// A record's kind and the length of its first part, from the head's first length.
        func kindAndLength(at offset: Int) -> (UInt8, Int)? {
            guard let value = uint64(at: offset) else { return nil }
            return (UInt8(value >> 56), Int(value & 0x00FF_FFFF_FFFF_FFFF))
        }

        func uint64(at offset: Int) -> UInt64? {
            guard offset >= 0, offset + 8 <= bytes.count else { return nil }
            return bytes[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }

        /// A length (of a part in the record, or of a body in the body log).
        func size(at offset: Int) -> Int? {
            guard let value = uint64(at: offset), value <= UInt64(Int64.max) else { return nil }
            return Int(value)
        }

        /// A body's place in the body log: `.some(nil)` for a body in the record, nil for a
        /// place no body log has.
        func place(at offset: Int) -> Int?? {
            guard let value = uint64(at: offset) else { return nil }
            if value == UInt64.max { return .some(nil) }
            return value <= UInt64(Int64.max) ? .some(Int(value)) : nil
        }

        /// The first offset past `offset` where one of `patterns` begins (and `accepted` holds).
        func next(after offset: Int, of patterns: [[UInt8]], where accepted: (Int) -> Bool = { _ in true }) -> Int? {
            var position = max(0, offset + 1)
            while position < bytes.count {
                let found = patterns.compactMap { pattern in find(pattern, from: position) }.min()
                guard let found else { return nil }
                if accepted(found) { return found }
                position = found + 1
            }
            return nil
        }

        /// Where `pattern` first begins from `start` on: its first byte found with `memchr`, then
        /// the rest compared.
        private func find(_ pattern: [UInt8], from start: Int) -> Int? {
            guard let first = pattern.first else { return nil }
            return bytes.withUnsafeBytes { haystack in
                pattern.withUnsafeBytes { needle -> Int? in
                    guard let base = haystack.baseAddress, let needleBase = needle.baseAddress else { return nil }
                    var position = start
                    while position + needle.count <= haystack.count {
                        guard let found = memchr(base + position, Int32(first), haystack.count - position) else { return nil }
                        position = base.distance(to: UnsafeRawPointer(found))
                        guard position + needle.count <= haystack.count else { return nil }
                        if memcmp(base + position, needleBase, needle.count) == 0 { return position }
                        position += 1
                    }
                    return nil
                }
            }
        }
    }
}

private func bigEndianBytes(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

extension [UInt8] {
    fileprivate mutating func append(bigEndian value: UInt64) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func replaceBigEndian(_ value: UInt64, at offset: Int) {
        Swift.withUnsafeBytes(of: value.bigEndian) { replaceSubrange(offset..<offset + 8, with: $0) }
    }
}
