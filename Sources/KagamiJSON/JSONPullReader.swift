/// Reads a JSON document value by value, in the order it is written, without building it: for
/// hot paths that read back documents of a shape they know (a session's stored flows), where
/// a `JSONValue` tree or `JSONDecoder` would cost more than the rest of the work. Members the
/// reader doesn't ask for are skipped with `skip()`. Same strict grammar and errors (line,
/// column) as `JSONValue(parsing:)`.
public struct JSONPullReader {
    private var reader: JSONReader

    private init(_ buffer: UnsafeBufferPointer<UInt8>) {
        reader = JSONReader(bytes: buffer)
    }

    /// Runs `body` over a reader of `bytes`; only whitespace may follow the value it reads.
    public static func read<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout JSONPullReader) throws -> Result
    ) throws -> Result {
        var pull = JSONPullReader(bytes.assumingMemoryBound(to: UInt8.self))
        pull.reader.skipWhitespace()
        let result = try body(&pull)
        pull.reader.skipWhitespace()
        if pull.reader.index < pull.reader.bytes.count {
            throw pull.reader.error("unexpected \(pull.reader.describeCurrent()) after the JSON value")
        }
        return result
    }

    /// An object: `member` is called with each member's name and must read its value (or skip it).
    public mutating func members(_ member: (inout JSONPullReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        reader.skipWhitespace()
        if peek == UInt8(ascii: "}") {
            reader.index += 1
            return
        }
        while true {
            reader.skipWhitespace()
            guard peek == UInt8(ascii: "\"") else {
                throw reader.error("expected a member name in quotes, found \(reader.describeCurrent())")
            }
            let name = try reader.readString()
            reader.skipWhitespace()
            guard peek == UInt8(ascii: ":") else {
                throw reader.error("expected ':' after member name \"\(name)\", found \(reader.describeCurrent())")
            }
            reader.index += 1
            reader.skipWhitespace()
            try member(&self, name)
            reader.skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): reader.index += 1
            case UInt8(ascii: "}"): reader.index += 1; return
            default: throw reader.error("expected ',' or '}' in object, found \(reader.describeCurrent())")
            }
        }
    }

    /// An array: `element` is called for each element and must read it (or skip it).
    public mutating func elements(_ element: (inout JSONPullReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        reader.skipWhitespace()
        if peek == UInt8(ascii: "]") {
            reader.index += 1
            return
        }
        while true {
            reader.skipWhitespace()
            try element(&self)
            reader.skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): reader.index += 1
            case UInt8(ascii: "]"): reader.index += 1; return
            default: throw reader.error("expected ',' or ']' in array, found \(reader.describeCurrent())")
            }
        }
    }

    public mutating func string() throws -> String {
        guard peek == UInt8(ascii: "\"") else { throw reader.error("expected a string, found \(reader.describeCurrent())") }
        return try reader.readString()
    }

    /// A number without a fraction (or with a zero one) that fits an `Int`.
    public mutating func integer() throws -> Int {
        let start = reader.index
        switch try number(as: "an integer") {
        case .integer(let value): return value
        case .number(let value) where value.rounded() == value && abs(value) < 9.0e18: return Int(value)
        default: throw reader.error("expected an integer", at: start)
        }
    }

    public mutating func double() throws -> Double {
        switch try number(as: "a number") {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: throw reader.error("expected a number")
        }
    }

    public mutating func bool() throws -> Bool {
        switch peek {
        case UInt8(ascii: "t"): try reader.readLiteral("true"); return true
        case UInt8(ascii: "f"): try reader.readLiteral("false"); return false
        default: throw reader.error("expected true or false, found \(reader.describeCurrent())")
        }
    }

    /// True, and the `null` read, when the next value is `null`; false and nothing read otherwise.
    public mutating func null() throws -> Bool {
        guard peek == UInt8(ascii: "n") else { return false }
        try reader.readLiteral("null")
        return true
    }

    /// The JSON type of the next value, read by `members`, `elements`, `string`, `number`,
    /// `bool` or `null`; nil when no value can start here.
    public var nextKind: Kind? {
        guard let byte = peek else { return nil }
        return switch byte {
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): .bool
        case UInt8(ascii: "n"): .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): .number
        default: nil
        }
    }

    public enum Kind: Sendable {
        case object, array, string, number, bool, null
    }

    /// A number as `JSONValue(parsing:)` reads it: `.integer` when written without a fraction or
    /// exponent and it fits an `Int`, else `.number`.
    public mutating func number() throws -> JSONValue {
        try number(as: "a number")
    }

    /// Reads past the next value, whatever it is, building nothing unless it is not valid
    /// (then it is read again for the error).
    public mutating func skip() throws {
        let start = reader.index
        var names: [Range<Int>] = []
        if reader.scanValue(depth: 0, names: &names) { return }
        reader.index = start
        var positions: JSONSourcePositions? = nil
        _ = try reader.readValue(depth: 0, positions: &positions)
    }

    /// The next value whole, for the parts of a document read as values.
    public mutating func value() throws -> JSONValue {
        var positions: JSONSourcePositions? = nil
        return try reader.readValue(depth: 0, positions: &positions)
    }

    /// An error at the reader's place, for a value of the right JSON type that the caller refuses.
    public func error(_ message: String) -> JSONParseError {
        reader.error(message)
    }

    private var peek: UInt8? {
        reader.index < reader.bytes.count ? reader.bytes[reader.index] : nil
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard peek == byte else { throw reader.error("expected \(what), found \(reader.describeCurrent())") }
        reader.index += 1
    }

    private mutating func number(as what: String) throws -> JSONValue {
        guard let byte = peek, byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
            throw reader.error("expected \(what), found \(reader.describeCurrent())")
        }
        return try reader.readNumber()
    }
}

