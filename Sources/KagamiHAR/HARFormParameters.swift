import Foundation
import KagamiFlow
import KagamiJSON

/// The parameters of a query string or a form body, as HAR's `queryString` and
/// `postData.params` list them.
enum HARFormParameters {
    /// `a=1&b=x%20y` as name/value pairs, percent-decoded, `+` read as a space.
    static func urlEncoded(_ text: String?) -> [JSONValue] {
        guard let text, !text.isEmpty else { return [] }
        return FormFields.urlEncoded(text).map { ["name": .string($0.name), "value": .string($0.text ?? "")] }
    }

    /// The parts of a multipart/form-data body: name, and fileName, contentType and value when
    /// the part carries them (value only when it is text).
    static func multipart(_ body: Data, contentType: String) -> [JSONValue]? {
        FormFields.multipart(body, contentType: contentType)?.map { field in
            var param: JSONObject = ["name": .string(field.name)]
            if let fileName = field.fileName { param["fileName"] = .string(fileName) }
            if let contentType = field.contentType { param["contentType"] = .string(contentType) }
            if let text = field.text { param["value"] = .string(text) }
            return .object(param)
        }
    }

    /// Form parameters written back as a body, for archives that list params without text.
    static func urlEncodedBody(_ params: [(name: String, value: String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s }
        return params.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }
}
