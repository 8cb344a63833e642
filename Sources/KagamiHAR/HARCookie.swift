import Foundation
import KagamiFlow
import KagamiJSON

/// Cookies as HAR lists them, read from the Cookie and Set-Cookie headers.
enum HARCookie {
    /// Each `name=value` pair of every Cookie header.
    static func requestCookies(_ headers: HeaderFields) -> [JSONValue] {
        headers.cookies.map { ["name": .string($0.name), "value": .string($0.value)] }
    }

    /// One cookie per Set-Cookie header, with the attributes HAR names (and sameSite, which
    /// browsers add).
    static func responseCookies(_ headers: HeaderFields) -> [JSONValue] {
        headers.values(for: "Set-Cookie").compactMap(setCookie)
    }

    static func setCookie(_ header: String) -> JSONValue? {
        let attributes = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = attributes.first else { return nil }
        let parts = first.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let name = parts[0].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        var cookie: JSONObject = ["name": .string(name), "value": .string(parts.count > 1 ? parts[1] : "")]
        for attribute in attributes.dropFirst() {
            let pair = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let value = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
            switch pair[0].trimmingCharacters(in: .whitespaces).lowercased() {
            case "path": cookie["path"] = .string(value)
            case "domain": cookie["domain"] = .string(value)
            // HAR wants ISO 8601; an Expires no parser reads is kept as written.
            case "expires": cookie["expires"] = .string(HARDate.parseHTTPDate(value).map(HARDate.format) ?? value)
            case "httponly": cookie["httpOnly"] = true
            case "secure": cookie["secure"] = true
            case "samesite": cookie["sameSite"] = .string(value)
            default: break
            }
        }
        return .object(cookie)
    }
}
