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
        var out = ""
        write(to: &out, options: options, indent: 0)
        return out
    }

    private func write(to out: inout String, options: FormattingOptions, indent: Int) {
        let pretty = options.contains(.prettyPrinted)
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d): out += Self.format(d)
        case .string(let s): Self.writeString(s, to: &out, escapeSlashes: options.contains(.escapeSlashes))
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (n, item) in items.enumerated() {
                if n > 0 { out += "," }
                if pretty { out += "\n"; out += String(repeating: "  ", count: indent + 1) }
                item.write(to: &out, options: options, indent: indent + 1)
            }
            if pretty { out += "\n"; out += String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            let keys = options.contains(.sortedKeys) ? members.keys.sorted() : Array(members.keys)
            for (n, key) in keys.enumerated() {
                if n > 0 { out += "," }
                if pretty { out += "\n"; out += String(repeating: "  ", count: indent + 1) }
                Self.writeString(key, to: &out, escapeSlashes: options.contains(.escapeSlashes))
                out += pretty ? ": " : ":"
                members[key]?.write(to: &out, options: options, indent: indent + 1)
            }
            if pretty { out += "\n"; out += String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Shortest text that reads back as the same Double; JSON has no NaN or infinity.
    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) + ".0" }
        return d.description
    }

    static func writeString(_ s: String, to out: inout String, escapeSlashes: Bool) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where escapeSlashes: out += "\\/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
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
