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

    /// Reads past the next value, whatever it is.
    public mutating func skip() throws {
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
