// How each Rewrite type changes a request or a response, with its patterns compiled once.
import Foundation
import KagamiContentCoding
import KagamiFlow

struct CompiledRewriteRule: Sendable {
    let rule: RewriteRule
    let name: TextPattern
    let value: TextPattern

    init(_ rule: RewriteRule) throws(TextPattern.InvalidRegex) {
        self.rule = rule
        // Names always compare as a whole and ignoring case, as HTTP header names do.
        name = try TextPattern(rule.match.name, regex: rule.match.regex, wholeValue: true, caseInsensitive: true)
        value = try TextPattern(rule.match.value, regex: rule.match.regex, wholeValue: rule.match.wholeValue, caseInsensitive: false)
    }

    var needsBody: Bool { rule.type == .body }

    /// Changes `request`; returns what changed, in words, or nil when the rule didn't apply.
    func apply(to request: inout FlowRequest) -> String? {
        guard rule.isEnabled, rule.target.includesRequest else { return nil }
        switch rule.type {
        case .addHeader, .modifyHeader, .removeHeader:
            return rewriteHeaders(&request.headers, side: "request")
        case .body:
            return rewriteBody(&request.body, headers: &request.headers)
        case .host:
            guard let host = value.replacing(in: request.host, with: rule.replace.value, all: rule.replaceAll),
                  host != request.host else { return nil }
            request.host = host
            request.headers.set("Host", request.authority)
            return "changed host to \(host)"
        case .path:
            let path = request.path
            guard let newPath = value.replacing(in: path, with: rule.replace.value, all: rule.replaceAll),
                  newPath != path else { return nil }
            request.target = request.query.map { "\(newPath)?\($0)" } ?? newPath
            return "changed path to \(newPath)"
        case .url:
            let url = request.url
            guard let newURL = value.replacing(in: url, with: rule.replace.value, all: rule.replaceAll),
                  newURL != url, let parts = try? AbsoluteURL(parsing: newURL),
                  parts.scheme == "http" || parts.scheme == "https" else { return nil }
            request.scheme = parts.scheme
            request.host = parts.host
            request.port = parts.port
            request.target = parts.target
            request.headers.set("Host", request.authority)
            return "changed URL to \(newURL)"
        case .addQueryParam, .modifyQueryParam, .removeQueryParam:
            return rewriteQuery(&request)
        case .responseStatus:
            return nil
        }
    }

    func apply(to response: inout FlowResponse) -> String? {
        guard rule.isEnabled, rule.target.includesResponse else { return nil }
        switch rule.type {
        case .addHeader, .modifyHeader, .removeHeader:
            return rewriteHeaders(&response.headers, side: "response")
        case .body:
            return rewriteBody(&response.body, headers: &response.headers)
        case .responseStatus:
            let status = String(response.status)
            guard let replaced = value.replacing(in: status, with: rule.replace.value, all: false) else { return nil }
            // "404" or "404 Not Found": a bare code takes the standard reason.
            let parts = replaced.split(separator: " ", maxSplits: 1)
            guard let code = parts.first.flatMap({ Int($0) }), (100...999).contains(code) else { return nil }
            response.status = code
            response.reason = parts.count > 1 ? String(parts[1]) : HTTPStatusPhrase.phrase(for: code) ?? ""
            return "changed status to \(code)"
        default:
            return nil
        }
    }

    /// `side` (request or response) is named in the description: a rule acting on both says which change was which.
    private func rewriteHeaders(_ headers: inout HeaderFields, side: String) -> String? {
        switch rule.type {
        case .addHeader:
            headers.add(rule.replace.name, rule.replace.value)
            return "added \(side) header \(rule.replace.name)"
        case .removeHeader:
            let removed = headers.fields.filter { name.matches($0.name) && value.matches($0.value) }.map(\.name)
            guard !removed.isEmpty else { return nil }
            headers.fields.removeAll { name.matches($0.name) && value.matches($0.value) }
            return "removed \(side) header \(Self.list(removed))"
        default:
            var changed: [String] = []
            for index in headers.fields.indices {
                let field = headers.fields[index]
                guard name.matches(field.name), value.matches(field.value) else { continue }
                let newName = replacedName(field.name)
                let newValue = rule.replace.value.isEmpty
                    ? field.value
                    : value.replacing(in: field.value, with: rule.replace.value, all: rule.replaceAll) ?? field.value
                guard newName != field.name || newValue != field.value else { continue }
                headers.fields[index] = HeaderFields.Field(name: newName, value: newValue)
                changed.append(newName)
            }
            return changed.isEmpty ? nil : "modified \(side) header \(Self.list(changed))"
        }
    }

