// The fields of an HTML form body (application/x-www-form-urlencoded, multipart/form-data) and
// the cookies of a request: read once here for HAR's `params`/`cookies` and for the contract
// check and mock, which validate them against the description.
import Foundation

/// One field of a form body.
public struct FormField: Sendable, Hashable {
    public var name: String
    /// The field's bytes (a file part's content as sent).
    public var value: Data
    /// A multipart part's `filename`.
    public var fileName: String?
    /// A multipart part's own Content-Type.
    public var contentType: String?

    public init(name: String, value: Data, fileName: String? = nil, contentType: String? = nil) {
        self.name = name
        self.value = value
        self.fileName = fileName
        self.contentType = contentType
    }

    /// The value as UTF-8 text, or nil when it is not.
    public var text: String? { String(data: value, encoding: .utf8) }
}

public enum FormFields {
    /// `a=1&b=x%20y` as fields, percent-decoded, `+` read as a space (the URL Standard's
    /// application/x-www-form-urlencoded parser).
    public static func urlEncoded(_ text: String) -> [FormField] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decode = { (s: String) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? s }
            return FormField(name: decode(parts[0]), value: Data((parts.count > 1 ? decode(parts[1]) : "").utf8))
        }
    }

    /// The parts of a multipart/form-data body (RFC 7578), or nil when the Content-Type names
    /// no boundary or the body has none.
    public static func multipart(_ body: Data, contentType: String) -> [FormField]? {
        guard let boundary = parameter("boundary", of: contentType), !boundary.isEmpty else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        var fields: [FormField] = []
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
            var name: String?
            var fileName: String?
            var partType: String?
            for line in head.components(separatedBy: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "content-disposition":
                    name = parameter("name", of: pair[1])
                    fileName = parameter("filename", of: pair[1])
                case "content-type":
                    partType = pair[1]
                default: break
                }
            }
            guard let name else { continue }
            fields.append(FormField(name: name, value: Data(part[headerEnd.upperBound...]), fileName: fileName, contentType: partType))
        }
        return fields
    }

    /// `name=value` or `name="value"` from a header value's `;`-separated parameters.
    public static func parameter(_ name: String, of headerValue: String) -> String? {
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
}

extension HeaderFields {
    /// Each `name=value` pair of every Cookie header (RFC 6265 section 5.4), in order.
    public var cookies: [(name: String, value: String)] {
        values(for: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }
}
