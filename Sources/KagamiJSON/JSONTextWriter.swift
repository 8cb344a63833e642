/// Writes compact JSON text member by member into a byte buffer, for hot paths where building a
/// `JSONValue` or going through `Encoder` costs more than the writing (the session store writes
/// one document per exchange). Commas are placed for the caller; keys and strings are escaped.
public struct JSONTextWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// For each open object or array: whether it has a member yet (the next one needs a comma).
    private var hasMember: [Bool] = []

    public init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
        hasMember.reserveCapacity(8)
    }

    public mutating func beginObject() { value(); bytes.append(UInt8(ascii: "{")); hasMember.append(false) }
    public mutating func endObject() { hasMember.removeLast(); bytes.append(UInt8(ascii: "}")) }
    public mutating func beginArray() { value(); bytes.append(UInt8(ascii: "[")); hasMember.append(false) }
    public mutating func endArray() { hasMember.removeLast(); bytes.append(UInt8(ascii: "]")) }

    /// The name of the next member of the current object.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        keyWritten = true
    }

    public mutating func string(_ text: String) { value(); appendQuoted(text) }
    public mutating func integer(_ number: Int) { value(); bytes.append(contentsOf: String(number).utf8) }
    public mutating func bool(_ flag: Bool) { value(); bytes.append(contentsOf: (flag ? "true" : "false").utf8) }
    public mutating func null() { value(); bytes.append(contentsOf: "null".utf8) }

    /// A finite number in its shortest round-tripping form; JSON has no NaN or infinity, so
    /// those are written as `null`.
    public mutating func number(_ number: Double) {
        value()
        if number.isFinite {
            bytes.append(contentsOf: number.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    /// True right after `key`: the value that follows belongs to it and needs no comma.
    private var keyWritten = false

    private mutating func value() {
        if keyWritten {
            keyWritten = false
        } else {
            separate()
        }
    }

    private mutating func separate() {
        guard let last = hasMember.indices.last else { return }
        if hasMember[last] { bytes.append(UInt8(ascii: ",")) }
        hasMember[last] = true
    }

    private mutating func appendQuoted(_ text: String) {
        Self.appendQuoted(text, to: &bytes)
    }

    /// `text` as a JSON string literal, appended to `bytes`: runs that need no escaping are
    /// copied whole. `escapeSlashes` writes `/` as `\/`.
    static func appendQuoted(_ text: String, to bytes: inout [UInt8], escapeSlashes: Bool = false) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
                        || (escapeSlashes && byte == UInt8(ascii: "/")) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "/"): bytes.append(contentsOf: #"\/"#.utf8)
                case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
                case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
                case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
                default:
                    let hex = String(byte, radix: 16)
                    bytes.append(contentsOf: (#"\u"# + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