    private func replacedName(_ original: String) -> String {
        guard !rule.replace.name.isEmpty else { return original }
        return name.replacing(in: original, with: rule.replace.name, all: false) ?? rule.replace.name
    }

    /// A Body rule's change to text (a body, a WebSocket message); nil when it changes nothing.
    func rewriteText(_ text: String) -> String? {
        guard let replaced = value.replacing(in: text, with: rule.replace.value, all: rule.replaceAll), replaced != text else { return nil }
        return replaced
    }

    /// Rewrites the body as text; a gzip or deflate body is decoded, rewritten and encoded again
    /// in its coding. A body that can't be rewritten says why, so the user isn't left guessing.
    private func rewriteBody(_ body: inout FlowBody, headers: inout HeaderFields) -> String? {
        if body.isTruncated { return "did not rewrite the body: only its first \(body.keptCount) bytes were kept" }
        let coding = headers["Content-Encoding"]
        let encoded = ContentCoding.isEncoded(coding)
        let plain: Data
        do {
            plain = encoded ? try ContentCoding.decode(body.data, contentEncoding: coding) : body.data
        } catch {
            return "did not rewrite the body: it is \(coding ?? "") encoded and could not be decoded (\(error))"
        }
        guard let text = String(data: plain, encoding: .utf8), let replaced = rewriteText(text) else { return nil }
        var data = Data(replaced.utf8)
        if encoded {
            do {
                data = try ContentCoding.encode(data, contentEncoding: coding)
            } catch {
                return "did not rewrite the body: it could not be \(coding ?? "") encoded again (\(error))"
            }
        }
        body = FlowBody(data: data)
        if headers.contains("Content-Length") { headers.set("Content-Length", String(body.size)) }
        let via = encoded ? " (\(coding ?? "") decoded and encoded again)" : ""
        return "rewrote body (\(text.utf8.count) → \(replaced.utf8.count) bytes\(via))"
    }

    private func rewriteQuery(_ request: inout FlowRequest) -> String? {
        var items = QueryItems(request.query)
        let description: String
        switch rule.type {
        case .addQueryParam:
            items.pairs.append((rule.replace.name, rule.replace.value))
            description = "added query parameter \(rule.replace.name)"
        case .removeQueryParam:
            let before = items.pairs.count
            items.pairs.removeAll { name.matches($0.name) && value.matches($0.value ?? "") }
            guard items.pairs.count != before else { return nil }
            description = "removed query parameter \(rule.match.name.isEmpty ? rule.match.value : rule.match.name)"
        default:
            var changed: [String] = []
            for index in items.pairs.indices {
                let (itemName, itemValue) = items.pairs[index]
                guard name.matches(itemName), value.matches(itemValue ?? "") else { continue }
                let newName = replacedName(itemName)
                let newValue = rule.replace.value.isEmpty
                    ? itemValue
                    : value.replacing(in: itemValue ?? "", with: rule.replace.value, all: rule.replaceAll) ?? itemValue
                guard newName != itemName || newValue != itemValue else { continue }
                items.pairs[index] = (newName, newValue)
                changed.append(newName)
            }
            guard !changed.isEmpty else { return nil }
            description = "modified query parameter \(Self.list(changed))"
        }
        let path = request.path
        request.target = items.pairs.isEmpty ? path : "\(path)?\(items.encoded)"
        return description
    }

    private static func list(_ names: [String]) -> String {
        var seen = Set<String>()
        return names.filter { seen.insert($0.lowercased()).inserted }.joined(separator: ", ")
    }
}

/// A query string as ordered name/value pairs, kept as written (no decoding), so untouched
/// parameters go out byte for byte.
struct QueryItems {
    var pairs: [(name: String, value: String?)]

    init(_ query: String?) {
        guard let query, !query.isEmpty else {
            pairs = []
            return
        }
        pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
        }
    }

    var encoded: String {
        pairs.map { pair in pair.value.map { "\(pair.name)=\($0)" } ?? pair.name }.joined(separator: "&")
    }
}
