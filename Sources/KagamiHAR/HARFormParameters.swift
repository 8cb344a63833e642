import Foundation
import KagamiFlow
import KagamiJSON

/// The parameters of a query string or a form body, as HAR's `queryString` and
/// `postData.params` list them.
enum HARFormParameters {
    /// `a=1&b=x%20y` as name/value pairs, percent-decoded, `+` read as a space.
    static func urlEncoded(_ text: String?) -> [JSONValue] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decode = { (s: String) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? s }
            return ["name": .string(decode(parts[0])), "value": .string(parts.count > 1 ? decode(parts[1]) : "")]
        }
    }

    /// The parts of a multipart/form-data body: name, and fileName, contentType and value when
    /// the part carries them (value only when it is text).
    static func multipart(_ body: Data, contentType: String) -> [JSONValue]? {
        guard let boundary = parameter("boundary", of: contentType), !boundary.isEmpty else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        var params: [JSONValue] = []
        var position = body.startIndex
        guard let first = body.range(of: delimiter, in: position..<body.endIndex) else { return nil }
        position = first.upperBound
        while let next = body.range(of: delimiter, in: position..<body.endIndex) {
            var part = body[position..<next.lowerBound]
            position = next.upperBound
            if part.starts(with: Data("\r\n".utf8)) { part = part.dropFirst(2) }
            if part.count >= 2, part.suffix(2) == Data("\r\n".utf8) { part = part.dropLast(2) }
            guard let headerEnd = part.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let head = String(decoding: part[part.startIndex..<headerEnd.lowerBound], as: UTF8.self)
            let content = part[headerEnd.upperBound...]
            var param: JSONObject = [:]
            for line in head.components(separatedBy: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "content-disposition":
                    if let name = parameter("name", of: pair[1]) { param["name"] = .string(name) }
                    if let file = parameter("filename", of: pair[1]) { param["fileName"] = .string(file) }
                case "content-type":
                    param["contentType"] = .string(pair[1])
                default: break
                }
            }
            guard param["name"] != nil else { continue }
            if let text = String(data: Data(content), encoding: .utf8) { param["value"] = .string(text) }
            params.append(.object(param))
        }
        return params
    }

    /// `name=value` or `name="value"` from a header value's `;`-separated parameters.
    static func parameter(_ name: String, of headerValue: String) -> String? {
        for piece in headerValue.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var value = pair[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return value
        }
        return nil
    }

    /// Form parameters written back as a body, for archives that list params without text.
    static func urlEncodedBody(_ params: [(name: String, value: String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s }
        return params.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }
}
