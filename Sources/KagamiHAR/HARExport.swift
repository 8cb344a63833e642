import Foundation
import KagamiFlow
import KagamiJSON

/// Writes flows as an HTTP Archive (HAR 1.2), the format browsers and Charles exchange.
public enum HARExport {
    public static func archive(_ flows: [Flow], creatorVersion: String) -> JSONValue {
        let entries = flows.filter { $0.mode != .tunnel }.map(entry)
        return ["log": [
            "version": "1.2",
            "creator": ["name": "Kagami", "version": .string(creatorVersion)],
            "pages": [],
            "entries": .array(entries),
        ]]
    }

    static func entry(_ flow: Flow) -> JSONValue {
        let timings = flow.timings
        func ms(_ from: Date?, _ to: Date?) -> JSONValue {
            guard let from, let to else { return -1 }
            return .number(max(0, (to.timeIntervalSince(from) * 1000 * 1000).rounded() / 1000))
        }
        var entry: JSONObject = [
            "startedDateTime": .string(isoDate(timings.start)),
            "time": .number(max(0, ((flow.duration ?? 0) * 1000 * 1000).rounded() / 1000)),
            "request": request(flow.request),
            "response": response(flow.response),
            "cache": [:],
            "timings": [
                "blocked": -1,
                "dns": -1,
                "connect": ms(timings.start, timings.connected),
                "ssl": -1,
                "send": ms(timings.connected ?? timings.start, timings.requestSent),
                "wait": ms(timings.requestSent, timings.firstByte),
                "receive": ms(timings.firstByte, timings.end),
            ],
        ]
        if let server = flow.serverAddress {
            entry["serverIPAddress"] = .string(hostPart(server))
            entry["connection"] = .string(server)
        }
        if let error = flow.error {
            entry["_error"] = .string(error.message)
        }
        return .object(entry)
    }

    static func request(_ request: FlowRequest) -> JSONValue {
        var object: JSONObject = [
            "method": .string(request.method),
            "url": .string(request.url),
            "httpVersion": .string(request.version),
            "cookies": .array(cookies(fromRequest: request.headers)),
            "headers": headers(request.headers),
            "queryString": .array(queryItems(request.query)),
            "headersSize": .integer(request.headers.wireSize + request.method.utf8.count + request.target.utf8.count + request.version.utf8.count + 6),
            "bodySize": .integer(request.body.size),
        ]
        if request.body.size > 0 {
            object["postData"] = [
                "mimeType": .string(request.headers["Content-Type"] ?? ""),
                "text": .string(String(decoding: request.body.data, as: UTF8.self)),
            ]
        }
        return .object(object)
    }

    static func response(_ response: FlowResponse?) -> JSONValue {
        guard let response else {
            return [
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": ["size": 0, "mimeType": ""], "redirectURL": "", "headersSize": -1, "bodySize": -1,
            ]
        }
        var content: JSONObject = [
            "size": .integer(response.body.size),
            "mimeType": .string(response.headers["Content-Type"] ?? ""),
        ]
        if !response.body.data.isEmpty {
            if let text = String(data: response.body.data, encoding: .utf8) {
                content["text"] = .string(text)
            } else {
                content["text"] = .string(response.body.data.base64EncodedString())
                content["encoding"] = "base64"
            }
        }
        return [
            "status": .integer(response.status),
            "statusText": .string(response.reason),
            "httpVersion": .string(response.version),
            "cookies": .array(response.headers.values(for: "Set-Cookie").compactMap(setCookie)),
            "headers": headers(response.headers),
            "content": .object(content),
            "redirectURL": .string(response.headers["Location"] ?? ""),
            "headersSize": .integer(response.headers.wireSize + response.version.utf8.count + response.reason.utf8.count + 9),
            "bodySize": .integer(response.body.size),
        ]
    }

    static func headers(_ fields: HeaderFields) -> JSONValue {
        .array(fields.map { ["name": .string($0.name), "value": .string($0.value)] })
    }

    static func cookies(fromRequest headers: HeaderFields) -> [JSONValue] {
        headers.values(for: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return nil }
            return ["name": .string(name), "value": .string(parts.count > 1 ? String(parts[1]) : "")]
        }
    }

    static func setCookie(_ header: String) -> JSONValue? {
        let attributes = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = attributes.first else { return nil }
        let parts = first.split(separator: "=", maxSplits: 1)
        guard let name = parts.first, !name.isEmpty else { return nil }
        var cookie: JSONObject = ["name": .string(String(name)), "value": .string(parts.count > 1 ? String(parts[1]) : "")]
        for attribute in attributes.dropFirst() {
            let kv = attribute.split(separator: "=", maxSplits: 1).map(String.init)
            switch kv[0].lowercased() {
            case "path": cookie["path"] = .string(kv.count > 1 ? kv[1] : "")
            case "domain": cookie["domain"] = .string(kv.count > 1 ? kv[1] : "")
            case "expires": cookie["expires"] = .string(kv.count > 1 ? kv[1] : "")
            case "httponly": cookie["httpOnly"] = true
            case "secure": cookie["secure"] = true
            default: break
            }
        }
        return .object(cookie)
    }

    static func queryItems(_ query: String?) -> [JSONValue] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            let decode = { (s: String) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? s }
            return ["name": .string(decode(parts[0])), "value": .string(parts.count > 1 ? decode(parts[1]) : "")]
        }
    }

    static func hostPart(_ address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        return address.split(separator: ":").first.map(String.init) ?? address
    }

    static func isoDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
