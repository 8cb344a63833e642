import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension UUID {
    /// A version 7 UUID (RFC 9562 §5.7): the Unix time in milliseconds, then the rest of the
    /// millisecond in 12 bits (§6.2 method 3) and 62 random bits. Identifiers made one after
    /// another sort in the order they were made, so a session's indexes on them grow at their
    /// end instead of touching a random page per exchange; and making one costs no system call
    /// (Foundation's `UUID()` reads /dev/urandom each time on Linux).
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        let milliseconds = max(0, date.timeIntervalSince1970 * 1000)
        let whole = UInt64(milliseconds)
        let fraction = UInt64((milliseconds - Double(whole)) * 4096) & 0xFFF
        let random = RandomPool.shared.next()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            for index in 0..<6 { buffer[index] = UInt8(truncatingIfNeeded: whole >> (40 - 8 * UInt64(index))) }
            buffer[6] = 0x70 | UInt8(truncatingIfNeeded: fraction >> 8)
            buffer[7] = UInt8(truncatingIfNeeded: fraction)
            for index in 8..<16 { buffer[index] = UInt8(truncatingIfNeeded: random >> (56 - 8 * UInt64(index - 8))) }
            buffer[8] = 0x80 | (buffer[8] & 0x3F)
        }
        return UUID(uuid: bytes)
    }
}

/// Random 64-bit words from the system's generator, fetched 256 at a time.
private final class RandomPool: Sendable {
    static let shared = RandomPool()

    private struct Words {
        var words = [UInt64](repeating: 0, count: 256)
        var next = 256
    }

    private let words = Mutex(Words())

    func next() -> UInt64 {
        words.withLock { state in
            if state.next == state.words.count {
                state.words.withUnsafeMutableBytes { Self.fill($0) }
                state.next = 0
            }
            defer { state.next += 1 }
            return state.words[state.next]
        }
    }

    private static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        #if canImport(Darwin)
        arc4random_buf(base, buffer.count)
        #else
        // One read of the kernel's generator a refill (getrandom(2) is not in every Glibc
        // module map, arc4random_buf not in every glibc).
        var filled = 0
        let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            while filled < buffer.count {
                let count = read(descriptor, base + filled, buffer.count - filled)
                if count > 0 {
                    filled += count
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            close(descriptor)
        }
        guard filled < buffer.count else { return }
        var generator = SystemRandomNumberGenerator()
        for index in 0..<buffer.count / 8 {
            buffer.storeBytes(of: generator.next(), toByteOffset: index * 8, as: UInt64.self)
        }
        #endif
    }
}
