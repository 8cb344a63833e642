// Media types as HTTP writes them: compared without parameters and case, negotiated by Accept.
import Foundation

public enum MediaType {
    /// `Application/JSON; charset=utf-8` → `application/json`.
    public static func essence(_ value: String) -> String {
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
