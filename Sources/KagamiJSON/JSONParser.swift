/// A strict RFC 8259 parser that reports where the text went wrong.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// 1-based line and column (column counts bytes of UTF-8).
    public var line: Int
    public var column: Int
    /// 0-based byte offset.
    public var offset: Int

    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONValue {
    /// Parses one JSON value; only whitespace may follow it.
    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        let array = Array(bytes)
        self = try array.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            try JSONValue(parsing: buffer)
        }
    }

    init(parsing buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) {
        var parser = JSONReader(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.readValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < buffer.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the JSON value")
        }
        self = value
    }
}

private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    static let maximumDepth = 200

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
        let end = min(offset ?? index, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        return JSONParseError(message: message, line: line, column: end - lineStart + 1, offset: end)
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "end of input" }
        let b = bytes[index]
        if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func readValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard index < bytes.count else { throw error("expected a value, found end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readObject(depth: depth)
        case UInt8(ascii: "["): return try readArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try readLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try readLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try readLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw error("expected a value, found \(describeCurrent())")
        }
    }

    mutating func readLiteral(_ word: StaticString) throws(JSONParseError) {
        let start = index
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("invalid literal", at: start) }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] {
            throw error("invalid literal, expected '\(word)'", at: start)
        }
        index += count
    }

    mutating func readObject(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a member name in quotes, found \(describeCurrent())")
            }
            let key = try readString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after member name \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            object[key] = try readValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object, expected ',' or '}'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(object)
            default: throw error("expected ',' or '}' in object, found \(describeCurrent())")
            }
        }
    }

    mutating func readArray(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try readValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array, expected ',' or ']'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(array)
            default: throw error("expected ',' or ']' in array, found \(describeCurrent())")
            }
        }
    }

    mutating func readString() throws(JSONParseError) -> String {
        let start = index
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ end: Int, into scalars: inout String.UnicodeScalarView) {
            if end > runStart {
                scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<end]), as: UTF8.self).unicodeScalars)
            }
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                flushRun(index, into: &scalars)
                index += 1
                return String(scalars)
            } else if b == UInt8(ascii: "\\") {
                flushRun(index, into: &scalars)
                index += 1
                guard index < bytes.count else { throw error("unterminated escape", at: index - 1) }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    let unit = try readHex4()
                    if (0xD800...0xDBFF).contains(unit) {
                        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try readHex4()
                            if (0xDC00...0xDFFF).contains(low),
                               let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) {
                                scalars.append(scalar)
                            } else {
                                scalars.append("\u{FFFD}")
                                if let s = Unicode.Scalar(low) { scalars.append(s) } else { scalars.append("\u{FFFD}") }
                            }
                        } else {
                            scalars.append("\u{FFFD}")
                        }
                    } else if let scalar = Unicode.Scalar(unit) {
                        scalars.append(scalar)
                    } else {
                        scalars.append("\u{FFFD}")
                    }
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))' in string", at: index - 2)
                }
                runStart = index
            } else if b < 0x20 {
                throw error("control character 0x\(String(b, radix: 16)) must be escaped in a string")
            } else {
                index += 1
            }
        }
    }

    mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func readNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit", at: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("invalid number: leading zero", at: start) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let i = Int(text) { return .integer(i) }
        guard let d = Double(text) else { throw error("invalid number '\(text)'", at: start) }
        return .number(d)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
