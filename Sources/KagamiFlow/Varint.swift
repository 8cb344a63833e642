/// Unsigned LEB128 ("varint"): seven bits a byte, least significant first, the high bit set on
/// every byte but the last — the integers of Protocol Buffers' wire format and of a session's
/// stored flow records. At most ten bytes hold 64 bits.
public enum Varint {
    /// Why bytes are not a varint.
    public enum Failure: Error, Sendable, Hashable {
        /// The bytes ended before a byte without the high bit.
        case cutShort
        /// More than 64 bits (an eleventh byte, or a tenth above 1).
        case tooLong
    }

    @inlinable
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// The varint at `index`, which moves past it; `limit` is the end of what may be read.
    @inlinable
    public static func read<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, at index: inout Int, limit: Int
    ) throws(Failure) -> UInt64 where Bytes.Index == Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < limit {
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { throw .tooLong }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw .tooLong }
        }
        throw .cutShort
    }

    /// A signed integer folded so that small magnitudes of either sign are short (Protocol
    /// Buffers' `sint64`).
    @inlinable
    public static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// `zigzag`'s inverse.
    @inlinable
    public static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}
