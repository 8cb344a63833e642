// Values that differ from one run of an app to the next by nature: ids, times, tokens. A value
// that changes between calls within one capture is volatile too, but that needs no guessing
// (`ScalarTally.varies`); these rules cover a value each capture saw only once.
import Foundation
import KagamiInfer

enum Volatility {
    /// Whether a value looks like an id, a time or a token rather than a setting.
    static func looksVolatile(_ value: String, kind: ScalarTally.Kind) -> Bool {
        switch kind {
        case .literal:
            return false
        case .number:
            // Seconds or milliseconds since 1970, and ids, are this large; settings rarely are.
            guard let number = Double(value) else { return false }
            return abs(number) >= 1e9
        case .string, .text:
            return looksVolatile(text: value)
        }
    }

    private static func looksVolatile(text: String) -> Bool {
        if text.isEmpty { return false }
        // An id, a UUID, a hash, a date, an email: what a path segment would be a variable for.
        // Short numbers are settings (`limit=20`, `max-age=60`) as often as ids, and ids vary
        // within a capture anyway.
        let shape = PathSegmentShape.of(text)
        if shape.isValue, !(shape == .integer && text.count <= 3) { return true }
        if StringFormat.dateTime.matches(text) { return true }
        let scalars = text.unicodeScalars
        // A long run of digits (a time, a count of seconds, an order number in a sentence).
        var run = 0
        var longestRun = 0
        for scalar in scalars {
            if scalar.value >= 48 && scalar.value <= 57 {
                run += 1
                longestRun = max(longestRun, run)
            } else {
                run = 0
            }
        }
        if longestRun >= 4 { return true }
        // `10:15:30` in an HTTP date or a log line.
        if text.contains(where: { $0 == ":" }), longestRun >= 2, text.range(of: #"\d\d:\d\d"#, options: .regularExpression) != nil {
            return true
        }
        // Tokens: long text without spaces (JWTs, base64, signed URLs).
        if scalars.count >= 32, !text.contains(" ") { return true }
        // A URL whose path or query carries an id.
        if StringFormat.uri.matches(text) {
            return text.split(whereSeparator: { "/?&=#".contains($0) }).contains { PathSegmentShape.of($0).isValue }
        }
        return false
    }

    /// Whether a member, parameter or header name says its value is an id, a time or a secret
    /// (`id`, `userId`, `user_id`, `createdAt`, `updated_at`, `timestamp`, `token`, `etag`…).
    static func isVolatileName(_ name: String) -> Bool {
        if name.isEmpty || name == "*" { return false }
        if Redaction.isSecret(name) { return true }
        let lowered = name.lowercased()
        let bare = String(lowered.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
        let exact: Set<String> = [
            "id", "ids", "uuid", "guid", "nonce", "etag", "created", "updated", "modified", "deleted", "expires",
            "expiry", "timestamp", "time", "date", "ts", "now", "cursor", "seed", "random", "salt", "hash", "checksum",
            "digest", "rev", "revision", "seq", "sequence",
            // A build's own version differs between two builds by definition.
            "version", "build",
        ]
        if exact.contains(bare) { return true }
        let words = [
            "uuid", "guid", "nonce", "etag", "timestamp", "requestid", "traceid", "spanid", "correlation", "traceparent", "tracestate",
            "cursor", "csrf", "xsrf", "expires", "expiry",
            // The app's own version and build (`X-App-Version`, `User-Agent: Example/2.1`).
            "appversion", "appbuild", "clientversion", "buildnumber", "useragent",
        ]
        if words.contains(where: { bare.contains($0) }) { return true }
        // `userId`, `user_id`, `user-id`, `userID`; `createdAt`, `created_at`; `startTime`, `end_date`.
        for suffix in ["Id", "ID", "Ids", "IDs", "At", "Time", "Date", "Timestamp", "Ts"] where name.hasSuffix(suffix) && name.count > suffix.count {
            let before = name[name.index(name.endIndex, offsetBy: -suffix.count - 1)]
            if before.isLowercase || before.isNumber { return true }
        }
        for suffix in ["_id", "-id", "_ids", "_at", "-at", "_time", "-time", "_date", "-date", "_ts", "_on"] where lowered.hasSuffix(suffix) {
            return true
        }
        return false
    }
}
