// Content-Encoding undone (so the inspector, HAR and rules see what the server meant) and done
// again (a body a rule rewrote goes out in the coding it came in).
import CKagamiZlib
import Foundation

public enum ContentCoding {
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case unsupported(String)
        case corrupt(encoding: String, detail: String)

        public var description: String {
            switch self {
            case .unsupported(let encoding): "\(encoding) bodies are shown as received: Kagami has no \(encoding) decoder"
            case .corrupt(let encoding, let detail): "the body is not valid \(encoding) (\(detail)); shown as received"
            }
        }
    }

    /// True when `contentEncoding` names a coding other than identity.
    public static func isEncoded(_ contentEncoding: String?) -> Bool {
        !codings(contentEncoding).isEmpty
    }

    /// The codings a Content-Encoding value names, in the order they were applied.
    private static func codings(_ contentEncoding: String?) -> [String] {
        (contentEncoding ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
    }

    /// Decodes `data` per the Content-Encoding value (several codings apply in order);
    /// `identity` or an empty value returns the bytes unchanged.
    public static func decode(_ data: Data, contentEncoding: String?, limit: Int = 64 * 1024 * 1024) throws(Failure) -> Data {
        var result = data
        for coding in codings(contentEncoding).reversed() {
            switch coding {
            case "gzip", "x-gzip": result = try inflate(result, windowBits: 15 + 16, name: coding, limit: limit)
            // Servers send both zlib-wrapped and raw deflate under this name.
            case "deflate":
                do { result = try inflate(result, windowBits: 15, name: coding, limit: limit) } catch {
                    result = try inflate(result, windowBits: -15, name: coding, limit: limit)
                }
            default: throw .unsupported(coding)
            }
        }
        return result
    }

    private static func inflate(_ data: Data, windowBits: Int32, name: String, limit: Int) throws(Failure) -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt(encoding: name, detail: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        let (output, status) = pump(data, through: &stream, step: { CKagamiZlib.inflate(&$0, Z_NO_FLUSH) }) { status, stream, produced in
            status == Z_OK && produced <= limit && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        guard status == Z_STREAM_END || (status == Z_OK && stream.avail_in == 0) else {
            if output.count > limit { throw .corrupt(encoding: name, detail: "decoded size passes \(limit) bytes") }
            let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw .corrupt(encoding: name, detail: message)
        }
        return output
    }

    /// Encodes `data` in the codings the Content-Encoding value names (in order): gzip and
    /// deflate (zlib-wrapped, as RFC 9110 defines it).
    public static func encode(_ data: Data, contentEncoding: String?) throws(Failure) -> Data {
        var result = data
        for coding in codings(contentEncoding) {
            switch coding {
            case "gzip", "x-gzip": result = try deflate(result, windowBits: 15 + 16, name: coding)
            case "deflate": result = try deflate(result, windowBits: 15, name: coding)
            default: throw .unsupported(coding)
            }
        }
        return result
    }

    private static func deflate(_ data: Data, windowBits: Int32, name: String) throws(Failure) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt(encoding: name, detail: "zlib could not start")
        }
        defer { deflateEnd(&stream) }
        let (output, status) = pump(data, through: &stream, step: { CKagamiZlib.deflate(&$0, Z_FINISH) }) { status, stream, _ in
            status == Z_OK || status == Z_BUF_ERROR && stream.avail_out == 0
        }
        guard status == Z_STREAM_END else {
            throw .corrupt(encoding: name, detail: stream.msg.map { String(cString: $0) } ?? "zlib status \(status)")
        }
        return output
    }

    /// Feeds all of `data` to a zlib stream in 64 KiB output chunks: `step` runs zlib once,
    /// `goOn` says after each chunk (given the status, the stream and the bytes out so far)
    /// whether to run it again. Returns the output and the last status.
    private static func pump(
        _ data: Data, through stream: inout z_stream, step: (inout z_stream) -> Int32, goOn: (Int32, z_stream, Int) -> Bool
    ) -> (Data, Int32) {
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = [UInt8](data)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    status = step(&stream)
                    if let base = chunkBuffer.baseAddress { output.append(base, count: chunkBuffer.count - Int(stream.avail_out)) }
                }
            } while goOn(status, stream, output.count)
        }
        return (output, status)
    }
}
