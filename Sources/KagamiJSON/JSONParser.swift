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

    /// Parses a document whose array at `path` (member names from the root object down) may
    /// be too big to hold: each of its elements goes to `element` as soon as it is read, with
    /// its index, and the value returned has that array empty.
    public init(
        parsing buffer: UnsafeRawBufferPointer, streamingArrayAt path: [String], element: (JSONValue, Int) -> Void
    ) throws(JSONParseError) {
        self = try withoutActuallyEscaping(element) { element throws(JSONParseError) in
            try JSONValue(parsing: buffer.assumingMemoryBound(to: UInt8.self), streaming: JSONReader.Stream(path: path, element: element))
        }
    }

    init(parsing buffer: UnsafeBufferPointer<UInt8>, streaming: JSONReader.Stream? = nil) throws(JSONParseError) {
        var positions: JSONSourcePositions? = nil
        self = try JSONValue(parsing: buffer, streaming: streaming, positions: &positions)
    }

    /// Parses one JSON value and says where each of its values is written, so that a reader
    /// of a large document can point into it without searching the text.
    public static func parsingWithPositions(_ text: String) throws(JSONParseError) -> (value: JSONValue, positions: JSONSourcePositions) {
        var text = text
        // `withUTF8` rethrows untyped errors: the outcome leaves the closure as a value.
        let outcome = text.withUTF8 { buffer -> Result<(JSONValue, JSONSourcePositions), JSONParseError> in
            var positions: JSONSourcePositions? = JSONSourcePositions(offset: 0)
            do throws(JSONParseError) {
                let value = try JSONValue(parsing: buffer, streaming: nil, positions: &positions)
                return .success((value, positions ?? JSONSourcePositions(offset: 0)))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private init(
        parsing buffer: UnsafeBufferPointer<UInt8>, streaming: JSONReader.Stream?, positions: inout JSONSourcePositions?
    ) throws(JSONParseError) {
        var parser = JSONReader(bytes: buffer)
        parser.stream = streaming
        parser.skipWhitespace()
        positions?.offset = parser.index
        let value = try parser.readValue(depth: 0, path: streaming.map { $0.path[...] }, positions: &positions)
        parser.skipWhitespace()
        if parser.index < buffer.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the JSON value")
        }
        self = value
    }
}

/// Where the values of a parsed document are written, in the value's own shape: `children`
/// holds an object's members and an array's elements in their order (the order of
/// `JSONObject`'s indices), each with its own children. `offset` is a byte offset: of the key
/// for an object member, of the value itself for an array element and the root.
public struct JSONSourcePositions: Sendable, Hashable {
    public var offset: Int
    public var children: [JSONSourcePositions]

    public init(offset: Int, children: [JSONSourcePositions] = []) {
        self.offset = offset
        self.children = children
    }

    /// The byte offset where the value at `path` is written (member names and array indices
    /// from the root of `value`, which these positions describe), or of the deepest part of
    /// the path that exists, with how many of its components were found. Empty components
    /// are passed over.
    public func offset(of path: some Sequence<String>, in value: JSONValue) -> (offset: Int, found: Int)? {
        var current = value
        var positions = self
        var found = 0
        var offset: Int?
        for key in path where !key.isEmpty {
            let index: Int
            switch current {
            case .object(let members):
                guard let member = members.index(forKey: key) else { return offset.map { ($0, found) } }
                index = member
                current = members.values[member]
            case .array(let items):
                guard let element = Int(key), items.indices.contains(element) else { return offset.map { ($0, found) } }
                index = element
                current = items[element]
            default:
                return offset.map { ($0, found) }
            }
            guard positions.children.indices.contains(index) else { return offset.map { ($0, found) } }
            positions = positions.children[index]
            offset = positions.offset
            found += 1
        }
        return offset.map { ($0, found) }
    }
}

struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    static let maximumDepth = 200

    /// The array whose elements are handed out as they are read instead of kept.
    struct Stream {
        var path: [String]
        var element: (JSONValue, Int) -> Void
    }
    var stream: Stream?

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

    /// `path`: what is left of the streamed array's path below this value (nil off that path).
    /// `positions`, when not nil, gets the positions of the value's members or elements.
    mutating func readValue(depth: Int, path: ArraySlice<String>? = nil, positions: inout JSONSourcePositions?) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard index < bytes.count else { throw error("expected a value, found end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readObject(depth: depth, path: path, positions: &positions)
        case UInt8(ascii: "["): return try readArray(depth: depth, streamed: path?.isEmpty == true, positions: &positions)
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

    mutating func readObject(depth: Int, path: ArraySlice<String>? = nil, positions: inout JSONSourcePositions?) throws(JSONParseError) -> JSONValue {
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
            let keyStart = index
            let key = try readString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after member name \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            let below = path.flatMap { $0.first == key ? $0.dropFirst() : nil }
            var member = positions.map { _ in JSONSourcePositions(offset: keyStart) }
            let value = try readValue(depth: depth + 1, path: below, positions: &member)
            if let member {
                // A repeated name replaces the value where the name first stood, as
                // `JSONObject` does: its positions go to that index too.
                if let existing = object.index(forKey: key) {
                    positions?.children[existing] = member
                } else {
                    positions?.children.append(member)
                }
            }
            object[key] = value
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object, expected ',' or '}'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(object)
            default: throw error("expected ',' or '}' in object, found \(describeCurrent())")
            }
        }
    }

    mutating func readArray(depth: Int, streamed: Bool = false, positions: inout JSONSourcePositions?) throws(JSONParseError) -> JSONValue {
        index += 1
        var array: [JSONValue] = []
        var count = 0
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            var elementPositions = positions.map { _ in JSONSourcePositions(offset: index) }
            let element = try readValue(depth: depth + 1, positions: &elementPositions)
            if let elementPositions { positions?.children.append(elementPositions) }
            if streamed, let stream {
                stream.element(element, count)
            } else {
                array.append(element)
            }
            count += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array, expected ',' or ']'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(array)
            default: throw error("expected ',' or ']' in array, found \(describeCurrent())")
            }
        }
    }

    /// A string without escapes is decoded from the input in one go; one with escapes is put
    /// together as UTF-8 bytes and decoded once at its end.
    mutating func readString() throws(JSONParseError) -> String {
        let start = index
        index += 1
        var runStart = index
        var unescaped: [UInt8]? = nil
        func append(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
            bytes.append(contentsOf: UTF8.encode(scalar).map { Array($0) } ?? [0xEF, 0xBF, 0xBD])
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<index])
                index += 1
                guard var built = unescaped else { return String(decoding: run, as: UTF8.self) }
                built.append(contentsOf: run)
                return String(decoding: built, as: UTF8.self)
            } else if b == UInt8(ascii: "\\") {
                var built = unescaped ?? []
                unescaped = nil  // so `built` is the only owner of its storage while it grows
                built.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                index += 1
                guard index < bytes.count else { throw error("unterminated escape", at: index - 1) }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): built.append(e)
                case UInt8(ascii: "b"): built.append(0x08)
                case UInt8(ascii: "f"): built.append(0x0C)
                case UInt8(ascii: "n"): built.append(0x0A)
                case UInt8(ascii: "r"): built.append(0x0D)
                case UInt8(ascii: "t"): built.append(0x09)
                case UInt8(ascii: "u"):
                    let unit = try readHex4()
                    if (0xD800...0xDBFF).contains(unit) {
                        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try readHex4()
                            if (0xDC00...0xDFFF).contains(low),
                               let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) {
                                append(scalar, to: &built)
                            } else {
                                append("\u{FFFD}", to: &built)
                                append(Unicode.Scalar(low) ?? "\u{FFFD}", to: &built)
                            }
                        } else {
                            append("\u{FFFD}", to: &built)
                        }
                    } else {
                        append(Unicode.Scalar(unit) ?? "\u{FFFD}", to: &built)
                    }
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))' in string", at: index - 2)
                }
                unescaped = built
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
