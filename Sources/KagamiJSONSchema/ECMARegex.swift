// JSON Schema patterns are ECMA-262 regular expressions; NSRegularExpression speaks ICU.
// The pattern is rewritten where the two differ in ways schemas meet (see docs/JSON-SCHEMA.md).
import Foundation

struct ECMARegexError: Error {
    let reason: String
}

/// A compiled pattern. NSRegularExpression is immutable and documented thread-safe, which is
/// why this wrapper is Sendable.
struct ECMARegex: @unchecked Sendable {
    let source: String
    private let engine: Engine

    private enum Engine {
        case simple(SimplePattern)
        case icu(NSRegularExpression)
    }

    enum Outcome {
        case matched, unmatched, timedOut
    }

    /// The longest one backtracking (ICU) match may run: a pattern such as `^(a+)+$` takes
    /// exponential time on a string like "aaaa…!", and instances come from clients.
    static let timeLimit: Duration = .milliseconds(100)

    /// Patterns are searched, not anchored, as ECMA-262 `RegExp.prototype.test` does.
    func test(_ text: String) -> Outcome {
        let expression: NSRegularExpression
        switch engine {
        case .simple(let simple): return simple.matches(text) ? .matched : .unmatched
        case .icu(let icu): expression = icu
        }
        var outcome = Outcome.unmatched
        let deadline = ContinuousClock.now + Self.timeLimit
        // With reportProgress ICU calls back (result nil) while it works, so a runaway match
        // can be stopped.
        expression.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(location: 0, length: text.utf16.count)) { result, _, stop in
            if result != nil {
                outcome = .matched
                stop.pointee = true
            } else if ContinuousClock.now > deadline {
                outcome = .timedOut
                stop.pointee = true
            }
        }
        return outcome
    }

    /// A match within the time limit.
    func matches(_ text: String) -> Bool {
        test(text) == .matched
    }

    private init(source: String, engine: Engine) {
        self.source = source
        self.engine = engine
    }

    /// A compiled pattern, shared by every schema that uses the same source.
    static func compiled(_ pattern: String) throws(ECMARegexError) -> ECMARegex {
        if let cached = cache.value(for: pattern) { return cached }
        let regex: ECMARegex
        if let simple = SimplePattern(pattern) {
            regex = ECMARegex(source: pattern, engine: .simple(simple))
        } else {
            let translated = try translate(pattern)
            do {
                regex = ECMARegex(source: pattern, engine: .icu(try NSRegularExpression(pattern: translated, options: [])))
            } catch {
                throw ECMARegexError(reason: "the expression does not compile")
            }
        }
        cache.store(regex, for: pattern)
        return regex
    }

    private static let cache = RegexCache()

    /// ECMA-262 `\s`: WhiteSpace and LineTerminator, Unicode-wide.
    private static let ecmaSpace = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"

    /// How far back a lookbehind with an unbounded quantifier looks: ECMA-262 (ES2018) allows
    /// any width, ICU only a bounded one, so `*`, `+` and `{n,}` inside one become `{0,255}`,
    /// `{1,255}` and `{n,255}`.
    static let lookbehindReach = 255

    /// Rewrites the ECMA-262 constructs whose ICU meaning differs.
    static func translate(_ pattern: String) throws(ECMARegexError) -> String {
        let scalars = Array(pattern.unicodeScalars)
        var out = ""
        var inClass = false
        // For each open group, whether it is a lookbehind.
        var groups: [Bool] = []
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            let inLookbehind = !inClass && groups.contains(true)
            switch c {
            case "*" where inLookbehind, "+" where inLookbehind:
                out += c == "*" ? "{0,\(lookbehindReach)}" : "{1,\(lookbehindReach)}"
            case "{" where inLookbehind:
                // `{n,}` gets an upper bound; `{n}` and `{n,m}` are copied.
                var j = i + 1
                while j < scalars.count, scalars[j].properties.numericType == .decimal, scalars[j].isASCII { j += 1 }
                if j > i + 1, j + 1 < scalars.count, scalars[j] == ",", scalars[j + 1] == "}" {
                    out += String(String.UnicodeScalarView(scalars[i...j])) + "\(lookbehindReach)}"
                    i = j + 2
                    continue
                }
                out += "{"
            case "(" where !inClass && (i + 1 == scalars.count || scalars[i + 1] != "?"):
                groups.append(false)
                out += "("
            case ")" where !inClass:
                _ = groups.popLast()
                out += ")"
            case "\\":
                guard i + 1 < scalars.count else { throw ECMARegexError(reason: "\\ at end of pattern") }
                let next = scalars[i + 1]
                i += 2
                switch next {
                // ECMA-262 classes are ASCII (ICU's are Unicode-wide).
                case "d": out += inClass ? "0-9" : "[0-9]"
                case "D": out += "[^0-9]"
                case "w": out += inClass ? "a-zA-Z0-9_" : "[a-zA-Z0-9_]"
                case "W": out += "[^a-zA-Z0-9_]"
                case "s": out += inClass ? ecmaSpace : "[" + ecmaSpace + "]"
                case "S": out += "[^" + ecmaSpace + "]"
                case "u" where i < scalars.count && scalars[i] == "{":
                    // \u{1F600} (unicode mode) is \x{1F600} in ICU.
                    out += "\\x"
                case "c" where i < scalars.count && scalars[i].properties.isAlphabetic:
                    out += "\\c"
                case "v":
                    out += "\\x{0B}"  // ICU's \v is a class of vertical spaces
                case "b" where inClass:
                    out += "\\x{08}"  // backspace inside a class
                default:
                    // ICU knows escapes ECMA-262 does not (\a, \e, \z, \Q...); refuse them.
                    if next.isASCII, next.properties.isAlphabetic, !"dDwWsSbBfnrtvcxukpP".unicodeScalars.contains(next) {
                        throw ECMARegexError(reason: "\\\(next) is not an ECMA-262 escape")
                    }
                    out += "\\"
                    out.unicodeScalars.append(next)
                }
                continue
            case "(" where !inClass && i + 1 < scalars.count && scalars[i + 1] == "?":
                // ECMA-262 groups: (?: (?= (?! (?<= (?<! (?<name>; not ICU's flags or comments.
                let rest = String(String.UnicodeScalarView(scalars[(i + 2)...].prefix(2)))
                guard rest.hasPrefix(":") || rest.hasPrefix("=") || rest.hasPrefix("!") || rest.hasPrefix("<") else {
                    throw ECMARegexError(reason: "(?\(rest.prefix(1)) is not an ECMA-262 group")
                }
                groups.append(rest.hasPrefix("<=") || rest.hasPrefix("<!"))
                out += "(?"
                i += 2
                continue
            case "[" where !inClass:
                if i + 2 < scalars.count, scalars[i + 1] == "^", scalars[i + 2] == "]" {
                    out += "[\\s\\S]"  // [^] matches any character
                    i += 3
                    continue
                }
                if i + 1 < scalars.count, scalars[i + 1] == "]" {
                    out += "(?!)"  // [] matches nothing
                    i += 2
                    continue
                }
                inClass = true
                out += "["
                if i + 1 < scalars.count, scalars[i + 1] == "^" {
                    out += "^"
                    i += 1
                }
                i += 1
                continue
            case "[":
                out += "\\["  // a nested set in ICU, a plain character in ECMA-262
            case "&" where inClass, "~" where inClass:
                out += "\\"
                out.unicodeScalars.append(c)
            case "]" where inClass:
                inClass = false
                out += "]"
            case "$" where !inClass:
                out += "\\z"  // end of input only: ICU's $ also matches before a final newline
            default:
                out.unicodeScalars.append(c)
            }
            i += 1
        }
        return out
    }
}

/// Compiled patterns by source, shared process-wide.
private final class RegexCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: ECMARegex] = [:]

    func value(for pattern: String) -> ECMARegex? {
        lock.lock()
        defer { lock.unlock() }
        return entries[pattern]
    }

    func store(_ regex: ECMARegex, for pattern: String) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count > 4096 { entries.removeAll() }
        entries[pattern] = regex
    }
}
