extension JSONValue {
    public struct FormattingOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Two-space indentation, one member per line, `"key": value`.
        public static let prettyPrinted = FormattingOptions(rawValue: 1 << 0)
        /// Members ordered by key instead of source order.
        public static let sortedKeys = FormattingOptions(rawValue: 1 << 1)
        /// Write `/` as `\/`.
        public static let escapeSlashes = FormattingOptions(rawValue: 1 << 2)
    }

    /// The value as JSON text.
    public func serialized(_ options: FormattingOptions = []) -> String {
        var out: [UInt8] = []
        write(to: &out, options: options)
        return String(decoding: out, as: UTF8.self)
    }

    private static func newline(_ out: inout [UInt8], indent: Int) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// The value as JSON text appended to `out`; pretty printed, its lines after the first are
    /// indented as a member `depth` levels down would be (a value written inside a document
    /// written by hand, such as an archive's entry).
    public func write(to out: inout [UInt8], options: FormattingOptions = [], depth indent: Int = 0) {
        let pretty = options.contains(.prettyPrinted)
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): out += String(i).utf8
        case .number(let d): out += Self.format(d).utf8
        case .string(let s): JSONTextWriter.appendQuoted(s, to: &out, escapeSlashes: options.contains(.escapeSlashes))
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out += "[".utf8
            for (n, item) in items.enumerated() {
                if n > 0 { out += ",".utf8 }
                if pretty { Self.newline(&out, indent: indent + 1) }
                item.write(to: &out, options: options, depth: indent + 1)
            }
            if pretty { Self.newline(&out, indent: indent) }
            out += "]".utf8
        case .object(let members):
            if members.isEmpty { out += "{}".utf8; return }
            out += "{".utf8
            func member(_ key: String, _ value: JSONValue, first: Bool) {
                if !first { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(&out, indent: indent + 1) }
                JSONTextWriter.appendQuoted(key, to: &out, escapeSlashes: options.contains(.escapeSlashes))
                out += (pretty ? ": " : ":").utf8
                value.write(to: &out, options: options, depth: indent + 1)
            }
            if options.contains(.sortedKeys) {
                for (n, key) in members.keys.sorted().enumerated() {
                    if let value = members[key] { member(key, value, first: n == 0) }
                }
            } else {
                for (n, (key, value)) in members.enumerated() { member(key, value, first: n == 0) }
            }
            if pretty { Self.newline(&out, indent: indent) }
            out += "}".utf8
        }
    }

    /// Shortest text that reads back as the same Double; JSON has no NaN or infinity.
    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) + ".0" }
        return d.description
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int.self) {
            self = .integer(i)
        } else if let d = try? container.decode(Double.self) {
            self = .number(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else if let o = try? container.decode([String: JSONValue].self) {
            // Codable containers do not carry member order; sort for a stable result.
            self = .object(JSONObject(uniqueKeysWithValues: o.sorted { $0.key < $1.key }))
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .number(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(Dictionary(uniqueKeysWithValues: o.map { ($0.key, $0.value) }))
        }
    }
}
