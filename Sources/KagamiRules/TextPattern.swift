import Foundation

/// The match half of a Rewrite rule for one string (a header name, a value, a body): plain text
/// or a regular expression, compiled once when the rules are loaded.
struct TextPattern: @unchecked Sendable {
    // NSRegularExpression is immutable once built and documented as safe to share across threads.
    enum Kind {
        /// Blank: matches anything, and the whole string is the match.
        case any
        case plain(String)
        case regex(NSRegularExpression)
    }

    let kind: Kind
    let wholeValue: Bool
    let caseInsensitive: Bool

    struct InvalidRegex: Error {
        var pattern: String
        var reason: String
    }

    init(_ source: String, regex: Bool, wholeValue: Bool, caseInsensitive: Bool) throws(InvalidRegex) {
        self.wholeValue = wholeValue
        self.caseInsensitive = caseInsensitive
        if source.isEmpty {
            kind = .any
        } else if regex {
            let anchored = wholeValue ? "^(?:\(source))$" : source
            do {
                kind = .regex(try NSRegularExpression(pattern: anchored, options: caseInsensitive ? [.caseInsensitive] : []))
            } catch {
                throw InvalidRegex(pattern: source, reason: "\(error.localizedDescription)")
            }
        } else {
            kind = .plain(source)
        }
    }

    func matches(_ text: String) -> Bool {
        switch kind {
        case .any:
            return true
        case .plain(let needle):
            let options: String.CompareOptions = caseInsensitive ? [.caseInsensitive] : []
            if wholeValue { return text.compare(needle, options: options) == .orderedSame }
            return text.range(of: needle, options: options) != nil
        case .regex(let expression):
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
    }

    /// `text` with the first (or every) match replaced by `template`, in which a regex's `$1`
    /// names its groups; nil when nothing matched.
    func replacing(in text: String, with template: String, all: Bool) -> String? {
        switch kind {
        case .any:
            return template
        case .plain(let needle):
            let options: String.CompareOptions = caseInsensitive ? [.caseInsensitive] : []
            if wholeValue { return text.compare(needle, options: options) == .orderedSame ? template : nil }
            guard let first = text.range(of: needle, options: options) else { return nil }
            if all { return text.replacingOccurrences(of: needle, with: template, options: options) }
            return text.replacingCharacters(in: first, with: template)
        case .regex(let expression):
            let whole = NSRange(text.startIndex..., in: text)
            let matches = all ? expression.matches(in: text, range: whole) : expression.firstMatch(in: text, range: whole).map { [$0] } ?? []
            guard !matches.isEmpty else { return nil }
            let result = NSMutableString(string: text)
            var offset = 0
            for match in matches {
                let replacement = expression.replacementString(for: match, in: text, offset: 0, template: template)
                let range = NSRange(location: match.range.location + offset, length: match.range.length)
                result.replaceCharacters(in: range, with: replacement)
                offset += (replacement as NSString).length - match.range.length
            }
            return result as String
        }
    }
}
