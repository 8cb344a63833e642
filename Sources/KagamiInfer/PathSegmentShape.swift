// What a path segment looks like: a value that names one thing (an id, a date, an email) or a
// word of the API's own vocabulary.
import Foundation

/// The shape of one path segment, as the generaliser sees it.
public enum PathSegmentShape: String, Sendable, Hashable, CaseIterable {
    case integer
    case uuid
    /// Lowercase or uppercase hexadecimal of 8 characters or more with a digit in it (`c1a2b3e4`, hashes).
    case hexIdentifier
    /// Letters and digits mixed, 6 characters or more, optionally with `-`/`_` (base64-ish tokens, `usr_9x2Kq`).
    case opaqueIdentifier
    case date
    case email
    /// Anything else: taken as part of the API's vocabulary unless its siblings say otherwise.
    case word

    /// True for shapes that are values, never vocabulary.
    public var isValue: Bool { self != .word }

    /// The schema `format` the shape implies, if any.
    public var format: String? {
        switch self {
        case .uuid: "uuid"
        case .date: "date"
        case .email: "email"
        default: nil
        }
    }

    /// Classifies a segment as it appears in the URL (percent-encoded or not).
    public static func of(_ rawSegment: some StringProtocol) -> PathSegmentShape {
        // Foundation's decoding is the dearest step here, and most segments have nothing to decode.
        let segment = rawSegment.utf8.contains(UInt8(ascii: "%")) ? String(rawSegment).removingPercentEncoding ?? String(rawSegment) : String(rawSegment)
        let scalars = Array(segment.unicodeScalars)
        guard !scalars.isEmpty else { return .word }
        if isVersionOrAPIWord(segment) { return .word }
        if scalars.count <= 19, scalars.allSatisfy(isDigit) { return .integer }
        // A signed integer counts only when it is short (`-1`), never a dash-led word.
        if scalars.count <= 19, scalars.first == "-", scalars.count > 1, scalars.dropFirst().allSatisfy(isDigit) { return .integer }
        if isUUID(scalars) { return .uuid }
        if isDate(scalars) { return .date }
        if isEmail(segment) { return .email }
        let digits = scalars.filter(isDigit).count
        let letters = scalars.filter(isLetter).count
        if scalars.count >= 8, digits > 0, scalars.allSatisfy(isHexDigit) {
            return .hexIdentifier
        }
        if scalars.count >= 6, digits > 0, letters > 0, !isWordWithNumber(scalars),
           scalars.allSatisfy({ isLetter($0) || isDigit($0) || $0 == "-" || $0 == "_" || $0 == "=" || $0 == "." }),
           !hasFileExtensionOnly(segment) {
            return .opaqueIdentifier
        }
        return .word
    }

    /// `api`, `v1`, `v2.1`, `2.0`, `rest`: segments that version or label an API; never parameters.
    public static func isVersionOrAPIWord(_ segment: String) -> Bool {
        let lowered = segment.lowercased()
        if ["api", "apis", "rest", "graphql", "rpc", "latest", "beta", "alpha", "stable", "public", "internal", "v"].contains(lowered) { return true }
        let scalars = Array(lowered.unicodeScalars)
        // v1, v2beta, v1.2, v10
        if scalars.count >= 2, scalars.count <= 8, scalars[0] == "v", isDigit(scalars[1]) {
            return scalars.dropFirst().allSatisfy { isDigit($0) || $0 == "." || isLetter($0) }
        }
        // 1.0, 2.0.1 (versions written bare)
        if scalars.contains("."), scalars.allSatisfy({ isDigit($0) || $0 == "." }), scalars.first.map(isDigit) == true {
            return true
        }
        return false
    }

    /// `oauth2`, `sha256`, `page2`: a word with a short number after it names a thing, not an instance.
    private static func isWordWithNumber(_ s: [Unicode.Scalar]) -> Bool {
        let trailingDigits = s.reversed().prefix(while: isDigit).count
        return trailingDigits <= 3 && s.dropLast(trailingDigits).allSatisfy(isLetter)
    }

    /// `logo.png`, `index.html`: a name with an extension is a file, not an id.
    private static func hasFileExtensionOnly(_ segment: String) -> Bool {
        guard let dot = segment.lastIndex(of: ".") else { return false }
        let stem = segment[..<dot]
        let ext = segment[segment.index(after: dot)...]
        return !ext.isEmpty && ext.count <= 5 && ext.unicodeScalars.allSatisfy(isLetter) && !stem.unicodeScalars.contains(where: isDigit)
    }

    static func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 48 && s.value <= 57 }
    static func isLetter(_ s: Unicode.Scalar) -> Bool { (s.value >= 65 && s.value <= 90) || (s.value >= 97 && s.value <= 122) }
    static func isHexDigit(_ s: Unicode.Scalar) -> Bool {
        isDigit(s) || (s.value >= 97 && s.value <= 102) || (s.value >= 65 && s.value <= 70)
    }

    static func isUUID(_ s: [Unicode.Scalar]) -> Bool {
        guard s.count == 36 else { return false }
        for (index, scalar) in s.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard scalar == "-" else { return false }
            } else if !isHexDigit(scalar) {
                return false
            }
        }
        return true
    }

    /// `2026-11-24`, with month and day in range.
    static func isDate(_ s: [Unicode.Scalar]) -> Bool {
        guard s.count == 10, s[4] == "-", s[7] == "-" else { return false }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9]
        guard digits.allSatisfy({ isDigit(s[$0]) }) else { return false }
        let month = Int(s[5].value - 48) * 10 + Int(s[6].value - 48)
        let day = Int(s[8].value - 48) * 10 + Int(s[9].value - 48)
        return (1...12).contains(month) && (1...31).contains(day)
    }

    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix(".") else { return false }
        return !text.contains(" ")
    }
}
