/// Writes JSON text member by member into a byte buffer, for hot paths where building a
/// `JSONValue` or going through `Encoder` costs more than the writing (the session store writes
/// one document per exchange, an archive one entry). Commas are placed for the caller; keys and
/// strings are escaped. Compact, or pretty printed as `JSONValue.serialized([.prettyPrinted])`
/// writes it.
public struct JSONTextWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// For each open object or array: whether it has a member yet (the next one needs a comma).
    private var hasMember: [Bool] = []
    /// Pretty printed: the levels the document sits down (its lines after the first are indented
    /// by two spaces per level more); nil for compact text.
    private let depth: Int?

    public init(capacity: Int = 1024) {
        self.init(capacity: capacity, prettyAt: nil)
    }

    /// `prettyAt`: pretty printed, as a value `depth` levels down in a larger document.
    public init(capacity: Int = 1024, prettyAt depth: Int?) {
        bytes.reserveCapacity(capacity)
        hasMember.reserveCapacity(8)
        self.depth = depth
    }

    public mutating func beginObject() { value(); bytes.append(UInt8(ascii: "{")); hasMember.append(false) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { value(); bytes.append(UInt8(ascii: "[")); hasMember.append(false) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func close(_ bracket: UInt8) {
        let hadMembers = hasMember.removeLast()
        if hadMembers, let depth { newline(depth + hasMember.count) }
        bytes.append(bracket)
    }

    private mutating func newline(_ level: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// The name of the next member of the current object.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        if depth == nil {
            bytes.append(UInt8(ascii: ":"))
        } else {
            bytes.append(contentsOf: ": ".utf8)
        }
        keyWritten = true
    }

    /// A value built already, written as this writer writes.
    public mutating func value(_ json: JSONValue) {
        value()
        json.write(to: &bytes, options: depth == nil ? [] : [.prettyPrinted], depth: (depth ?? 0) + hasMember.count)
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
        if let depth { newline(depth + hasMember.count) }
    }

    private mutating func appendQuoted(_ text: String) {
        Self.appendQuoted(text, to: &bytes)
    }

    /// `text` as a JSON string literal, appended to `bytes`: runs that need no escaping are
    /// copied whole, found eight bytes at a time. `escapeSlashes` writes `/` as `\/`.
    static func appendQuoted(_ text: String, to bytes: inout [UInt8], escapeSlashes: Bool = false) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            let count = utf8.count
            var runStart = 0
            var index = 0
            while index < count {
                if index + 8 <= count,
                   !Self.mayNeedEscaping(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self), slashes: escapeSlashes) {
                    index += 8
                    continue
                }
                let byte = base[index]
                index += 1
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
                        || (escapeSlashes && byte == UInt8(ascii: "/")) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index - 1 - runStart))
                runStart = index
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
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes in `word` is a control character, `"` or `\\` (or `/`
    /// with `slashes`): a byte below n sets its top bit in `(x - n·0x01…) & ~x & 0x80…`, and a
    /// byte equal to c is a zero byte of `x ^ c·0x01…` (below 1). Exact for "any".
    @inline(__always)
    static func mayNeedEscaping(_ word: UInt64, slashes: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let tops: UInt64 = 0x8080_8080_8080_8080
        func below(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &- ones &* n) & ~x & tops }
        var found = below(word, 0x20) | below(word ^ (ones &* 0x22), 1) | below(word ^ (ones &* 0x5C), 1)
        if slashes { found |= below(word ^ (ones &* 0x2F), 1) }
        return found != 0
    }
}
