/// Text made safe inside HTML and XML, in element content and in quoted attributes alike: the
/// one escaping for the mock's docs page, `kagami serve`'s session list and JUnit reports.
public enum MarkupText {
    /// `& < > " '` as references; control characters XML 1.0 forbids (everything below U+0020
    /// but tab, line feed and carriage return, and U+FFFE, U+FFFF) become U+FFFD.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
