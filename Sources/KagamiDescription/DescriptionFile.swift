// Reads a description file of either format into the contract model.
import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiOpenAPI

/// A description (API Blueprint or OpenAPI) and the contract read from it.
public struct DescriptionFile: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case apiBlueprint = "api-blueprint"
        case openAPI = "openapi"
    }

    public enum ReadError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): cannot read the file: \(reason)"
            }
        }
    }

    /// The file the description came from, or a label such as `<string>` for text given directly.
    public let path: String
    public let text: String
    public let format: Format
    public let contract: APIContract

    public init(path: String) throws(ReadError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: error.localizedDescription)
        }
        self.init(text: String(decoding: data, as: UTF8.self), path: path)
    }

    /// Text given directly; the format is detected from `path`'s extension and the text when nil.
    public init(text: String, format: Format? = nil, path: String = "<string>") {
        self.path = path
        self.text = text
        let format = format ?? (Self.isOpenAPI(path: path, text: text) ? .openAPI : .apiBlueprint)
        self.format = format
        contract = format == .openAPI ? OpenAPIReader.parse(text) : BlueprintParser.parse(text)
    }

    /// By extension (`.json`, `.yaml`, `.yml`), else by an `openapi` field near the top.
    public static func isOpenAPI(path: String, text: String) -> Bool {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".apib") || lowered.hasSuffix(".md") { return false }
        if lowered.hasSuffix(".json") || lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml") { return true }
        let head = text.prefix(4096)
        return head.contains("openapi:") || head.contains("\"openapi\"")
    }

    /// `file:line:col: severity: message`, the form editors and CI logs understand.
    public func diagnostics(onlyErrors: Bool = false) -> [String] {
        contract.annotations.filter { !onlyErrors || $0.severity == .error }.map { annotation in
            let line = annotation.sourceLocation?.line ?? 1
            let column = annotation.sourceLocation?.column ?? 1
            return "\(path):\(line):\(column): \(annotation.severity.rawValue): \(annotation.message)"
        }
    }
}
