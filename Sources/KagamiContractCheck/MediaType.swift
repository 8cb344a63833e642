// Media types as HTTP writes them: compared without parameters and case, negotiated by Accept.
import Foundation

public enum MediaType {
    /// `Application/JSON; charset=utf-8` → `application/json`. The contract check asks this of
    /// every exchange, so ASCII (every media type a server sends) is read byte by byte, and a
    /// type already in its essence comes back as it is.
    public static func essence(_ value: String) -> String {
        let utf8 = value.utf8
        var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
        var unchanged = end == utf8.endIndex
        for byte in utf8[..<end] {
            if byte >= 0x80 { return unicodeEssence(value) }
            if isUppercase(byte) || isBlank(byte) { unchanged = false }
        }
        if unchanged { return value }
        var start = utf8.startIndex
        while start < end, isBlank(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isBlank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return String(decoding: utf8[start..<end].map { isUppercase($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    private static func isUppercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// Text beyond ASCII: Unicode's blanks and case.
    private static func unicodeEssence(_ value: String) -> String {
        (value.split(separator: ";").first.map(String.init) ?? value).trimmingCharacters(in: .whitespaces).lowercased()
    }

    public static func isJSON(_ value: String) -> Bool {
        let type = essence(value)
        return type.hasSuffix("/json") || type.hasSuffix("+json")
    }

    /// Whether a sent media type is one a documented type stands for: equal essences, or a
    /// documented range (`*/*`, `text/*`).
    public static func matches(_ sent: String, documented: String) -> Bool {
        let sent = essence(sent)
        let documented = essence(documented)
        if documented == sent || documented == "*/*" { return true }
        return documented.hasSuffix("/*") && sent.hasPrefix(documented.dropLast())
    }

    /// How much an `Accept` header wants `type`: its q value for the most specific matching range, 0 when refused.
    public static func quality(of type: String, accept: String) -> Double {
        let type = essence(type)
        var best: (specificity: Int, q: Double) = (-1, 0)
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let rangeType = parts.first?.lowercased(), !rangeType.isEmpty else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 1
            }
            let specificity: Int
            if rangeType == type {
                specificity = 2
            } else if rangeType.hasSuffix("/*"), type.hasPrefix(rangeType.dropLast()) {
                specificity = 1
            } else if rangeType == "*/*" {
                specificity = 0
            } else {
                continue
            }
            if specificity > best.specificity { best = (specificity, q) }
        }
        return best.q
    }
}
