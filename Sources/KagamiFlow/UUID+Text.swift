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
