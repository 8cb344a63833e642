// Undoes Content-Encoding so the inspector shows, and the contract check validates, what the
// server meant rather than what it sent.
import CKagamiZlib
import Foundation

public enum ContentDecoding {
    public enum Failure: Error, CustomStringConvertible {
        case unsupported(String)
        case corrupt(encoding: String, detail: String)

        public var description: String {
            switch self {
            case .unsupported(let encoding): "\(encoding) bodies are shown as received: Kagami has no \(encoding) decoder"
            case .corrupt(let encoding, let detail): "the body is not valid \(encoding) (\(detail)); shown as received"
            }
        }
    }

    /// Decodes `data` per the Content-Encoding value (several codings apply in order);
    /// `identity` or an empty value returns the bytes unchanged.
    public static func decode(_ data: Data, contentEncoding: String?, limit: Int = 64 * 1024 * 1024) throws(Failure) -> Data {
        let codings = (contentEncoding ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        var result = data
        for coding in codings.reversed() {
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
                    status = CKagamiZlib.inflate(&stream, Z_NO_FLUSH)
                    if let base = chunkBuffer.baseAddress { output.append(base, count: chunkBuffer.count - Int(stream.avail_out)) }
                }
            } while status == Z_OK && output.count <= limit && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        guard status == Z_STREAM_END || (status == Z_OK && stream.avail_in == 0) else {
            if output.count > limit { throw .corrupt(encoding: name, detail: "decoded size passes \(limit) bytes") }
            let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw .corrupt(encoding: name, detail: message)
        }
        return output
    }
}
