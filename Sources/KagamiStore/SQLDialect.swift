import KagamiFlow

/// The SQL of a store, where the stores' dialects differ: how a `FlowFilter` matches text, a
/// `WildcardPattern` and a request's path.
public enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// What the text index of either store holds of a flow, as an SQL expression of the flow
    /// table's columns (`row` a prefix such as `new.` in a trigger): its method in lower case
    /// (the filter's words match a method as a whole), host and URL.
    public static func textIndexWords(of row: String = "") -> String {
        "(lower(\(row)method) || ' ' || \(row)host || ' ' || \(row)url)"
    }

    /// The case-insensitive LIKE.
    var like: String {
        switch self {
        case .sqlite: "LIKE"
        case .postgres: "ILIKE"
        }
    }

    /// The condition that `column` (an SQL expression) matches the whole of `pattern`, with
    /// `bind` giving the placeholder of an argument: the column is lowercased first when the
    /// pattern ignores case, as `WildcardPattern` lowers the letters of what it matches.
    func condition(_ column: String, matches pattern: WildcardPattern, bind: (SQLArgument) -> String) -> String {
        let value = pattern.isCaseInsensitive ? "lower(\(column))" : column
        let placeholder = bind(.text(self.pattern(pattern)))
        switch self {
        case .sqlite: return "\(value) GLOB \(placeholder)"
        case .postgres: return "\(value) ~ \(placeholder)"
        }
    }

    /// The pattern's steps written for `condition(_:matches:bind:)`: a GLOB for SQLite, a
    /// regular expression anchored at both ends for PostgreSQL. Both compare characters where
    /// the pattern compares bytes, which is the same for ASCII (hosts and percent-encoded paths).
    func pattern(_ pattern: WildcardPattern) -> String {
        var text = self == .postgres ? "^" : ""
        var literal: [UInt8] = []
        func flushLiteral() {
            for scalar in String(decoding: literal, as: UTF8.self).unicodeScalars {
                text += escaped(scalar)
            }
            literal.removeAll()
        }
        for step in pattern.steps {
            if case .literal(let byte) = step {
                literal.append(byte)
                continue
            }
            flushLiteral()
            switch step {
            case .literal: break
            case .anyByte: text += self == .sqlite ? "?" : "."
            case .anyRun: text += self == .sqlite ? "*" : ".*"
            case .set(let ranges, let negated): text += set(ranges, negated: negated)
            }
        }
        flushLiteral()
        return self == .postgres ? text + "$" : text
    }

    /// A character that stands for itself.
    private func escaped(_ scalar: Unicode.Scalar) -> String {
        switch self {
        case .sqlite:
            return "*?[".unicodeScalars.contains(scalar) ? "[\(scalar)]" : String(scalar)
        case .postgres:
            // A backslash before anything but an ASCII letter or digit is that character, plainly.
            let plain = !scalar.isASCII || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            return plain ? String(scalar) : "\\\(scalar)"
        }
    }

    /// `[a-z0-9]`, or `[^...]` when negated, in the dialect's bracket syntax.
    private func set(_ ranges: [ClosedRange<UInt8>], negated: Bool) -> String {
        var members = [Bool](repeating: false, count: 256)
        for range in ranges {
            for byte in range { members[Int(byte)] = true }
        }
        var runs: [ClosedRange<UInt8>] = []
        let special: Set<UInt8> = self == .sqlite ? [UInt8(ascii: "]"), UInt8(ascii: "-"), UInt8(ascii: "^")] : []
        for byte in UInt8.min...UInt8.max where members[Int(byte)] && !special.contains(byte) {
            if let last = runs.last, last.upperBound &+ 1 == byte {
                runs[runs.count - 1] = last.lowerBound...byte
            } else {
                runs.append(byte...byte)
            }
        }
        switch self {
        case .postgres:
            // Every member as `\uXXXX`: nothing inside the brackets is special.
            func code(_ byte: UInt8) -> String {
                let hex = String(byte, radix: 16)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
            let body = runs.map { $0.count == 1 ? code($0.lowerBound) : "\(code($0.lowerBound))-\(code($0.upperBound))" }
            return "[\(negated ? "^" : "")\(body.joined())]"
        case .sqlite:
            // SQLite reads `]` as a member only first, `-` only first or last, `^` anywhere but first.
            func character(_ byte: UInt8) -> String { String(Character(UnicodeScalar(byte))) }
            var head = members[Int(UInt8(ascii: "]"))] ? "]" : ""
            var body = runs.map { $0.count == 1 ? character($0.lowerBound) : "\(character($0.lowerBound))-\(character($0.upperBound))" }.joined()
            var dash = members[Int(UInt8(ascii: "-"))]
            if members[Int(UInt8(ascii: "^"))] {
                if head.isEmpty && body.isEmpty && !negated {
                    guard dash else { return "^" }
                    head = "-"
                    dash = false
                }
                body += "^"
            }
            return "[\(negated ? "^" : "")\(head)\(body)\(dash ? "-" : "")]"
        }
    }

    /// The request's path (its target before `?`) read from the flow table's `url` column,
    /// `scheme://authority` + target (which starts at `/`, or is `*` for `OPTIONS *`), or the
    /// target alone for CONNECT: as the web UI's rows give it.
    var path: String {
        switch self {
        case .sqlite:
            let beforeQuery = "substr(url, 1, instr(url || '?', '?') - 1)"
            let afterScheme = "substr(\(beforeQuery), instr(\(beforeQuery), '://') + 3)"
            let targetStart = "min(instr(\(afterScheme) || '/', '/'), instr(\(afterScheme) || '*', '*'))"
            return "(CASE WHEN instr(url, '://') = 0 THEN \(beforeQuery) ELSE substr(\(afterScheme), \(targetStart)) END)"
        case .postgres:
            return "coalesce(substring(url from '^[^:/?]+://[^/?*]*([^?]*)'), split_part(url, '?', 1))"
        }
    }
}