extension JSONPullReader {
    /// True when `bytes` is one JSON document that a reader pulling every value gets exactly as
    /// `JSONValue(parsing:)` would build it: valid, nested no deeper than parsing allows, and no
    /// object naming a member twice (parsing keeps the last value where the first stood) or
    /// escaping a member's name. Nothing is built. False says only "parse it instead": it is
    /// also the answer for objects of very many members.
    public static func readsLikeParsing(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var check = JSONReader(bytes: bytes.assumingMemoryBound(to: UInt8.self))
        var names: [Range<Int>] = []
        check.skipWhitespace()
        guard check.scanValue(depth: 0, names: &names) else { return false }
        check.skipWhitespace()
        return check.index == check.bytes.count
    }
}

extension JSONReader {
    /// Past this many members, an object is left to the parser (names are compared pairwise).
    static let scannedMembers = 64

    /// Reads past one value as `readValue` would read it, without building it; false where
    /// `readValue` would throw, and where pulling would not see what it builds (see
    /// `JSONPullReader.readsLikeParsing`). `names`: the member names of the objects open.
    mutating func scanValue(depth: Int, names: inout [Range<Int>]) -> Bool {
        guard depth < Self.maximumDepth, index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return scanObject(depth: depth, names: &names)
        case UInt8(ascii: "["): return scanArray(depth: depth, names: &names)
        case UInt8(ascii: "\""): return scanString(escapes: true)
        case UInt8(ascii: "t"): return (try? readLiteral("true")) != nil
        case UInt8(ascii: "f"): return (try? readLiteral("false")) != nil
        case UInt8(ascii: "n"): return (try? readLiteral("null")) != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return scanNumber()
        default: return false
        }
    }

    private mutating func scanObject(depth: Int, names: inout [Range<Int>]) -> Bool {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        let first = names.count
        defer { names.removeSubrange(first...) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let start = index + 1
            guard scanString(escapes: false) else { return false }
            let name = start..<(index - 1)
            guard names.count - first < Self.scannedMembers else { return false }
            for other in names[first...] where other.count == name.count && bytes[other].elementsEqual(bytes[name]) {
                return false
            }
            names.append(name)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            skipWhitespace()
            guard scanValue(depth: depth + 1, names: &names) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return true
            default: return false
            }
        }
    }

    private mutating func scanArray(depth: Int, names: inout [Range<Int>]) -> Bool {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard scanValue(depth: depth + 1, names: &names) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return true
            default: return false
            }
        }
    }

    /// A string as `readString` accepts it (any bytes but unescaped control characters; an
    /// escape one of its ten forms); `escapes: false` refuses any escape.
    private mutating func scanString(escapes: Bool) -> Bool {
        index += 1
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return true
            } else if b == UInt8(ascii: "\\") {
                guard escapes, index + 1 < bytes.count else { return false }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    index += 2
                    // A lone or broken surrogate is repaired, not refused: four hex digits is all.
                    guard (try? readHex4()) != nil else { return false }
                default:
                    return false
                }
            } else if b < 0x20 {
                return false
            } else {
                index += 1
            }
        }
        return false
    }

    /// A number as `readNumber` accepts it.
    private mutating func scanNumber() -> Bool {
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { return false }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { return false }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { return false }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return true
    }
}
