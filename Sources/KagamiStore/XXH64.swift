import Foundation

/// xxHash64 (seed 0): what the session's journal and body log keep beside what they write, so
/// that bytes damaged since (a disk, a stray write) are told from what was written instead of
/// being read as a flow or a body. Not a defence against someone forging a record: the files
/// are their owner's alone. Fed in pieces (a body's parts, a record's parts), it gives what the
/// bytes joined would give.
struct XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var lanes: (UInt64, UInt64, UInt64, UInt64) = (prime1 &+ prime2, prime2, 0, 0 &- prime1)
    private var count: UInt64 = 0
    /// Bytes short of a whole stripe of 32, waiting for the next piece.
    private var pending: [UInt8] = []

    init() {
        pending.reserveCapacity(32)
    }

    /// The checksum of `pieces` joined.
    static func checksum(_ pieces: [Data]) -> UInt64 {
        var hash = XXH64()
        for piece in pieces { hash.add(piece) }
        return hash.value
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = XXH64()
        hash.add(bytes)
        return hash.value
    }

    mutating func add(_ data: Data) {
        data.withUnsafeBytes { add($0) }
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        count &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(32 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            offset = taken
            guard pending.count == 32 else { return }
            pending.withUnsafeBytes { stripe(of: $0, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= 32 {
            stripe(of: bytes, at: offset)
            offset += 32
        }
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    private mutating func stripe(of bytes: UnsafeRawBufferPointer, at offset: Int) {
        lanes.0 = Self.round(lanes.0, Self.word(bytes, offset))
        lanes.1 = Self.round(lanes.1, Self.word(bytes, offset + 8))
        lanes.2 = Self.round(lanes.2, Self.word(bytes, offset + 16))
        lanes.3 = Self.round(lanes.3, Self.word(bytes, offset + 24))
    }

    var value: UInt64 {
        var hash: UInt64
        if count >= 32 {
            hash = Self.rotate(lanes.0, 1) &+ Self.rotate(lanes.1, 7) &+ Self.rotate(lanes.2, 12) &+ Self.rotate(lanes.3, 18)
            for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
                hash = (hash ^ Self.round(0, lane)) &* Self.prime1 &+ Self.prime4
            }
        } else {
            hash = Self.prime5
        }
        hash &+= count
        pending.withUnsafeBytes { rest in
            var offset = 0
            while rest.count - offset >= 8 {
                hash ^= Self.round(0, Self.word(rest, offset))
                hash = Self.rotate(hash, 27) &* Self.prime1 &+ Self.prime4
                offset += 8
            }
            if rest.count - offset >= 4 {
                hash ^= UInt64(UInt32(littleEndian: rest.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* Self.prime1
                hash = Self.rotate(hash, 23) &* Self.prime2 &+ Self.prime3
                offset += 4
            }
            while offset < rest.count {
                hash ^= UInt64(rest[offset]) &* Self.prime5
                hash = Self.rotate(hash, 11) &* Self.prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= Self.prime2
        hash ^= hash >> 29
        hash &*= Self.prime3
        hash ^= hash >> 32
        return hash
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }

    @inline(__always)
    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        rotate(lane &+ input &* prime2, 31) &* prime1
    }
}
