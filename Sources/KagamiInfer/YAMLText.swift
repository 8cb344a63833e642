// JSON values as block-style YAML: the form people keep descriptions in, in git.
import KagamiJSON

enum YAMLText {
    /// The document, two-space indented, object members in their order.
    static func document(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: 0, into: &out, inline: false)
        if !out.hasSuffix("\n") { out += "\n" }
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, into out: inout String, inline: Bool) {
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .object(let members) where !members.isEmpty:
            var first = true
            for (key, member) in members {
                if !(first && inline) { out += pad }
                first = false
                out += scalarText(key) + ":"
                writeMember(member, indent: indent, into: &out)
            }
        case .array(let items) where !items.isEmpty:
            var first = true
            for item in items {
                if !(first && inline) { out += pad }
                first = false
                out += "-"
                switch item {
                case .object(let members) where !members.isEmpty:
                    out += " "
                    write(item, indent: indent + 2, into: &out, inline: true)
                case .array(let inner) where !inner.isEmpty:
                    out += "\n"
                    write(item, indent: indent + 2, into: &out, inline: false)
                default:
                    out += " " + scalar(item) + "\n"
                }
            }
        default:
            if !inline { out += pad }
            out += scalar(value) + "\n"
        }
    }

    private static func writeMember(_ member: JSONValue, indent: Int, into out: inout String) {
        switch member {
        case .object(let members) where !members.isEmpty:
            out += "\n"
            write(member, indent: indent + 2, into: &out, inline: false)
        case .array(let items) where !items.isEmpty:
            out += "\n"
            write(member, indent: indent, into: &out, inline: false)
        default:
            out += " " + scalar(member) + "\n"
        }
    }

    private static func scalar(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .integer(let i): String(i)
        case .number: value.serialized()
        case .string(let text): scalarText(text)
        case .array: "[]"
        case .object: "{}"
        }
    }

    /// Plain when YAML reads it back as the same string, else JSON-quoted (valid YAML).
    static func scalarText(_ text: String) -> String {
        guard isPlainSafe(text) else { return JSONValue.string(text).serialized() }
        return text
    }

    private static let reserved: Set<String> = ["true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", ".nan", ".inf", "-.inf"]

    private static func isPlainSafe(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !reserved.contains(text.lowercased()) else { return false }
        guard PathSegmentShape.isLetter(first) || first == "/" || first == "_" else { return false }
        guard text.unicodeScalars.allSatisfy({ scalar in
            PathSegmentShape.isLetter(scalar) || PathSegmentShape.isDigit(scalar) || "_-./{}+ ()".unicodeScalars.contains(scalar)
        }) else { return false }
        // A number-like or spaced-out ending could be read differently; quote those.
        return !text.hasSuffix(" ") && !text.contains("  ") && Double(text) == nil
    }
}
