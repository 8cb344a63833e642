import KagamiFlow
import Foundation

/// The Markdown that API descriptions write in their prose, rendered for the docs page as
/// Apiary does: headings, paragraphs, lists, block quotes, code blocks, and inline code,
/// emphasis and links. Everything else is text: HTML in a description is shown, never run, and
/// links only go to http(s), mailto or places on the page.
enum Markdown {
    static func html(_ text: String) -> String {
        var out = ""
        var lines = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n")[...]
        while let line = lines.first {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                lines.removeFirst()
            } else if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                out += fencedCode(&lines)
            } else if let heading = heading(trimmed) {
                lines.removeFirst()
                out += heading
            } else if line.hasPrefix("    ") || line.hasPrefix("\t") {
                out += indentedCode(&lines)
            } else if trimmed.hasPrefix(">") {
                out += quote(&lines)
            } else if listMarker(line) != nil {
                out += list(&lines)
            } else {
                out += paragraph(&lines)
            }
        }
        return out
    }

    // MARK: Blocks

    /// `#` to `######`; shown two levels down, under the page's own headings.
    private static func heading(_ line: String) -> String? {
        let hashes = line.prefix { $0 == "#" }.count
        guard (1...6).contains(hashes) else { return nil }
        let rest = line.dropFirst(hashes)
        guard rest.isEmpty || rest.first == " " else { return nil }
        let title = rest.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "#")).trimmingCharacters(in: .whitespaces)
        let level = min(hashes + 2, 6)
        return "<h\(level) class=\"md\">\(inline(title))</h\(level)>"
    }

    private static func fencedCode(_ lines: inout ArraySlice<String>) -> String {
        let fence = String(lines.removeFirst().trimmingCharacters(in: .whitespaces).prefix(3))
        var code: [String] = []
        while let line = lines.first {
            lines.removeFirst()
            if line.trimmingCharacters(in: .whitespaces).hasPrefix(fence) { break }
            code.append(line)
        }
        return "<pre class=\"md-code\"><code>\(MarkupText.escaped(code.joined(separator: "\n")))</code></pre>"
    }

    private static func indentedCode(_ lines: inout ArraySlice<String>) -> String {
        var code: [String] = []
        while let line = lines.first, line.hasPrefix("    ") || line.hasPrefix("\t") || line.trimmingCharacters(in: .whitespaces).isEmpty {
            lines.removeFirst()
            code.append(line.hasPrefix("\t") ? String(line.dropFirst()) : String(line.dropFirst(min(4, line.count))))
        }
        while code.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { code.removeLast() }
        return "<pre class=\"md-code\"><code>\(MarkupText.escaped(code.joined(separator: "\n")))</code></pre>"
    }

    private static func quote(_ lines: inout ArraySlice<String>) -> String {
        var inner: [String] = []
        while let line = lines.first {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix(">") else { break }
            lines.removeFirst()
            inner.append(String(trimmed.dropFirst().drop { $0 == " " }))
        }
        return "<blockquote>\(html(inner.joined(separator: "\n")))</blockquote>"
    }

    /// The marker of a list item: `-`, `*`, `+` or `1.` followed by a space.
    private static func listMarker(_ line: String) -> (ordered: Bool, content: Substring)? {
        let trimmed = line.drop { $0 == " " }
        guard line.count - trimmed.count < 4 else { return nil }
        if let first = trimmed.first, "-*+".contains(first), trimmed.dropFirst().first == " " {
            return (false, trimmed.dropFirst(2))
        }
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        if !digits.isEmpty, digits.count <= 9 {
            let rest = trimmed.dropFirst(digits.count)
            if rest.first == "." || rest.first == ")", rest.dropFirst().first == " " {
                return (true, rest.dropFirst(2))
            }
        }
        return nil
    }

    private static func list(_ lines: inout ArraySlice<String>) -> String {
        guard let first = lines.first, let (ordered, _) = listMarker(first) else { return "" }
        var items: [String] = []
        while let line = lines.first {
            if let marker = listMarker(line), marker.ordered == ordered {
                lines.removeFirst()
                items.append(String(marker.content))
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty, line.hasPrefix(" "), !items.isEmpty {
                // A continuation line of the item above.
                lines.removeFirst()
                items[items.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
            } else {
                break
            }
        }
        let tag = ordered ? "ol" : "ul"
        return "<\(tag)>" + items.map { "<li>\(inline($0))</li>" }.joined() + "</\(tag)>"
    }

    private static func paragraph(_ lines: inout ArraySlice<String>) -> String {
        var text: [String] = []
        while let line = lines.first {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") || trimmed.hasPrefix(">")
                || heading(trimmed) != nil || (listMarker(line) != nil && !text.isEmpty) {
                break
            }
            lines.removeFirst()
            text.append(trimmed)
        }
        return "<p>\(inline(text.joined(separator: "\n")))</p>"
    }

    // MARK: Inline

    /// Code spans, links, autolinks, `**strong**` and `*em*`/`_em_`; the rest escaped.
    static func inline(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let character = rest.first {
            if character == "`", let end = rest.dropFirst().firstIndex(of: "`") {
                out += "<code>\(MarkupText.escaped(String(rest[rest.index(after: rest.startIndex)..<end])))</code>"
                rest = rest[rest.index(after: end)...]
            } else if character == "[", let link = link(rest) {
                out += link.html
                rest = link.rest
            } else if character == "<", let close = rest.firstIndex(of: ">"),
                      case let target = String(rest[rest.index(after: rest.startIndex)..<close]), isSafeURL(target), target.contains(":") {
                out += "<a href=\"\(MarkupText.escaped(target))\">\(MarkupText.escaped(target))</a>"
                rest = rest[rest.index(after: close)...]
            } else if rest.hasPrefix("**") || rest.hasPrefix("__"), let span = delimited(rest, by: String(rest.prefix(2))) {
                out += "<strong>\(inline(span.inner))</strong>"
                rest = span.rest
            } else if character == "*" || character == "_", let span = delimited(rest, by: String(character)) {
                out += "<em>\(inline(span.inner))</em>"
                rest = span.rest
            } else if character == "\\", let next = rest.dropFirst().first, "\\`*_[]()#+-.!<>".contains(next) {
                out += MarkupText.escaped(String(next))
                rest = rest.dropFirst(2)
            } else {
                out += MarkupText.escaped(String(character))
                rest = rest.dropFirst()
            }
        }
        return out
    }

    /// `[text](url)`, when the URL is one a page may link to.
    private static func link(_ text: Substring) -> (html: String, rest: Substring)? {
        var depth = 0
        var closing: Substring.Index?
        for index in text.indices {
            if text[index] == "[" { depth += 1 }
            if text[index] == "]" { depth -= 1; if depth == 0 { closing = index; break } }
        }
        guard let closing, text[text.index(after: closing)...].first == "(" else { return nil }
        let urlStart = text.index(closing, offsetBy: 2)
        guard urlStart <= text.endIndex, let urlEnd = text[urlStart...].firstIndex(of: ")") else { return nil }
        let label = String(text[text.index(after: text.startIndex)..<closing])
        let target = text[urlStart..<urlEnd].split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        let rest = text[text.index(after: urlEnd)...]
        guard isSafeURL(target) else { return ("\(MarkupText.escaped(label))", rest) }
        return ("<a href=\"\(MarkupText.escaped(target))\">\(inline(label))</a>", rest)
    }

    private static func delimited(_ text: Substring, by marker: String) -> (inner: String, rest: Substring)? {
        let body = text.dropFirst(marker.count)
        guard let first = body.first, first != " ", let range = body.range(of: marker), range.lowerBound > body.startIndex,
              body[body.index(before: range.lowerBound)] != " " else { return nil }
        // `snake_case_words` are not emphasis.
        if marker == "_", let after = body[range.upperBound...].first, after.isLetter || after.isNumber { return nil }
        return (String(body[..<range.lowerBound]), body[range.upperBound...])
    }

    private static func isSafeURL(_ target: String) -> Bool {
        let lower = target.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("mailto:") { return true }
        // Relative references and anchors: no scheme before the first / ? or #.
        let beforePath = lower.prefix { !"/?#".contains($0) }
        return !target.isEmpty && !beforePath.contains(":")
    }

}
