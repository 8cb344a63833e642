import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to an open file descriptor: the session's journal and body log, a team store's spool
/// file, standard output and error.
public enum Descriptor {
    /// Writes every byte of `parts`, in order, with as few system calls as the kernel allows: at
    /// the file's position, or from `offset` on without moving it (so threads may write to places
    /// of one file at once). `wrote` hears of each call's bytes. False on an error (a full
    /// disk...), with `errno` saying which.
    public static func write(_ parts: [Data], to descriptor: Int32, at offset: Int64? = nil, wrote: (Int) -> Void = { _ in }) -> Bool {
        // Each part's bytes are reachable inside its own closure, one nested in the next: so
        // many parts at a time keeps that nesting shallow, whatever the number of parts.
        var position = offset
        var start = parts.startIndex
        while start < parts.endIndex {
            let batch = parts[start..<min(parts.endIndex, start + partsPerCall)]
            guard withBuffers(batch, [], { write($0, to: descriptor, at: position, wrote: wrote) }) else { return false }
            position? += batch.reduce(Int64(0)) { $0 + Int64($1.count) }
            start = batch.endIndex
        }
        return true
    }

    static let partsPerCall = 64

    private static func withBuffers<Result>(
        _ parts: ArraySlice<Data>, _ collected: [UnsafeRawBufferPointer], _ body: ([UnsafeRawBufferPointer]) -> Result
    ) -> Result {
        guard let first = parts.first else { return body(collected) }
        return first.withUnsafeBytes { withBuffers(parts.dropFirst(), collected + [$0], body) }
    }

    public static func write(_ parts: [UnsafeRawBufferPointer], to descriptor: Int32, at offset: Int64? = nil, wrote: (Int) -> Void) -> Bool {
        var position = offset
        var vectors = parts.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var index = 0
        while index < vectors.count {
            // At most IOV_MAX (1024) vectors a call.
            let written = vectors[index..<min(vectors.count, index + 1024)].withUnsafeBufferPointer { buffer in
                if let position {
                    pwritev(descriptor, buffer.baseAddress, Int32(buffer.count), off_t(position))
                } else {
                    writev(descriptor, buffer.baseAddress, Int32(buffer.count))
                }
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            wrote(written)
            position? += Int64(written)
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
}
