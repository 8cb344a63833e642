import Foundation

extension UUID {
    /// The canonical upper-case text, the same as `uuidString`, written without it: on Linux
    /// Foundation formats each byte with `snprintf`, and a session writes an id per exchange.
    public var canonicalText: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789ABCDEF"
            var position = 0
            withUnsafeBytes(of: uuid) { bytes in
                digits.withUTF8Buffer { hex in
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            buffer[position] = UInt8(ascii: "-")
                            position += 1
                        }
                        buffer[position] = hex[Int(byte >> 4)]
                        buffer[position + 1] = hex[Int(byte & 0x0F)]
                        position += 2
                    }
                }
            }
            return position
        }
    }
}

extension UUID {
    /// Reads the canonical text (`8-4-4-4-12` hex digits, either case), as `UUID(uuidString:)`
    /// does, without `sscanf`, which Foundation reads it with on Linux; nil for any other text.
    public init?(canonicalText text: String) {
        var text = text
        let parsed: uuid_t? = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let ok = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = Self.hexValue(utf8[position]), let low = Self.hexValue(utf8[position + 1]) else { return false }
                    out[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return ok ? bytes : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
