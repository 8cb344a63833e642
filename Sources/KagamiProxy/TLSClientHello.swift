/// Reads what a proxy needs from the first bytes a client sends inside a CONNECT tunnel: whether
/// it is TLS at all, and the server name (SNI) it asks for.
enum TLSClientHello {
    enum Verdict: Equatable {
        /// More bytes are needed to decide.
        case needMoreBytes
        /// Not TLS: plain HTTP (or something else) inside the tunnel.
        case notTLS
        /// A TLS ClientHello, with the SNI host name when the client sent one.
        case tls(serverName: String?)
    }

    static func inspect(_ bytes: [UInt8]) -> Verdict {
        guard let first = bytes.first else { return .needMoreBytes }
        // A TLS handshake record starts with content type 22.
        guard first == 0x16 else { return .notTLS }
        guard bytes.count >= 5 else { return .needMoreBytes }
        let recordLength = Int(bytes[3]) << 8 | Int(bytes[4])
        guard bytes.count >= 5 + recordLength else {
            // Never wait for more than one maximal record.
            return recordLength > 16_384 + 2048 ? .tls(serverName: nil) : .needMoreBytes
        }
        return .tls(serverName: serverName(in: bytes[5..<(5 + recordLength)]))
    }

    /// Walks ClientHello → extensions → server_name; nil on anything unexpected.
    private static func serverName(in record: ArraySlice<UInt8>) -> String? {
        var reader = Reader(bytes: record)
        guard reader.u8() == 1 else { return nil }  // handshake type: ClientHello
        guard reader.skip(3), reader.skip(2 + 32) else { return nil }  // length, version, random
        guard let sessionIDLength = reader.u8(), reader.skip(Int(sessionIDLength)) else { return nil }
        guard let suitesLength = reader.u16(), reader.skip(suitesLength) else { return nil }
        guard let compressionLength = reader.u8(), reader.skip(Int(compressionLength)) else { return nil }
        guard let extensionsLength = reader.u16() else { return nil }
        var extensions = Reader(bytes: reader.take(extensionsLength) ?? [])
        while let type = extensions.u16(), let length = extensions.u16(), let body = extensions.take(length) {
            guard type == 0 else { continue }
            var names = Reader(bytes: body)
            guard names.u16() != nil else { return nil }
            while let nameType = names.u8(), let nameLength = names.u16(), let name = names.take(nameLength) {
                if nameType == 0 { return String(decoding: name, as: UTF8.self) }
            }
            return nil
        }
        return nil
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func u8() -> UInt8? {
            guard let b = bytes.first else { return nil }
            bytes = bytes.dropFirst()
            return b
        }

        mutating func u16() -> Int? {
            guard bytes.count >= 2 else { return nil }
            let value = Int(bytes[bytes.startIndex]) << 8 | Int(bytes[bytes.startIndex + 1])
            bytes = bytes.dropFirst(2)
            return value
        }

        mutating func skip(_ n: Int) -> Bool {
            guard bytes.count >= n else { return false }
            bytes = bytes.dropFirst(n)
            return true
        }

        mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard bytes.count >= n else { return nil }
            defer { bytes = bytes.dropFirst(n) }
            return bytes.prefix(n)
        }
    }
}
